"""A builder in one file compiles the model (under a flag) and returns it with
an EMA copy; the entry point unpacks the result and hands the model to the
training and evaluation loops of a third file, also through an evaluation
name that picks the EMA copy when there is one (issue 10, heldout5's
MeshGraphNets family). Those loops drive compiled code; the element the
builder does not compile (the EMA copy) does not, and the same project
without the compile reports nothing."""
from __future__ import annotations

from tests.project_files import assert_one_file_agrees, finding_lines, run, whole_tree_lines, write_project

PROJECT = {
    "pyproject.toml": "[project]\nname = 'demo'\n\n[tool.gnnlint]\n",
    "demo/__init__.py": "",
    "demo/setup.py": """\
        import torch
        from demo.model import Net


        def build_model_and_ema(config, device):
            model = Net().to(device)
            ema_model = torch.optim.swa_utils.AveragedModel(model) if config.get("ema") else None
            if config.get("use_compile", False):
                model = torch.compile(model, dynamic=True)
            return model, ema_model
    """,
    "demo/model.py": """\
        import torch


        class Net(torch.nn.Module):
            def forward(self, graph):
                return graph.x * 2
    """,
    "demo/loops.py": """\
        import torch


        def train_epoch(model, loader, optimizer):
            for graph in loader:
                optimizer.zero_grad()
                loss = model(graph.to("cuda")).sum()
                loss.backward()
                optimizer.step()
                print(loss.item())


        def test_model(model, loader):
            with torch.no_grad():
                for graph in loader:
                    print(model(graph.to("cuda")).sum().item())


        def ema_stats(model, loader):
            for graph in loader:
                print(model(graph.to("cuda")).sum().item())
    """,
    "demo/main.py": """\
        import torch
        from torch_geometric.loader import DataLoader
        from demo.setup import build_model_and_ema
        from demo.loops import ema_stats, test_model, train_epoch


        def main(config, train_ds, test_ds):
            train_loader = DataLoader(train_ds, batch_size=8, shuffle=True)
            test_loader = DataLoader(test_ds, batch_size=1)
            model, ema_model = build_model_and_ema(config, "cuda")
            optimizer = torch.optim.Adam(model.parameters())
            for epoch in range(10):
                train_epoch(model, train_loader, optimizer)
                eval_model = ema_model.module if ema_model is not None else model
                test_model(eval_model, test_loader)
                ema_stats(ema_model, test_loader)
    """,
}


def test_loops_handed_the_builders_compiled_result_drive_compiled_code(tmp_path):
    root = write_project(tmp_path, PROJECT)
    lines = whole_tree_lines(root)
    assert {line.split(":")[0] + ":" + line.split(":")[1] for line in lines} == {
        "demo/loops.py:10", "demo/loops.py:16"}, lines
    assert all("GNN013" in line for line in lines), lines
    assert_one_file_agrees(root, "demo/loops.py", nonempty=True, cached=1)


def test_without_the_compile_nothing(tmp_path):
    files = dict(PROJECT)
    files["demo/setup.py"] = PROJECT["demo/setup.py"].replace(
        "model = torch.compile(model, dynamic=True)", "model = model.float()")
    root = write_project(tmp_path, files)
    assert not whole_tree_lines(root)


# A builder returning a record of the run (a dataclass) with the compiled model in a field, compiled
# through `from torch_geometric import torch_geometric` (an editor's auto-import: the package itself);
# the entry point reads the field and runs it per batch (heldout6's kaggle-fast-or-slow)
RECORD = {
    "pyproject.toml": "[project]\nname = 'demo'\n\n[tool.gnnlint]\n",
    "demo/__init__.py": "",
    "demo/builder.py": """\
        from dataclasses import dataclass

        from torch_geometric import torch_geometric
        from demo.model import Net


        @dataclass
        class RunData:
            model: Net
            epochs: int


        def build(spec):
            model = Net()
            model = torch_geometric.compile(model)
            return RunData(model=model, epochs=spec.epochs)


        def build_eager(spec):
            model = Net()
            return RunData(model=model, epochs=spec.epochs)
    """,
    "demo/model.py": PROJECT["demo/model.py"],
    "demo/train.py": """\
        from demo.builder import build, build_eager


        def run(spec, loader, optimizer):
            run_data = build(spec)
            model = run_data.model
            for epoch in range(run_data.epochs):
                for graph in loader:
                    loss = model(graph.to("cuda")).sum()
                    loss.backward()
                    optimizer.step()
                    print(loss.item())


        def run_eager(spec, loader, optimizer):
            run_data = build_eager(spec)
            model = run_data.model
            for graph in loader:
                loss = model(graph.to("cuda")).sum()
                loss.backward()
                optimizer.step()
                print(loss.item())
    """,
}


def test_the_compiled_field_of_a_returned_record(tmp_path):
    root = write_project(tmp_path, RECORD)
    lines = sorted(finding_lines(run(["check", "demo/train.py", "--no-cache", "--output-format", "concise"],
                                     root).output))
    assert [line.split(" ")[0:2] for line in lines] == [["demo/train.py:12:19:", "GNN013"]], lines
    assert "compiled `build(...).model` (compiled in builder.py)" in lines[0]


