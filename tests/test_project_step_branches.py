"""Branches the compiled per-step path never takes are not per-step code.

- A class compiling what it holds under a flag (``if compile and ...:``) that
  also switches code with that flag (``self._direct = direct or compile``):
  the legacy branch (``if not self._direct`` / the ``else`` of ``if
  self._direct and ...``) never runs with the compiled model
  (semantic/compile_flags.py).
"""
from __future__ import annotations

from tests.project_files import finding_lines, run, write_project

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
    whole = finding_lines(run(["check", ".", "--no-cache"], write_project(tmp_path / "proj", files)).output)
    return sorted(int(line.split(":")[1]) for line in whole if line.startswith("demo/graph.py:") and "GNN013" in line)


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
