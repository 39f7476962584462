"""How real projects compile (issue 10, recall on real code): the compile
sits in a trainer or engine class under a config flag, the models live in a
models/ package and are built through a factory or a registry; the same
findings whether gnnlint runs on the whole tree, one file or stdin, and none
in a project that never compiles."""
from __future__ import annotations

import textwrap

import pytest

from tests.project_files import assert_one_file_agrees, finding_lines, run, whole_tree_lines, write_project

MODELS = {
    "pyproject.toml": "[project]\nname = 'demo'\n\n[tool.gnnlint]\n",
    "models/__init__.py": """\
        from .gnn import GNN, Other
        from .factory import build_model

        __all__ = ["GNN", "Other", "build_model"]
    """,
    "models/gnn.py": """\
        import torch
        from torch import nn
        from torch_geometric.nn import global_mean_pool


        class GNN(nn.Module):
            def __init__(self, hidden):
                super().__init__()
                self.lin = nn.Linear(hidden, hidden)

            def forward(self, data):
                x = self.lin(data.x)
                return global_mean_pool(x, data.batch)


        class Other(nn.Module):
            def forward(self, data):
                return data.x[torch.nonzero(data.x > 0)]


        class Unregistered(nn.Module):
            def forward(self, data):
                return data.x[torch.nonzero(data.x > 0)]
    """,
    "models/factory.py": """\
        from .gnn import GNN, Other

        MODELS = {"gnn": GNN, "other": Other}


        def build_model(cfg):
            return MODELS[cfg.name](**cfg.kwargs)
    """,
}

TRAINER = """\
    import torch

    from models import build_model


    class Trainer:
        def __init__(self, cfg):
            self.cfg = cfg
            self.model = build_model(cfg.model)
            if cfg.compile:
                self.model = torch.compile(self.model)
            self.opt = torch.optim.Adam(self.model.parameters())

        def train_epoch(self, loader):
            total = 0.0
            for batch in loader:
                self.opt.zero_grad()
                loss = self.model(batch).sum()
                loss.backward()
                self.opt.step()
                total += loss.item()
            return total
"""

EXPECTED = {
    "models/gnn.py": {13, 18},  # GNN (GNN009), Other (GNN008); Unregistered (line 23) never built
    "trainer.py": {21},
}


@pytest.fixture
def trainer(tmp_path):
    return write_project(tmp_path / "proj", {**MODELS, "trainer.py": TRAINER})


def test_trainer_attribute_compiled_under_a_flag_compiles_the_factory_models(trainer):
    whole = whole_tree_lines(trainer)
    for name, lines in EXPECTED.items():
        found = {int(line.split(":")[1]) for line in whole if line.startswith(name + ":")}
        assert found == lines, (name, whole)
    assert any("(when `cfg.name == 'other'`)" in line and "trainer.py" in line for line in whole), whole


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_trainer_one_file_and_stdin_agree(trainer, name):
    assert_one_file_agrees(trainer, name, cached=2, stdin=True)


def test_the_same_project_without_a_compile_has_no_finding(tmp_path):
    eager = textwrap.dedent(TRAINER).replace(
        "        if cfg.compile:\n            self.model = torch.compile(self.model)\n", "")
    assert "compile" not in eager.replace("cfg.compile", "")
    root = write_project(tmp_path / "eager", {**MODELS, "trainer.py": eager})
    assert whole_tree_lines(root) == set()


# -- Lightning: a LightningModule holding a model from a models/ package that
# re-exports it; compiled in configure_model, or compiled whole by a script ----
LIGHTNING = {
    "pyproject.toml": "[project]\nname = 'demo'\n\n[tool.gnnlint]\n",
    "src/pkg/__init__.py": "",
    "src/pkg/models/__init__.py": "from .schnet import SchNet\n",
    "src/pkg/models/schnet.py": """\
        import torch
        from torch import nn
        from torch_geometric.nn import global_add_pool


        class SchNet(nn.Module):
            def __init__(self, hidden=16):
                super().__init__()
                self.lin = nn.Linear(hidden, 1)

            def forward(self, data):
                h = self.lin(data.x)
                return global_add_pool(h, data.batch)
    """,
    "src/pkg/lit.py": """\
        import torch
        import lightning.pytorch as pl

        from .models import SchNet


        class LitModel(pl.LightningModule):
            def __init__(self, cfg):
                super().__init__()
                self.cfg = cfg
                self.model = SchNet(cfg.hidden)

            def configure_model(self):
                if self.cfg.compile:
                    self.model = torch.compile(self.model)

            def training_step(self, batch, batch_idx):
                loss = (self.model(batch) - batch.y).pow(2).mean()
                self.log("train_loss", loss.item())
                return loss
    """,
}


