"""Models of unknown class at the compile site: the classes a factory builds
and hands to a wrapper's constructor (``self.encoder = encoder`` in
``__init__``) run compiled when the wrapper does -- but only those the
project's constructions really pass (semantic/ctor_args.py)."""
from __future__ import annotations

import pytest

from tests.project_files import assert_one_file_agrees, finding_lines, run, whole_tree_lines, write_project

PROJECT = {
    "pyproject.toml": "[project]\nname = 'demo'\n\n[tool.gnnlint]\n",
    "pkg/__init__.py": "",
    "pkg/encoders.py": """\
        import torch


        class EncoderA(torch.nn.Module):
            def forward(self, x):
                return x[x > 0]


        class EncoderB(torch.nn.Module):
            def forward(self, x):
                return torch.nonzero(x)


        class NeverBuilt(torch.nn.Module):
            def forward(self, x):
                return x[x > 0]
    """,
    "pkg/wrappers.py": """\
        import torch


        class Filter(torch.nn.Module):
            def __init__(self, model, keep):
                super().__init__()
                self.model = model
                self.keep = keep

            def forward(self, x):
                x = self.model(x)
                return x[x > self.keep]


        class Unused(torch.nn.Module):
            def __init__(self, model):
                super().__init__()
                self.model = model

            def forward(self, x):
                return x[x > 0]
    """,
    "pkg/heads.py": """\
        import torch


        class Head(torch.nn.Module):
            def forward(self, x):
                return x.sum()
    """,
    "pkg/model.py": """\
        import torch
        from pkg.encoders import EncoderA, EncoderB
        from pkg.heads import Head
        from pkg.wrappers import Filter


        def create_model(args):
            if args["model"] == "a":
                encoder = EncoderA()
            elif args["model"] == "b":
                encoder = EncoderB()
            else:
                raise ValueError(args["model"])
            if args["filter"]:
                encoder = Filter(encoder, args["filter"])
            return Net(encoder, head=Head())


        def load_model(path):
            args = torch.load(path)
            model = create_model(args)
            return model.to("cpu")


        class Net(torch.nn.Module):
            def __init__(self, representation, head=None):
                super().__init__()
                self.representation = representation.to(dtype=torch.float32)
                self.head = head

            def forward(self, x):
                return self.head(self.representation(x))
    """,
    "pkg/calculator.py": """\
        import torch
        from pkg.model import load_model


        class Calculator:
            def __init__(self, path):
                self.model = load_model(path)
                self.compiled = torch.compile(self.model)

            def energy(self, x):
                return self.compiled(x)
    """,
}


@pytest.fixture
def project(tmp_path):
    return write_project(tmp_path / "proj", PROJECT)


def test_constructor_argument_classes_of_a_factory_built_model_run_compiled(project):
    whole = whole_tree_lines(project)
    assert any(line.startswith("pkg/encoders.py:6:") and "GNN008" in line
               and "when `args[\"model\"] == \"a\"`" in line for line in whole), whole
    assert any(line.startswith("pkg/encoders.py:11:") for line in whole), whole
    assert any(line.startswith("pkg/wrappers.py:12:") and "GNN008" in line for line in whole), whole
    # no construction passes these: not compiled
    assert not any(line.startswith("pkg/encoders.py:16:") for line in whole), whole
    assert not any(line.startswith("pkg/wrappers.py:21:") for line in whole), whole


@pytest.mark.parametrize("name", ["pkg/encoders.py", "pkg/wrappers.py"])
def test_one_file_agrees_with_the_whole_tree(project, name):
    assert_one_file_agrees(project, name, nonempty=True)


# a factory returning a tuple (``model, config = load(...)``), model classes whose forward
# is a base class's in another file, and the hooks that forward calls on self
STACKS = {
    "pyproject.toml": "[project]\nname = 'demo'\n\n[tool.gnnlint]\n",
    "hydra/__init__.py": "",
    "hydra/models/__init__.py": "",
    "hydra/models/base.py": """\
        import torch


        class Base(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = None

            def _embedding(self, data):
                return data.x

            def _pool(self, x_graph, data):
                if self.proj is None or self.proj.weight.device != data.device:
                    return x_graph
                return x_graph[: x_graph.size(0)]

            def forward(self, data):
                x = self._embedding(data)
                return self._pool(x[x > 0], data)

            def energy_loss(self, pred, data):
                return float(pred.sum())
    """,
    "hydra/models/stack_a.py": """\
        import torch
        from hydra.models.base import Base


        class StackA(Base):
            def _embedding(self, data):
                if torch.any(data.x < 0):
                    raise ValueError("negative")
                return data.x

            def energy_loss(self, pred, data):
                return pred.sum().item()
    """,
    "hydra/models/stack_b.py": """\
        import torch
        from hydra.models.base import Base


        class StackB(Base):
            pass


        class NeverBuilt(Base):
            def _embedding(self, data):
                return data.x[data.x > 0]
    """,
    "hydra/models/create.py": """\
        from hydra.models.stack_a import StackA
        from hydra.models.stack_b import StackB


        def create_model(kind):
            if kind == "a":
                model = StackA()
            else:
                model = StackB()
            return model.to("cpu")
    """,
    "scripts/load.py": """\
        from hydra.models.create import create_model


        def load_config_and_model(path):
            config = {"kind": path}
            model = create_model(config["kind"])
            return model, config
    """,
    "scripts/infer.py": """\
        import torch
        from load import load_config_and_model


        def run(model, loader):
            model = torch.compile(model)
            return [model(batch) for batch in loader]


        def main():
            model, config = load_config_and_model("ckpt")
            run(model, [])
    """,
}


