"""Shapes from heldout18 (s15h18a): a molecular-dynamics engine whose step is compiled and driven by a
run loop of its own.

1. ``super().refill(batch)`` in an override the step loop calls: the base's body runs every step too.
2. ``for code, stage in self.stages`` over a parameter annotated ``list[tuple[int, Stage]]`` (or
   ``for name, head in heads.items()`` over ``dict[str, Head]``): the items' class is the annotation's.
3. ``torch.compile(sim.run)`` where ``run`` comes from an imported base class: the base's ``run`` is
   compiled, and the methods it calls on ``self``.

Each shape is tested in two spellings (another file layout, another name, a method instead of a
function), and with the variant that must stay quiet.
"""
from __future__ import annotations

from tests.project_files import finding_keys

PYPROJECT = "[project]\nname = 'demo'\n\n[tool.gnnlint]\n"

# -- 1. `super().refill(batch)` in a method the step loop calls -----------------------------------------
BASE = """
import torch


class Base:
    def __init__(self, model):
        self.model = model

    def refill(self, batch):
        done = batch.status > 3
        if done.any():
            return batch
        return int(batch.sizes[done].sum())
"""
FUSED = """
import torch
from demo.base import Base


class Fused(Base):
    def __init__(self, model):
        super().__init__(model)
        self._compiled = torch.compile(self._step_impl)

    def _step_impl(self, batch):
        return self.model(batch)

    def refill(self, batch):
        out = SUPER.refill(batch)
        return out

    def run(self, batch, n):
        for i in range(n):
            batch = self._compiled(batch)
            if i % 10 == 0:
                batch = self.refill(batch)
        return batch
"""


def _refill(tmp_path, base_here: bool, spelled: str = "super()") -> list:
    fused = FUSED.replace("SUPER", spelled)
    if base_here:  # the base in the same file as the loop
        fused = BASE + fused.replace("from demo.base import Base\n", "").replace("import torch\n", "", 1)
        return finding_keys(tmp_path, {"pyproject.toml": PYPROJECT, "demo/__init__.py": "", "demo/fused.py": fused})
    return finding_keys(tmp_path, {"pyproject.toml": PYPROJECT, "demo/__init__.py": "", "demo/fused.py": fused,
                                   "demo/base.py": BASE})


def test_super_call_in_a_per_step_override_runs_the_base_every_step(tmp_path):
    assert _refill(tmp_path, True) == ["demo/fused.py:11:12: GNN013", "demo/fused.py:13:16: GNN013"]


def test_super_with_arguments_in_a_per_step_override(tmp_path):
    assert _refill(tmp_path, True, "super(Fused, self)") == ["demo/fused.py:11:12: GNN013",
                                                            "demo/fused.py:13:16: GNN013"]


def test_a_base_that_only_runs_eagerly_once_stays_quiet(tmp_path):
    # the override is never called from the step loop: the base's syncs run once, after it
    fused = FUSED.replace("SUPER", "super()").replace("                batch = self.refill(batch)\n",
                                                      "                pass\n")
    fused = BASE + fused.replace("from demo.base import Base\n", "").replace("import torch\n", "", 1) + \
        "\n\ndef main(f, b):\n    b = f.run(b, 100)\n    return f.refill(b)\n"
    assert finding_keys(tmp_path, {"pyproject.toml": PYPROJECT, "demo/__init__.py": "", "demo/fused.py": fused}) \
        == []


# -- 2. loop targets unpacked from annotated containers ---------------------------------------------------
STAGES = """
import torch


class Stage:
    def masked_update(self, batch, mask):
        keep = batch.pos[mask]
        return keep


class Pipeline:
    def __init__(self, stages: list[tuple[int, Stage]]):
        self.stages = stages
        self._fn = torch.compile(self._impl)

    def _impl(self, batch):
        for code, stage in self.stages:
            stage.masked_update(batch, batch.status == code)
        return batch

    def run(self, batch):
        return self._fn(batch)
"""
HEADS = """
from typing import Dict, List, Optional, Tuple

import torch


class Head:
    def select(self, x, keep):
        return x[keep]


class Model(torch.nn.Module):
    def __init__(self, heads: Optional[Dict[str, Head]] = None):
        super().__init__()
        self.heads = heads

    def forward(self, x):
        out = []
        for name, head in self.heads.items():
            out.append(head.select(x, x > 0))
        return out


def apply(x, pairs: "List[Tuple[str, Head]]"):
    for name, head in pairs:
        x = head.select(x, x > 1)
    return x
"""


