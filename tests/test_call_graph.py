"""The call-graph summaries (gnnlint/semantic/summaries.py) and the project solver
(gnnlint/call_graph.py), on small multi-file projects. Each shape is tested in at least
two spellings (a function / a method, a list / a dict / an attribute, one file / two)."""
from __future__ import annotations

import json
import os
from pathlib import Path

import libcst as cst

from gnnlint.call_graph import CallGraph
from gnnlint.context import FileContext
from gnnlint.module_map import ModuleMap
from gnnlint.semantic.summaries import summarize
from tests.project_files import write_project


def graph_of(root: Path, files: dict, possible: bool = False) -> tuple[CallGraph, callable]:
    write_project(root, files)
    paths = sorted(str(root / name) for name in files)
    summaries = {p: summarize(FileContext(cst.parse_module(Path(p).read_text()), p)) for p in paths}
    graph = CallGraph(summaries, ModuleMap(paths), possible=possible)

    def names(keys) -> set:
        return {f"{os.path.relpath(p, root)}:{q}" for p, q in keys}
    return graph, names


def driving(graph: CallGraph, root: Path) -> set:
    return {f"{os.path.relpath(p, root)}:{q}" for p, q in graph.driving}


# -- a compiled model reaches a loop through a holder ---------------------------------------