@pytest.fixture
def stacks(tmp_path):
    return write_project(tmp_path / "proj", STACKS)


def test_a_tuple_returning_factory_an_inherited_forward_and_its_hooks(stacks):
    whole = whole_tree_lines(stacks)
    # Base.forward runs compiled for StackA / StackB instances
    assert any(line.startswith("hydra/models/base.py:19:") and "GNN008" in line for line in whole), whole
    # StackA's override of the hook Base.forward calls runs compiled; its loss does not
    assert any(line.startswith("hydra/models/stack_a.py:7:") and "GNN001" in line
               and "`Base.forward` calls `self._embedding`" in line for line in whole), whole
    assert not any(line.startswith("hydra/models/stack_a.py:12:") for line in whole), whole
    # never built by the factory
    assert not any(line.startswith("hydra/models/stack_b.py:11:") for line in whole), whole
    # `x_graph` is a tensor (no GNN016), a batch's `.device` is no tensor (no GNN001)
    assert not any(line.startswith("hydra/models/base.py:13:") for line in whole), whole
    assert not any(line.startswith("hydra/models/base.py:15:") for line in whole), whole


# a readout picked by name through a factory of another file
READOUT = {
    "pyproject.toml": "[project]\nname = 'demo'\n\n[tool.gnnlint]\n",
    "pw/__init__.py": "",
    "pw/utils.py": """\
        from torch_geometric.nn import global_add_pool, global_max_pool


        def get_aggregation(name):
            if name == "max":
                return global_max_pool
            elif name == "sum":
                return global_add_pool
            raise ValueError(name)


        def get_activation(name):
            import torch
            return torch.relu
    """,
    "pw/encoder.py": """\
        import torch
        from pw.utils import get_activation, get_aggregation


        class Encoder(torch.nn.Module):
            def __init__(self, readout):
                super().__init__()
                self.readout = get_aggregation(readout)
                self.act = get_activation("relu")

            def forward(self, x, batch):
                return self.readout(self.act(x), batch)


        model = torch.compile(Encoder("max"))
    """,
}


def test_a_readout_chosen_by_an_imported_factory(tmp_path):
    project = write_project(tmp_path / "proj", READOUT)
    whole = whole_tree_lines(project)
    found = [line for line in whole if line.startswith("pw/encoder.py:12:") and "GNN009" in line]
    assert found and "(`global_add_pool` / `global_max_pool`)" in found[0], whole
    assert finding_lines(run(["check", "pw/encoder.py", "--no-cache"], project).output) == set(found)


# a trainer compiling what a model class holds (`make_fx(model.module)`, `model: Wrapper` annotated)
HELD = {
    "pyproject.toml": "[project]\nname = 'demo'\n\n[tool.gnnlint]\n",
    "sp/__init__.py": "",
    "sp/model.py": """\
        import torch


        class Inner(torch.nn.Module):
            def forward(self, r, cutoff):
                return r[r < cutoff]


        class Unheld(torch.nn.Module):
            def forward(self, r, cutoff):
                return r[r < cutoff]


        class Wrapper(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.module = Inner()
                self.other = Unheld()

            def forward(self, r):
                return self.module(r, 1.0) + self.other(r, 1.0)
    """,
    "sp/trainer.py": """\
        import torch
        from torch.fx.experimental.proxy_tensor import make_fx
        from sp.model import Wrapper


        def compile_model(model: Wrapper, r):
            traced = make_fx(model.module, tracing_mode="symbolic")(r, 1.0)
            model.module = torch.compile(traced, dynamic=True)
    """,
}


def test_a_class_attribute_compiled_through_make_fx_in_another_file(tmp_path):
    project = write_project(tmp_path / "proj", HELD)
    whole = whole_tree_lines(project)
    assert any(line.startswith("sp/model.py:6:") and "GNN008" in line
               and "compiled forward of `Inner`" in line for line in whole), whole
    assert not any(line.startswith("sp/model.py:11:") for line in whole), whole
