"""A compile assigned to a held object's method (``self.potential.model.forward
= torch.compile(self.potential.model.forward)``) compiles the module the held
object's class calls (semantic/holders.py): an ASE calculator whose
``calculate()`` runs that class then drives compiled code every MD step, and
so do the helpers it calls every step in other files (graph building,
neighbour search: their syncs of device tensors are per-step syncs, named
with the framework's step and the call that reaches them)."""
from __future__ import annotations

import pytest

from tests.project_files import whole_tree_lines, write_project

POTENTIAL = """\
    import torch
    from ase.calculators.calculator import Calculator


    class Potential(torch.nn.Module):
        def __init__(self, model):
            super().__init__()
            self.model = model

        @classmethod
        def from_checkpoint(cls, path):
            return cls(torch.load(path))

        def forward(self, input):
            return self.model.forward(input)


    class Calc(Calculator):
        def __init__(self, potential: Potential = None, compile: bool = False, **kwargs):
            Calculator.__init__(self, **kwargs)
            if potential is None:
                self.potential = Potential.from_checkpoint("m.pt")
            else:
                self.potential = potential
            if compile:
                self.potential.model.forward = torch.compile(self.potential.model.forward)

        def calculate(self, atoms=None, properties=None, system_changes=None):
            Calculator.calculate(self, atoms)
            from demo.graph import build_graph

            pos = torch.tensor(atoms.get_positions(), device="cuda")
            result = self.potential.forward(build_graph(pos))
            self.results.update(energy=result["energy"].detach().cpu().numpy()[0])
"""

GRAPH = """\
    import torch


    def build_graph(pos):
        dist = torch.cdist(pos, pos)
        n_edges = int((dist < 5.0).sum())
        host = pos.cpu().numpy()  # the positions leave the device every step
        return {"pos": pos, "n": n_edges}


    def unused(pos):
        return pos.sum().item()
"""

PROJECT = {
    "pyproject.toml": "[project]\nname = 'demo'\n\n[tool.gnnlint]\n",
    "demo/__init__.py": "",
    "demo/calculator.py": POTENTIAL,
    "demo/graph.py": GRAPH,
}


@pytest.fixture
def project(tmp_path):
    return write_project(tmp_path / "proj", PROJECT)


def test_method_assignment_compile_makes_calculate_drive_compiled_code(project):
    whole = whole_tree_lines(project)
    calc = [line for line in whole if line.startswith("demo/calculator.py:") and "GNN013" in line]
    assert [int(line.split(":")[1]) for line in calc] == [34], whole
    assert "GNN013" in calc[0] and "ASE calls `Calc.calculate` once per MD / optimisation step" in calc[0], calc
    assert "compiled `self.potential.model.forward`" in calc[0], calc


def test_helpers_called_every_calculate_step_carry_per_step_syncs(project):
    whole = whole_tree_lines(project)
    graph = [line for line in whole if line.startswith("demo/graph.py:")]
    assert sorted(int(line.split(":")[1]) for line in graph) == [6, 7], whole
    for line in graph:
        assert "GNN013" in line and "every step (ASE calls `Calc.calculate` once per MD / optimisation step; " \
            "calculator.py, through `build_graph`)" in line, line


def test_no_compile_no_finding(tmp_path):
    files = dict(PROJECT)
    files["demo/calculator.py"] = POTENTIAL.replace(
        "self.potential.model.forward = torch.compile(self.potential.model.forward)", "pass")
    whole = whole_tree_lines(write_project(tmp_path / "proj", files))
    assert not [line for line in whole if "GNN013" in line or "GNN001" in line], whole


def test_the_compiled_holder_is_fed_the_calculators_structures(project):
    """GNN007: the compile site is fed what `calculate()` builds from each step's atoms
    (through `self.potential.forward`), not what other users of `Potential` feed it."""
    whole = whole_tree_lines(project)
    site = [line for line in whole if line.startswith("demo/calculator.py:26:") and "GNN007" in line]
    assert len(site) == 1 and "ASE structures" in site[0] and "`Calc.calculate()`" in site[0], whole


LAMMPS = """\
    import torch
    from lammps.mliap.mliap_unified_abc import MLIAPUnified


    class Wrapper(MLIAPUnified):
        def __init__(self, model):
            self.model = torch.compile(model)

        def compute_forces(self, data):
            if data.nlocal == 0:  # a LAMMPS count: a host int
                return
            rij = torch.as_tensor(data.rij, device="cuda")
            energy = self.model(rij)
            data.energy = energy.item()
"""


def test_lammps_mliap_compute_forces_is_a_per_step_entry(tmp_path):
    files = {"pyproject.toml": PROJECT["pyproject.toml"], "demo/__init__.py": "", "demo/mliap.py": LAMMPS}
    whole = whole_tree_lines(write_project(tmp_path / "proj", files))
    syncs = [line for line in whole if "GNN013" in line]
    assert [int(line.split(":")[1]) for line in syncs] == [14], whole
    assert "LAMMPS calls `Wrapper.compute_forces` once per MD step" in syncs[0], syncs
    assert any("GNN007" in line and "LAMMPS structures" in line for line in whole), whole
