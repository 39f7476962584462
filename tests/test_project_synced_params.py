"""A project helper copies the tensor it is handed to the host (``def
to_numpy(t): return t.cpu().detach().numpy()``, in another file); an ASE
calculator that compiles its model calls it on the model's outputs in
``calculate()``, once per MD step (heldout12's cace). Each call site is a
per-step sync, not only the helper's body. A helper that copies something
else (a rebound parameter) or copies on the side (not what it returns), a
call on a host value, and the same project without the compile report
nothing at the call sites."""
from __future__ import annotations

from tests.project_files import whole_tree_lines, write_project

PROJECT = {
    "pyproject.toml": "[project]\nname = 'demo'\n\n[tool.gnnlint]\n",
    "demo/__init__.py": "",
    "demo/tools.py": """\
        import numpy as np
        import torch


        def to_numpy(t: torch.Tensor) -> np.ndarray:
            return t.cpu().detach().numpy()


        def shape_of(t):
            t = np.asarray(t.shape)
            return t.tolist()


        def build_graph(pos):
            host = pos.cpu()  # a copy on the side: reported here, not where the helper is called
            return {"pos": pos, "n": len(host)}
    """,
    "demo/calc.py": """\
        import numpy as np
        import torch
        from ase.calculators.calculator import Calculator, all_changes

        from demo.tools import build_graph, shape_of, to_numpy


        class Calc(Calculator):
            def __init__(self, model, **kwargs):
                Calculator.__init__(self, **kwargs)
                self.model = torch.compile(model, dynamic=True)

            def calculate(self, atoms=None, properties=None, system_changes=all_changes):
                Calculator.calculate(self, atoms)
                out = self.model(build_graph(self.pos_of(atoms)))
                energy = to_numpy(out["energy"])
                forces = to_numpy(out["forces"])
                dims = shape_of(out["forces"])
                cell = to_numpy(np.asarray(atoms.cell))
                self.results = {"energy": energy, "forces": forces, "dims": dims, "cell": cell}
    """,
}


def test_call_sites_of_a_syncing_helper_in_calculate_are_per_step_syncs(tmp_path):
    root = write_project(tmp_path, PROJECT)
    lines = whole_tree_lines(root)
    calc = {line.split(":")[1] for line in lines if line.startswith("demo/calc.py") and "GNN013" in line}
    assert calc == {"16", "17"}, lines


def test_without_the_compile_no_call_site(tmp_path):
    files = dict(PROJECT)
    files["demo/calc.py"] = PROJECT["demo/calc.py"].replace(
        "self.model = torch.compile(model, dynamic=True)", "self.model = model")
    root = write_project(tmp_path, files)
    assert not {line for line in whole_tree_lines(root) if line.startswith("demo/calc.py")}
