"""A training loop calls a method of a project object every step
(``self.flow.get_weight(out)``, the attribute annotated with the base class a
package's ``__init__.py`` re-exports); the base's method raises
NotImplementedError and the syncs sit in the subclasses' overrides in other
files (heldout8's BasicTS task flows). Each override -- also one of a subclass of
a subclass, in a third file -- runs per step; a class of another lineage with a
method of the same name does not, nor does anything when the model is not
compiled."""
from __future__ import annotations

from tests.project_files import assert_one_file_agrees, whole_tree_lines, write_project

PROJECT = {
    "pyproject.toml": "[project]\nname = 'demo'\n\n[tool.gnnlint]\n",
    "demo/__init__.py": "",
    "demo/flows/__init__.py": """\
        from .base import BaseFlow
        from .forecast import ForecastFlow
    """,
    "demo/flows/base.py": """\
        class BaseFlow:
            def get_weight(self, out):
                raise NotImplementedError


        class MeanFlow(BaseFlow):
            def get_weight(self, out):
                return out["mask"].float().mean().item()
    """,
    "demo/flows/forecast.py": """\
        from .base import BaseFlow


        class ForecastFlow(BaseFlow):
            def get_weight(self, out):
                return out["mask"].sum().item()
    """,
    "demo/flows/masked.py": """\
        from .forecast import ForecastFlow


        class MaskedFlow(ForecastFlow):
            def get_weight(self, out):
                return out["mask"].sum().item() / 2


        class Unrelated:
            def get_weight(self, out):
                return out["mask"].sum().item()
    """,
    "demo/runner.py": """\
        import torch
        from .flows import BaseFlow


        class Runner:
            def __init__(self, cfg, loader):
                self.model = torch.compile(cfg.model())
                self.flow: BaseFlow = cfg.flow
                self.loader = loader

            def train(self):
                for data in self.loader:
                    out = self.model(data)
                    out["loss"].backward()
                    weight = self.flow.get_weight(out)
    """,
}


def test_the_overrides_of_a_per_step_base_method_run_per_step(tmp_path):
    root = write_project(tmp_path, PROJECT)
    lines = sorted(whole_tree_lines(root))
    assert [line.split(" ")[0:2] for line in lines] == [
        ["demo/flows/base.py:8:16:", "GNN013"], ["demo/flows/forecast.py:6:16:", "GNN013"],
        ["demo/flows/masked.py:6:16:", "GNN013"]], lines
    assert "training loop (runner.py, through `self.flow.get_weight`)" in lines[1], lines
    assert_one_file_agrees(root, "demo/flows/forecast.py", nonempty=True, cached=1)


def test_without_the_compile_nothing(tmp_path):
    files = dict(PROJECT)
    files["demo/runner.py"] = PROJECT["demo/runner.py"].replace("torch.compile(cfg.model())", "cfg.model()")
    root = write_project(tmp_path, files)
    assert not whole_tree_lines(root)