def test_lightning_inner_model_compiled_through_a_package_reexport(tmp_path):
    root = write_project(tmp_path / "lit", LIGHTNING)
    whole = whole_tree_lines(root)
    assert {(line.split(":")[0], int(line.split(":")[1]), line.split()[1]) for line in whole} == {
        ("src/pkg/models/schnet.py", 13, "GNN009"),  # compiled through models/__init__.py's re-export
        ("src/pkg/lit.py", 19, "GNN013"),  # the step method runs the compiled model: per step
    }, whole
    assert any("every step of a training loop" in line for line in whole), whole
    mine = {line for line in whole if line.startswith("src/pkg/models/schnet.py:")}
    assert finding_lines(run(["check", "src/pkg/models/schnet.py", "--no-cache"], root).output) == mine


def test_lightning_module_compiled_by_a_script_compiles_its_step_methods(tmp_path):
    lit = textwrap.dedent(LIGHTNING["src/pkg/lit.py"]).replace(
        "    def configure_model(self):\n        if self.cfg.compile:\n            self.model = torch.compile(self.model)\n",
        "    def forward(self, batch):\n        return self.model(batch)\n")
    script = """\
        import torch
        import lightning.pytorch as pl

        from .lit import LitModel


        def main(cfg):
            module = LitModel(cfg)
            if cfg.compile:
                module = torch.compile(module)
            pl.Trainer().fit(module)
    """
    root = write_project(tmp_path / "lit2", {**LIGHTNING, "src/pkg/lit.py": lit, "src/pkg/train.py": script})
    whole = whole_tree_lines(root)
    assert {(line.split(":")[0], int(line.split(":")[1]), line.split()[1]) for line in whole} == {
        ("src/pkg/models/schnet.py", 13, "GNN009"),
        ("src/pkg/lit.py", 18, "GNN001"),  # training_step is compiled with the module's forward
    }, whole
    eager = write_project(tmp_path / "lit3", {**LIGHTNING, "src/pkg/lit.py": lit,
                                       "src/pkg/train.py": script.replace("module = torch.compile(module)", "pass")})
    assert whole_tree_lines(eager) == set()


# -- an engine class that compiles the model it is given (``Engine(model,
# cfg)`` in another file; ``self.model.compile()`` or ``torch.compile``) ------
ENGINE = {
    "pyproject.toml": "[project]\nname = 'demo'\n\n[tool.gnnlint]\n",
    "nets/__init__.py": "",
    "nets/painn.py": """\
        import torch
        from torch import nn


        class PaiNN(nn.Module):
            def forward(self, x, batch):
                return x[torch.nonzero(batch)]


        class NotPassed(nn.Module):
            def forward(self, x, batch):
                return x[torch.nonzero(batch)]
    """,
    "engine.py": """\
        import torch


        class Engine:
            def __init__(self, model, cfg):
                self.model = model.to(cfg.device)
                if cfg.compile:
                    self.model.compile(**cfg.compile_kwargs)
                self.opt = torch.optim.Adam(self.model.parameters())

            def fit(self, loader):
                for batch in loader:
                    loss = self.model(batch.x, batch.batch).sum()
                    loss.backward()
                    self.opt.step()
                    print(loss.item())
    """,
    "main.py": """\
        from nets.painn import PaiNN
        from engine import Engine


        def main(cfg):
            model = PaiNN()
            Engine(model, cfg).fit(cfg.loader)
    """,
}


@pytest.mark.parametrize("compile_line", ["self.model.compile(**cfg.compile_kwargs)",
                                          "self.model = torch.compile(self.model, **cfg.compile_kwargs)"])
