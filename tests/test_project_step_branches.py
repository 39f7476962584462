"""Branches the compiled per-step path never takes are not per-step code.

- A class compiling what it holds under a flag (``if compile and ...:``) that
  also switches code with that flag (``self._direct = direct or compile``):
  the legacy branch (``if not self._direct`` / the ``else`` of ``if
  self._direct and ...``) never runs with the compiled model
  (semantic/compile_flags.py).
- A helper another file calls every step, under a test of a parameter that
  every per-step call leaves at a value failing it (``if max_neighbors > 0:``
  with the default 0, also forwarded through a helper in a third file): the
  lines there are not per step, nor the calls made there (semantic/step_args.py).
"""
from __future__ import annotations

import pytest

from tests.project_files import assert_one_file_agrees, finding_rows, write_project

CALCULATOR = """\
    import torch
    from ase.calculators.calculator import Calculator

    from demo.graph import build_direct, build_legacy


    class Potential(torch.nn.Module):
        def __init__(self, model, name):
            super().__init__()
            self.model = model
            self.name = name

        def forward(self, input):
            return self.model.forward(input)


    class Calc(Calculator):
        def __init__(self, potential: Potential, direct: bool = False, compile: bool = False, **kwargs):
            Calculator.__init__(self, **kwargs)
            self.potential = potential
            self._direct = direct or compile
            if compile and self.potential.name == "m3gnet":
                self.potential.model.forward = torch.compile(self.potential.model.forward)

        def calculate(self, atoms=None, properties=None, system_changes=None):
            Calculator.calculate(self, atoms)
            pos = torch.tensor(atoms.get_positions(), device="cuda")
            if self._direct and self.potential.name == "m3gnet":
                graph = build_direct(pos)
            else:
                graph = build_legacy(pos)
            result = self.potential.forward(graph)
            self.results.update(energy=result["energy"].detach().cpu().numpy()[0])
"""

GRAPH = """\
    import torch


    def build_direct(pos):
        n_edges = int((torch.cdist(pos, pos) < 5.0).sum())
        return {"pos": pos, "n": n_edges}


    def build_legacy(pos):
        count = pos.sum().item()
        return {"pos": pos, "n": count}
"""

PROJECT = {
    "pyproject.toml": "[project]\nname = 'demo'\n\n[tool.gnnlint]\n",
    "demo/__init__.py": "",
    "demo/calculator.py": CALCULATOR,
    "demo/graph.py": GRAPH,
}


def _graph_lines(files: dict, tmp_path) -> list[int]:
    return finding_rows(tmp_path / "proj", "demo/graph.py", "GNN013", files)


def test_the_branch_the_compile_flag_switches_off_is_not_per_step(tmp_path):
    assert _graph_lines(PROJECT, tmp_path) == [5]  # build_direct's sync; build_legacy never runs compiled


def test_without_the_flag_in_the_switch_both_branches_are_per_step(tmp_path):
    files = dict(PROJECT, **{"demo/calculator.py": CALCULATOR.replace("direct or compile", "direct")})
    assert _graph_lines(files, tmp_path) == [5, 10]


def test_a_negated_switch_and_an_early_return(tmp_path):
    calc = CALCULATOR.replace(
        """            if self._direct and self.potential.name == "m3gnet":
                graph = build_direct(pos)
            else:
                graph = build_legacy(pos)
""",
        """            if not self._direct:
                self.results.update(energy=build_legacy(pos)["n"])
                return
            graph = build_direct(pos)
""")
    assert _graph_lines(dict(PROJECT, **{"demo/calculator.py": calc}), tmp_path) == [5]


def test_an_unconditional_compile_keeps_both_branches(tmp_path):
    calc = CALCULATOR.replace('if compile and self.potential.name == "m3gnet":', "if True:")
    assert _graph_lines(dict(PROJECT, **{"demo/calculator.py": calc}), tmp_path) == [5, 10]


STEP = """\
    import torch
    from ase.calculators.calculator import Calculator

    from demo.build import build_graph


    class Calc(Calculator):
        def __init__(self, model, **kwargs):
            Calculator.__init__(self, **kwargs)
            self.model = torch.compile(model)

        def calculate(self, atoms=None, properties=None, system_changes=None):
            Calculator.calculate(self, atoms)
            pos = torch.tensor(atoms.get_positions(), device="cuda")
            result = self.model(build_graph(pos))
            self.results.update(energy=result.detach().cpu().numpy()[0])
"""

BUILD = """\
    from demo.neighbors import radius_graph


    def build_graph(pos, max_neighbors: int = 0):
        return radius_graph(pos, 5.0, max_neighbors=max_neighbors)
"""

NEIGHBORS = """\
    import torch


    def limit_neighbors(index, max_neighbors):
        most = int(torch.bincount(index).max().item())
        return index[:max_neighbors], most


    def radius_graph(pos, cutoff, max_neighbors=-1):
        index = (torch.cdist(pos, pos) < cutoff).nonzero()[:, 0]
        if max_neighbors > 0:
            index, _ = limit_neighbors(index, max_neighbors)
            if not torch.all(index >= 0):
                index = index.clamp(min=0)
        return index
"""

STEP_PROJECT = {
    "pyproject.toml": PROJECT["pyproject.toml"],
    "demo/__init__.py": "",
    "demo/calculator.py": STEP,
    "demo/build.py": BUILD,
    "demo/neighbors.py": NEIGHBORS,
}


def _neighbor_lines(files: dict, tmp_path) -> list[int]:
    return finding_rows(tmp_path / "proj", "demo/neighbors.py", "GNN013", files)


def test_a_branch_no_per_step_call_takes_is_not_per_step(tmp_path):
    assert _neighbor_lines(STEP_PROJECT, tmp_path) == []


def test_a_per_step_call_passing_a_value_that_takes_it(tmp_path):
    files = dict(STEP_PROJECT, **{"demo/calculator.py": STEP.replace("build_graph(pos)", "build_graph(pos, 8)")})
    assert _neighbor_lines(files, tmp_path) == [5, 13]


def test_a_value_the_forwarding_helper_cannot_read_keeps_the_branch(tmp_path):
    build = BUILD.replace("max_neighbors=max_neighbors", "max_neighbors=max_neighbors + len(pos)")
    assert _neighbor_lines(dict(STEP_PROJECT, **{"demo/build.py": build}), tmp_path) == [5, 13]


def test_a_local_caller_keeps_the_branch(tmp_path):
    neighbors = NEIGHBORS + """\


    def dense(pos):
        return radius_graph(pos, 5.0, max_neighbors=32)
"""
    assert _neighbor_lines(dict(STEP_PROJECT, **{"demo/neighbors.py": neighbors}), tmp_path) == [5, 13]


@pytest.mark.parametrize("files", [PROJECT, STEP_PROJECT], ids=["compile-flag", "step-args"])
def test_one_file_agrees_with_the_whole_tree(tmp_path, files):
    root = write_project(tmp_path / "proj", files)
    for name in sorted(n for n in files if n.endswith(".py")):
        assert_one_file_agrees(root, name)
