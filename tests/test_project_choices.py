"""Models chosen at run time and compiled models handed across files (issue
10 items 2 and 7): the same findings whether gnnlint runs on the whole tree,
on one file (the project's facts from the project root) or on stdin."""
from __future__ import annotations

import pytest

from tests.project_files import assert_one_file_agrees, whole_tree_lines, write_project

PROJECT = {
    "pyproject.toml": "[project]\nname = 'demo'\n\n[tool.gnnlint]\n",
    # a script folder: main_performance.py imports its siblings by bare name
    "benchmark/kernel/__init__.py": "",
    "benchmark/kernel/gcn.py": """\
        import torch
        from torch_geometric.nn import global_mean_pool


        class GCN(torch.nn.Module):
            def forward(self, x, batch):
                return global_mean_pool(x, batch)
    """,
    "benchmark/kernel/gin.py": """\
        import torch
        from torch_geometric.nn import global_add_pool


        class GIN(torch.nn.Module):
            def forward(self, x, batch):
                return global_add_pool(x, batch)


        class NeverCompiled(torch.nn.Module):
            def forward(self, x, batch):
                return global_add_pool(x, batch)
    """,
    "benchmark/kernel/main_performance.py": """\
        import torch
        from gcn import GCN
        from gin import GIN

        MODELS = {"GCN": GCN, "GIN": GIN}


        def run(args):
            Model = MODELS[args.model]
            model = Model()
            if args.compile:
                model = torch.compile(model)
            return model
    """,
    # a compiled model handed to functions of another file (item 7)
    "benchmark/kernel/train_eval.py": """\
        def train(model, optimizer, loader):
            total = 0
            for data in loader:
                optimizer.zero_grad()
                loss = model(data).sum()
                loss.backward()
                optimizer.step()
                total += loss.item()
            return total


        def evaluate(model, loader):
            correct = 0
            for data in loader:
                correct += int((model(data).argmax(-1) == data.y).sum())
            return correct


        def never_handed(model, loader):
            correct = 0
            for data in loader:
                correct += int((model(data).argmax(-1) == data.y).sum())
            return correct
    """,
    "benchmark/kernel/run_compiled.py": """\
        import torch
        from gcn import GCN
        from train_eval import evaluate, train

        model = torch.compile(GCN())
        opt = torch.optim.Adam(model.parameters())
        train(model, opt, [])
        evaluate(loader=[], model=model)
    """,
    # through a package's __init__ re-export, from a namespace package above
    "benchmark/utils/__init__.py": "from .utils import test\n",
    "benchmark/utils/utils.py": """\
        def test(model, loader):
            correct = 0
            for data in loader:
                correct += int((model(data).argmax(-1) == data.y).sum())
            return correct
    """,
    "benchmark/training/bench.py": """\
        import torch
        from benchmark.utils import test

        model = torch.compile(torch.nn.Linear(2, 2))
        test(model, [])
    """,
    # another module named `gcn` elsewhere in the project: not the sibling
    "examples/gcn.py": """\
        import torch


        class GCN(torch.nn.Module):
            def forward(self, x):
                return x[x > 0]
    """,
}


@pytest.fixture
def project(tmp_path):
    return write_project(tmp_path / "proj", PROJECT)


def test_dict_of_imported_classes_compiles_each_sibling_class(project):
    whole = whole_tree_lines(project)
    assert any(line.startswith("benchmark/kernel/gcn.py:7:") and "GNN009" in line
               and "when `args.model == 'GCN'`" in line for line in whole), whole
    assert any(line.startswith("benchmark/kernel/gin.py:7:") and "GNN009" in line for line in whole), whole
    # never compiled: the class no choice names, and the same-named module elsewhere
    assert not any(line.startswith("benchmark/kernel/gin.py:12:") for line in whole), whole
    assert not any(line.startswith("examples/") for line in whole), whole