def test_factory_result_handed_to_a_trainer_drives_its_loop(tmp_path):
    graph, names = graph_of(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/models.py": """
            import torch
            from torch import nn
            class Net(nn.Module):
                def forward(self, x):
                    return x
            def build(cfg):
                return torch.compile(Net())
        """,
        "pkg/trainer.py": """
            from pkg.utils import log_loss
            class Trainer:
                def __init__(self, model, opt):
                    self.model = model
                def fit(self, loader):
                    for batch in loader:
                        out = self.model(batch)
                        log_loss(out)
                def save(self):
                    for k in range(3):
                        print(k)
        """,
        "pkg/utils.py": """
            def log_loss(out):
                print(out.item())
        """,
        "train.py": """
            from pkg.models import build
            from pkg.trainer import Trainer
            def main(loader):
                model = build(None)
                Trainer(model, None).fit(loader)
        """,
    })
    assert driving(graph, tmp_path) == {"pkg/trainer.py:Trainer.fit"}
    assert names(graph.per_step) == {"pkg/utils.py:log_loss"}


def test_trainer_built_with_a_keyword_and_an_attribute_holder(tmp_path):
    # the same hand-off spelled otherwise: a keyword argument, the compile in a method of a runner
    graph, names = graph_of(tmp_path, {
        "runner.py": """
            import torch
            from loop import Loop
            class Runner:
                def setup(self, net):
                    self.net = torch.compile(net)
                    self.loop = Loop(module=self.net)
        """,
        "loop.py": """
            class Loop:
                def __init__(self, module):
                    self.module = module
                def run(self, data):
                    while data:
                        self.module(data.pop())
        """,
    })
    assert driving(graph, tmp_path) == {"loop.py:Loop.run"}


def test_item_stores_of_compiled_models(tmp_path):
    # models[i] = torch.compile(m) / models.append(...) / a dict, handed to a function or held
    graph, names = graph_of(tmp_path, {
        "a.py": """
            import torch
            from b import run_all, Ensemble
            def main(nets, loader):
                models = [None] * len(nets)
                for i, m in enumerate(nets):
                    models[i] = torch.compile(m)
                run_all(models, loader)
            def other(nets, loader):
                table = {}
                for name, m in nets.items():
                    table[name] = torch.compile(m)
                run_all(list(table.values()), loader)
        """,
        "b.py": """
            import torch
            def run_all(models, loader):
                for m in models:
                    for batch in loader:
                        m(batch)
            class Ensemble:
                def __init__(self, nets):
                    self.members = []
                    for n in nets:
                        self.members.append(torch.compile(n))
                def predict(self, loader):
                    for batch in loader:
                        for member in self.members:
                            member(batch)
        """,
    })
    assert driving(graph, tmp_path) == {"b.py:run_all", "b.py:Ensemble.predict"}


# -- a loop drives compiled code below it -------------------------------------------------------

def test_decorated_helper_reached_through_a_submodule(tmp_path):
    graph, names = graph_of(tmp_path, {
        "ops.py": """
            import torch
            @torch.compile
            def aggregate(x):
                return x.sum(0)
        """,
        "model.py": """
            from torch import nn
            from ops import aggregate
            class Encoder(nn.Module):
                def forward(self, x):
                    return aggregate(x)
            class Model(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.encoder = Encoder()
                def forward(self, x):
                    return self.encoder(x)
        """,
        "train.py": """
            from model import Model
            def train(loader):
                model = Model()
                for batch in loader:
                    loss = model(batch)
                    report(loss)
            def report(loss):
                print(loss.item())
        """,
    })
    assert names(graph.reaches) >= {"ops.py:aggregate", "model.py:Encoder.forward", "model.py:Model.forward"}
    assert driving(graph, tmp_path) == {"train.py:train"}
    assert "train.py:report" in names(graph.per_step)


def test_a_method_compiled_in_place_reached_through_self(tmp_path):
    # the method spelling of the same shape: self.step = torch.compile(self.step), a sampler's loop
    graph, names = graph_of(tmp_path, {
        "sampler.py": """
            import torch
            class Sampler:
                def __init__(self):
                    self.step = torch.compile(self.step)
                def step(self, x):
                    return x
                def sample(self, x, n):
                    for t in range(n):
                        x = self.step(x)
                        self.check(x)
                    return x
                def check(self, x):
                    if x.isnan().any():
                        raise ValueError
        """,
    })
    assert driving(graph, tmp_path) == {"sampler.py:Sampler.sample"}
    assert "sampler.py:Sampler.check" in names(graph.per_step)


def test_an_epoch_loop_is_not_a_step_loop(tmp_path):
    graph, names = graph_of(tmp_path, {
        "train.py": """
            import torch
            def train_epoch(model, loader):
                for batch in loader:
                    model(batch)
            def fit(net, loader, epochs):
                model = torch.compile(net)
                for epoch in range(epochs):
                    train_epoch(model, loader)
                    summary(epoch)
            def summary(epoch):
                print(epoch)
        """,
    })
    assert driving(graph, tmp_path) == {"train.py:train_epoch"}
    assert "train.py:summary" not in names(graph.per_step)


# -- compiled regions --------------------------------------------------------------------------

def test_compiled_entry_reaches_helpers_across_files_and_packages(tmp_path):
    graph, names = graph_of(tmp_path, {
        "pkg/__init__.py": "from pkg.layers import Block\n",
        "pkg/layers.py": """
            from torch import nn
            from pkg import scatter
            class Block(nn.Module):
                def forward(self, x, index):
                    return scatter.scatter_sum(x, index)
        """,
        "pkg/scatter.py": """
            def scatter_sum(x, index):
                size = int(index.max()) + 1
                return x
        """,
        "main.py": """
            import torch
            from pkg import Block
            def make():
                return Block()
            def main():
                model = torch.compile(make())
                other = torch.compile(Block())
        """,
    })
    assert names(graph.compiled) == {"pkg/layers.py:Block.forward", "pkg/scatter.py:scatter_sum"}


# -- possible callees ----------------------------------------------------------------------------

def test_unknown_receivers_are_only_possible_callees(tmp_path):
    files = {
        "env.py": """
            import torch
            class Env:
                def __init__(self, policy):
                    self.policy = torch.compile(policy)
                def step(self, state):
                    return self.policy(state)
        """,
        "rollout.py": """
            def rollout(env, state, n):
                for t in range(n):
                    state = env.step(state)
                return state
        """,
    }
    strict, _ = graph_of(tmp_path, files)
    loose, _ = graph_of(tmp_path, files, possible=True)
    assert driving(strict, tmp_path) == set()
    assert driving(loose, tmp_path) == {"rollout.py:rollout"}


# -- the summary is the file's own: serialisable, the same alone as in any project -----------------

def test_summary_is_json_and_independent_of_the_project(tmp_path):
    source = """
        import torch
        from helpers import wrap
        class M:
            def __init__(self, net):
                self.net = wrap(net)
                self.items = {}
                self.items["a"] = torch.compile(net)
            def run(self, xs):
                for x in xs:
                    self.net(x)
    """
    write_project(tmp_path, {"m.py": source})
    path = str(tmp_path / "m.py")
    summary = summarize(FileContext(cst.parse_module((tmp_path / "m.py").read_text()), path))
    assert json.loads(json.dumps(summary)) == summary
    assert summary["classes"]["M"]["attrs"]["items"] == [["c"]]
    assert summary["funcs"]["M.run"]["calls"][0][:3] == [["sa", "M", "net"], "__call__", 0]
    # the answer for m.py does not depend on the order files are given in
    write_project(tmp_path, {"helpers.py": """
        import torch
        def wrap(net):
            return torch.compile(net)
    """})
    paths = [str(tmp_path / "helpers.py"), path]
    sums = {p: summarize(FileContext(cst.parse_module(Path(p).read_text()), p)) for p in paths}
    one = CallGraph(sums, ModuleMap(paths))
    other = CallGraph(dict(reversed(list(sums.items()))), ModuleMap(list(reversed(paths))))
    assert one.driving == other.driving == {(path, "M.run"): {0}}


def test_config_built_trainer_gets_the_compiled_models_as_a_possible_callee(tmp_path):
    # models[i] / a comprehension of compiles, handed to a Hydra-instantiated trainer by keyword
    files = {
        "utils.py": """
            import torch
            import hydra
            def prepare(cfg, n, compile_model=False):
                models = [hydra.utils.instantiate(cfg.model) for _ in range(n)]
                if compile_model:
                    models = [torch.compile(m) for m in models]
                return models
        """,
        "run.py": """
            from hydra.utils import instantiate
            from utils import prepare
            def main(cfg):
                models = prepare(cfg, 2, True)
                trainer = instantiate(cfg.trainer, models=models, device="cuda")
                trainer.train()
        """,
        "trainer.py": """
            class Ensemble:
                def __init__(self, models, device):
                    self.models = models
                def validate(self, loader):
                    for x in loader:
                        preds = [model(x) for model in self.models]
            class Other:
                def __init__(self, device):
                    self.device = device
                def fit(self, loader):
                    for x in loader:
                        print(x)
        """,
    }
    strict, _ = graph_of(tmp_path, files)
    loose, _ = graph_of(tmp_path, files, possible=True)
    assert driving(strict, tmp_path) == set()
    assert driving(loose, tmp_path) == {"trainer.py:Ensemble.validate"}


def test_only_the_innermost_loop_is_the_step(tmp_path):
    graph, _ = graph_of(tmp_path, {
        "train.py": """
            import torch
            def fit(net, loader, epochs):
                model = torch.compile(net)
                for epoch in range(epochs):
                    for batch in loader:
                        model(batch)
                    print(epoch)
        """,
    })
    fit = graph.funcs[(str(tmp_path / "train.py"), "fit")]
    (index,) = graph.driving[(str(tmp_path / "train.py"), "fit")]
    assert fit["loops"][index][2] == 0  # the batch loop, inside the epoch loop


def test_the_flagged_dump_writes_the_summary_and_todays_regions(tmp_path, monkeypatch):
    from gnnlint import engine

    source = (
        "import torch\n"
        "def train(net, loader, opt):\n"
        "    model = torch.compile(net)\n"
        "    for batch in loader:\n"
        "        loss = model(batch)\n"
        "        loss.backward()\n"
        "        opt.step()\n"
        "        print(loss.item())\n"
    )
    folder = tmp_path / "dump"
    folder.mkdir()
    monkeypatch.setattr(engine, "_GRAPH_DUMP", str(folder))
    engine.lint_bytes("train.py", source.encode(), engine.LintOptions(frozenset({"GNN001", "GNN013"})))
    (written,) = list(folder.iterdir())
    entry = json.loads(written.read_text())
    assert entry["summary"]["funcs"]["train"]["span"] == [2, 8]
    assert entry["summary"]["funcs"]["train"]["loops"] == [[4, 8, -1]]
    assert 8 in entry["today"]["d"] and 8 not in entry["today"]["c"]


def test_no_dump_without_the_flag(tmp_path, monkeypatch):
    from gnnlint import engine

    monkeypatch.setattr(engine, "_GRAPH_DUMP", None)
    monkeypatch.chdir(tmp_path)
    engine.lint_bytes("a.py", b"import torch\nm = torch.compile(f)\n", engine.LintOptions(frozenset({"GNN001", "GNN013"})))
    assert list(tmp_path.iterdir()) == []