# A runner framework's builder class: `Builder._build_model(cfg)` is a @staticmethod compiling the model
# under a config flag; the runner in another file stores the result and runs it per batch through its
# own `_forward` helper (heldout8's BasicTS). A plain method of the class (called on an instance, which
# the importer cannot see is this class) and a class of the same shape that does not compile tell nothing.
STATIC = {
    "pyproject.toml": "[project]\nname = 'demo'\n\n[tool.gnnlint]\n",
    "demo/__init__.py": "",
    "demo/model.py": PROJECT["demo/model.py"],
    "demo/builder.py": """\
        import torch


        class Builder:
            @staticmethod
            def _build_model(cfg):
                model = cfg.model(cfg.model_config)
                if cfg.compile_model:
                    model = torch.compile(model)
                return model

            @classmethod
            def build_twin(cls, cfg):
                twin = torch.compile(cfg.model(cfg.model_config))
                return twin

            def build_plain(self, cfg):
                model = torch.compile(cfg.model(cfg.model_config))
                return model

            @staticmethod
            def build_eager(cfg):
                model = cfg.model(cfg.model_config)
                return model
    """,
    "demo/runner.py": """\
        from .builder import Builder


        class Runner:
            def __init__(self, cfg, loader):
                self.model = Builder._build_model(cfg)
                self.twin = Builder.build_twin(cfg)
                self.plain = Builder().build_plain(cfg)
                self.eager = Builder.build_eager(cfg)
                self.loader = loader

            def _forward(self, model, data):
                return model(data["inputs"])

            def train(self):
                for data in self.loader:
                    loss = self._forward(self.model, data).mean()
                    loss.backward()
                    print(loss.item())

            def train_twin(self):
                for data in self.loader:
                    loss = self.twin(data["inputs"]).mean()
                    loss.backward()
                    print(loss.item())

            def train_others(self):
                for data in self.loader:
                    loss = self.plain(data["inputs"]).mean() + self.eager(data["inputs"]).mean()
                    loss.backward()
                    print(loss.item())
    """,
}


def test_a_static_builder_of_an_imported_class(tmp_path):
    root = write_project(tmp_path, STATIC)
    lines = sorted(whole_tree_lines(root))
    assert [line.split(" ")[0:2] for line in lines] == [
        ["demo/runner.py:19:19:", "GNN013"], ["demo/runner.py:25:19:", "GNN013"]], lines
    assert "compiled `Builder._build_model(...)` result (compiled in builder.py)" in lines[0]
    assert_one_file_agrees(root, "demo/runner.py", nonempty=True, cached=1)


def test_a_static_builder_rebound_in_the_importer_tells_nothing(tmp_path):
    files = dict(STATIC)
    files["demo/runner.py"] = STATIC["demo/runner.py"].replace(
        "def __init__(self, cfg, loader):\n", "def __init__(self, cfg, loader):\n                Builder = cfg.builder\n")
    root = write_project(tmp_path, files)
    assert not finding_lines(run(["check", "demo/runner.py", "--no-cache"], root).output)


FACTORY = {
    "pyproject.toml": "[project]\nname = 'demo'\n\n[tool.gnnlint]\n",
    "demo/__init__.py": "",
    "demo/losses.py": """\
        import torch


        def prepare_loss_fn(model, compile_loss, mode):
            def loss_wrapper(batch):
                return model(batch).pow(2).mean()

            if compile_loss:
                return torch.compile(loss_wrapper, mode=mode)
            return loss_wrapper
    """,
    "demo/loops.py": """\
        import torch


        def training_loop(loss_fn, optimizer, n_iters):
            history = []
            for step in range(n_iters):
                batch = torch.randn(32, 8, device="cuda")
                optimizer.zero_grad()
                loss = loss_fn(batch)
                loss.backward()
                optimizer.step()
                history.append(loss.item())
            return history
    """,
    "demo/main.py": """\
        import torch

        from demo.losses import prepare_loss_fn
        from demo.loops import training_loop


        def main():
            model = torch.nn.Linear(8, 1).cuda()
            optimizer = torch.optim.Adam(model.parameters())
            loss_fn = prepare_loss_fn(model, True, "default")
            training_loop(loss_fn, optimizer, n_iters=100)
    """,
}


def test_a_factory_returning_a_compiled_callable_drives_the_loop_it_is_handed_to(tmp_path):
    # `return torch.compile(loss_wrapper, ...)`: the factory's whole result is compiled (heldout9's
    # torchgfn tutorial), handed to a loop function of a third file that calls it every iteration
    root = write_project(tmp_path / "factory", FACTORY)
    whole = whole_tree_lines(root)
    assert {line.split(": ")[0].rsplit(":", 1)[0] for line in whole} == {"demo/loops.py:12"}, whole
    assert all("GNN013" in line and "compiled `loss_fn` (passed in main.py)" in line for line in whole), whole
    assert_one_file_agrees(root, "demo/loops.py")


def test_a_factory_returning_its_callable_uncompiled_tells_nothing(tmp_path):
    files = dict(FACTORY)
    files["demo/losses.py"] = FACTORY["demo/losses.py"].replace("torch.compile(loss_wrapper, mode=mode)", "loss_wrapper")
    assert not whole_tree_lines(write_project(tmp_path / "plain", files))