def test_engine_class_compiling_its_constructor_argument(tmp_path, compile_line):
    files = dict(ENGINE)
    files["engine.py"] = files["engine.py"].replace("self.model.compile(**cfg.compile_kwargs)", compile_line)
    root = write_project(tmp_path / "engine", files)
    whole = whole_tree_lines(root)
    assert {(line.split(":")[0], int(line.split(":")[1]), line.split()[1]) for line in whole} == {
        ("nets/painn.py", 7, "GNN008"),  # NotPassed (line 12) is never handed to Engine
        ("engine.py", 16, "GNN013"),
    }, whole
    mine = {line for line in whole if line.startswith("nets/painn.py:")}
    assert finding_lines(run(["check", "nets/painn.py", "--no-cache"], root).output) == mine


# -- a registry filled by a decorator: ``@register_model("painn")`` in one
# file, ``MODEL_REGISTRY[name](**kw)`` in the registry's ``get_model`` ----------
REGISTRY = {
    "pyproject.toml": "[project]\nname = 'demo'\n\n[tool.gnnlint]\n",
    "nets/__init__.py": "",
    "nets/registry.py": """\
        MODEL_REGISTRY = {}


        def register_model(name):
            def deco(cls):
                MODEL_REGISTRY[name] = cls
                return cls
            return deco


        def get_model(name, **kwargs):
            return MODEL_REGISTRY[name](**kwargs)
    """,
    "nets/painn.py": """\
        import torch
        from torch import nn

        from .registry import register_model


        @register_model("painn")
        class PaiNN(nn.Module):
            def forward(self, x, batch):
                return x[torch.nonzero(batch)]


        class Unregistered(nn.Module):
            def forward(self, x, batch):
                return x[torch.nonzero(batch)]
    """,
    "train.py": """\
        import torch

        from nets.registry import get_model


        def main(cfg):
            model = get_model(cfg.name)
            if cfg.compile:
                model = torch.compile(model)
            return model
    """,
}


def test_classes_registered_by_a_decorator_are_compiled(tmp_path):
    root = write_project(tmp_path / "registry", REGISTRY)
    whole = whole_tree_lines(root)
    assert {(line.split(":")[0], int(line.split(":")[1]), line.split()[1]) for line in whole} == {
        ("nets/painn.py", 10, "GNN008"),  # Unregistered (line 15) is never in the registry
    }, whole
    mine = {line for line in whole if line.startswith("nets/painn.py:")}
    assert finding_lines(run(["check", "nets/painn.py", "--no-cache"], root).output) == mine
    eager = write_project(tmp_path / "eager", {**REGISTRY, "train.py": REGISTRY["train.py"].replace(
        "model = torch.compile(model)", "pass")})
    assert whole_tree_lines(eager) == set()


# -- a compiled class runs the modules passed to its constructor: the file
# building Backbone(conditioner=Conditioner()) is told, and compiles them ------
COMPOSED = {
    "pyproject.toml": "[project]\nname = 'demo'\n\n[tool.gnnlint]\n",
    "backbone.py": """\
        from torch import nn


        class Backbone(nn.Module):
            def __init__(self, hidden, conditioner=None, head=None):
                super().__init__()
                self.lin = nn.Linear(hidden, hidden)
                self.conditioner = conditioner
                self.unused = head

            def forward(self, x):
                if self.conditioner is not None:
                    x = x + self.conditioner(x)
                return self.lin(x)
    """,
    "conds.py": """\
        from torch import nn


        class Conditioner(nn.Module):
            def forward(self, x):
                return x[x > 0].sum()


        class Head(nn.Module):
            def forward(self, x):
                return x[x > 0].sum()
    """,
    "build.py": """\
        import torch

        from backbone import Backbone
        from conds import Conditioner, Head


        def build(cfg):
            model = Backbone(8, conditioner=Conditioner(), head=Head())
            if cfg.compile:
                model = torch.compile(model)
            return model
    """,
}


def test_modules_passed_to_a_compiled_constructor_are_compiled(tmp_path):
    root = write_project(tmp_path / "composed", COMPOSED)
    whole = whole_tree_lines(root)
    # Head is stored but never called by the compiled forward
    assert {(line.split(":")[0], int(line.split(":")[1]), line.split()[1]) for line in whole} == {
        ("conds.py", 6, "GNN008"),
    }, whole
    assert finding_lines(run(["check", "conds.py", "--no-cache"], root).output) == whole