@pytest.mark.parametrize("name", ["benchmark/kernel/gcn.py", "benchmark/kernel/gin.py"])
def test_one_file_and_stdin_agree_with_the_whole_tree(project, name):
    assert_one_file_agrees(project, name, stdin=True, nonempty=True)


HANDED = {
    "benchmark/kernel/train_eval.py": {8, 15},
    "benchmark/utils/utils.py": {4},
}


def test_compiled_model_handed_to_another_files_function(project):
    whole = whole_tree_lines(project)
    for name, lines in HANDED.items():
        found = {int(line.split(":")[1]) for line in whole if line.startswith(name + ":") and "GNN013" in line}
        assert found == lines, (name, whole)
    assert any("compiled `model` (passed in run_compiled.py)" in line for line in whole), whole


@pytest.mark.parametrize("name", sorted(HANDED))
def test_handed_model_one_file_and_stdin_agree(project, name):
    assert_one_file_agrees(project, name, cached=1, stdin=True)


# -- item 2 across files: a function that compiles its parameter, an imported
# factory, getattr over an imported module's classes -------------------------
CHOSEN = {
    "pyproject.toml": "[project]\nname = 'demo'\n\n[tool.gnnlint]\n",
    "points/__init__.py": "",
    "points/train_eval.py": """\
        import torch


        def run_train(dataset, model, use_compile):
            model = model.to("cpu")
            if use_compile:
                model = torch.compile(model)
            return model


        def run(dataset, model, epochs, use_compile):
            return run_train(dataset, model, use_compile)
    """,
    "points/edge_cnn.py": """\
        import torch
        from points.train_eval import run
        from torch_geometric.nn import global_max_pool


        class Net(torch.nn.Module):
            def forward(self, x, batch):
                return global_max_pool(x, batch)


        class Helper(torch.nn.Module):
            def forward(self, x, batch):
                return global_max_pool(x, batch)


        model = Net()
        run([], model, 10, True)
    """,
    "pkg/__init__.py": "",
    "pkg/encoders.py": """\
        import torch
        from torch_geometric.nn import global_mean_pool


        class AtomEncoder(torch.nn.Module):
            def forward(self, x, batch):
                return global_mean_pool(x, batch)
    """,
    "pkg/models.py": """\
        import torch
        from torch_geometric.nn import global_add_pool
        from . import encoders


        class Net(torch.nn.Module):
            def __init__(self, cfg):
                super().__init__()
                self.enc = getattr(encoders, cfg.encoder)()

            def forward(self, x, batch):
                return self.enc(x, batch)


        class Other(torch.nn.Module):
            def forward(self, x, batch):
                return global_add_pool(x, batch)


        class Unused(torch.nn.Module):
            def forward(self, x, batch):
                return global_add_pool(x, batch)


        def build_model(cfg):
            if cfg.name == "net":
                return Net(cfg)
            return Other()
    """,
    "train.py": """\
        import torch
        from pkg.models import build_model


        def main(cfg):
            model = build_model(cfg)
            if cfg.compile:
                model = torch.compile(model)
    """,
}
EXPECTED = {
    "points/edge_cnn.py": {8},  # Helper (line 13) is never passed
    "pkg/encoders.py": {7},  # getattr(encoders, cfg.encoder): every class of that module
    "pkg/models.py": {17},  # what build_model() returns; Unused (line 22) is never returned
}


@pytest.fixture
def chosen(tmp_path):
    return write_project(tmp_path / "chosen", CHOSEN)


def test_classes_chosen_in_another_file_are_compiled(chosen):
    whole = whole_tree_lines(chosen, "--select", "GNN009")
    for name, lines in EXPECTED.items():
        found = {int(line.split(":")[1]) for line in whole if line.startswith(name + ":")}
        assert found == lines, (name, whole)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_chosen_one_file_and_stdin_agree(chosen, name):
    assert_one_file_agrees(chosen, name, cached=2, stdin=True)