def test_tuple_items_of_a_stored_list_parameter(tmp_path):
    assert finding_keys(tmp_path, {"pyproject.toml": PYPROJECT, "demo/__init__.py": "", "demo/stages.py": STAGES}) \
        == ["demo/stages.py:7:16: GNN008"]


def test_the_wrong_tuple_position_is_not_the_class(tmp_path):
    # `for stage, code in self.stages` over `list[tuple[int, Stage]]`: `stage` is the int
    src = STAGES.replace("for code, stage in", "for stage, code in")
    assert finding_keys(tmp_path, {"pyproject.toml": PYPROJECT, "demo/__init__.py": "", "demo/stages.py": src}) == []


def test_values_of_a_stored_dict_parameter(tmp_path):
    assert finding_keys(tmp_path, {"pyproject.toml": PYPROJECT, "demo/__init__.py": "",
                                   "demo/heads.py": HEADS + "\nmodel = torch.compile(Model())\n"}) \
        == ["demo/heads.py:9:16: GNN008"]


def test_tuple_items_of_a_string_annotated_parameter(tmp_path):
    assert finding_keys(tmp_path, {"pyproject.toml": PYPROJECT, "demo/__init__.py": "",
                                   "demo/heads.py": HEADS + "\nfn = torch.compile(apply)\n"}) \
        == ["demo/heads.py:9:16: GNN008"]


def test_keys_of_a_dict_parameter_are_not_the_class(tmp_path):
    src = HEADS.replace("for name, head in self.heads.items():\n            out.append(head.select(x, x > 0))",
                        "for head, name in self.heads.items():\n            out.append(head.select(x, x > 0))")
    assert finding_keys(tmp_path, {"pyproject.toml": PYPROJECT, "demo/__init__.py": "",
                                   "demo/heads.py": src + "\nmodel = torch.compile(Model())\n"}) == []


# -- 3. `torch.compile(sim.run)` with `run` from an imported base ------------------------------------------
DYNAMICS = """
import torch


class Dynamics:
    def __init__(self, model, n_steps=10):
        self.model = model
        self.n_steps = n_steps

    def step(self, batch):
        mask = batch.status < 2
        moved = batch.pos[mask]
        batch.pos = self.update(batch, moved)
        return batch

    def update(self, batch, moved):
        return batch.pos

    def run(self, batch, n_steps=None):
        for _ in range(n_steps or self.n_steps):
            batch = self.step(batch)
        return batch

    def describe(self, batch):
        return batch.pos[batch.status > 0]
"""
LANGEVIN = """
from .base import Dynamics


class Langevin(Dynamics):
    def update(self, batch, moved):
        return batch.pos + 0.1
"""
SCRIPT = """
import torch
from demo import Langevin


def simulate(batch, model):
    sim = Langevin(model, n_steps=300)
    compiled_run = torch.compile(sim.METHOD)
    return compiled_run(batch)
"""
RUNNER = """
import torch
from demo.base import Dynamics


class Relax(Dynamics):
    def update(self, batch, moved):
        return batch.pos * 0.5


class Runner:
    def __init__(self, model):
        self.engine = Relax(model)
        self.fast = torch.compile(self.engine.run)

    def go(self, batch):
        return self.fast(batch, n_steps=100)
"""


def _dynamics(tmp_path, files: dict) -> list:
    return finding_keys(tmp_path, {"pyproject.toml": PYPROJECT, "demo/base.py": DYNAMICS, **files})


def test_compiled_bound_method_of_an_imported_subclass_compiles_the_base_method(tmp_path):
    assert _dynamics(tmp_path, {"demo/__init__.py": "from .integrators import Langevin\n",
                                "demo/integrators.py": LANGEVIN,
                                "run.py": SCRIPT.replace("METHOD", "run")}) == ["demo/base.py:12:17: GNN008"]


def test_compiled_bound_method_of_a_local_subclass_held_on_self(tmp_path):
    assert _dynamics(tmp_path, {"demo/__init__.py": "", "demo/runner.py": RUNNER}) == ["demo/base.py:12:17: GNN008"]


def test_only_the_compiled_method_and_its_callees_are_compiled(tmp_path):
    # `describe` is compiled, `run` / `step` are not
    assert _dynamics(tmp_path, {"demo/__init__.py": "from .integrators import Langevin\n",
                                "demo/integrators.py": LANGEVIN,
                                "run.py": SCRIPT.replace("METHOD", "describe")}) == ["demo/base.py:25:16: GNN008"]
