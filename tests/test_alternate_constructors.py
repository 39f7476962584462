"""A class's alternate constructors build an instance of it (s11reachA, heldout5
SynPlanner): ``Net.load_from_checkpoint(path)`` (Lightning's classmethod) and a
local classmethod returning ``cls(...)`` (``Net.from_config(cfg)``). Compiling
the result compiles that class's forward, in this file or in the file that
defines the class."""
from __future__ import annotations

from tests.file_contexts import context_of
from tests.project_files import finding_lines, run, write_project

NET = """\
    import torch
    from lightning import LightningModule
    from torch_geometric.nn import global_add_pool


    class Net(LightningModule):
        def forward(self, batch):
            return global_add_pool(batch.x, batch.batch)
"""

RUNNER = """\
    import torch
    from pkg.net import Net


    class Runner:
        def __init__(self, path, compile=False):
            net = Net.load_from_checkpoint(path, map_location=torch.device("cpu"))
            net = net.eval()
            if compile:
                self.net = torch.compile(net, dynamic=True)
            else:
                self.net = net

        def predict(self, g):
            return self.net.forward(g)
"""


def _lines(tmp_path, runner: str) -> set[str]:
    root = write_project(tmp_path / "proj", {"pkg/__init__.py": "", "pkg/net.py": NET, "pkg/run.py": runner})
    return finding_lines(run(["check", "--isolated", "--no-cache", "--output-format", "concise", "."], root).output)


def test_a_checkpoint_loaded_class_compiled_in_another_file(tmp_path):
    lines = _lines(tmp_path, RUNNER)
    assert any(line.startswith("pkg/net.py:8:") and "GNN009" in line for line in lines), lines


def test_a_checkpoint_loaded_instance_never_compiled(tmp_path):
    lines = _lines(tmp_path, RUNNER.replace("torch.compile(net, dynamic=True)", "net"))
    assert not any(line.startswith("pkg/net.py") for line in lines), lines


def test_a_local_classmethod_returning_cls_builds_the_class():
    ctx = context_of("""
        import torch

        class Net(torch.nn.Module):
            @classmethod
            def from_config(cls, cfg):
                return cls(**cfg)

            @classmethod
            def default_config(cls):
                return {"hidden": 8}

            @staticmethod
            def build(cfg):
                return Other()

        class Other(torch.nn.Module):
            pass

        a = Net.from_config({})
        b = Net.default_config()
        c = Net.load_from_checkpoint("x.ckpt")
        d = Net.build({})
    """)
    values = [stmt.body[0].value for stmt in ctx.module.body[-4:]]
    found = {name: ctx.class_of(value, value) for name, value in zip("abcd", values)}
    assert found["a"] is ctx.classes["Net"]
    assert found["b"] is None  # a classmethod returning a dict
    assert found["c"] is ctx.classes["Net"]
    assert found["d"] is None  # not a classmethod returning cls(...): what it returns is another question


NET_LOAD = NET + """\

        @classmethod
        def load(cls, path, device="cpu"):
            checkpoint = torch.load(path, map_location=device)
            model = cls(**checkpoint["config"])
            model.load_state_dict(checkpoint["state"])
            return model.to(device)

        @classmethod
        def describe(cls, path):
            return torch.load(path)["config"]
"""

LOADER = """\
    import torch


    class Calculator:
        def __init__(self, path, use_compile=False):
            self.model = self._load_model(path)
            if use_compile:
                self.model = torch.compile(self.model)

        def _load_model(self, path):
            from pkg.net import Net
            model = Net.{method}(path, device="cuda")
            model.eval()
            return model

        def calculate(self, batch):
            return self.model(batch)
"""


def _load_lines(tmp_path, method: str) -> set[str]:
    root = write_project(tmp_path / "proj", {"pkg/__init__.py": "", "pkg/net.py": NET_LOAD,
                                             "pkg/calc.py": LOADER.replace("{method}", method)})
    return finding_lines(run(["check", "--isolated", "--no-cache", "--output-format", "concise", "."], root).output)


def test_an_imported_classmethod_building_cls_compiles_the_class(tmp_path):
    lines = _load_lines(tmp_path, "load")
    assert any(line.startswith("pkg/net.py:8:") and "GNN009" in line and "`Net`" in line for line in lines), lines


def test_an_imported_classmethod_returning_something_else_builds_nothing(tmp_path):
    lines = _load_lines(tmp_path, "describe")
    assert not any(line.startswith("pkg/net.py") for line in lines), lines
