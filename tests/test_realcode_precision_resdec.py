"""heldout15 ResDec-MHE false findings (s13h15), as general shapes.

- GNN007 of submodules compiled next to a ``dynamic=True`` sibling: the sibling is evidence that
  the method's per-call inputs change size only when it runs on the same path and on values of
  the same parameter. Not when it runs under an optional flag of the method (``if
  return_attention and self.use_cells:``), not when its output (also unpacked, ``emb, attn =
  self.cells(x)``) is what the submodule gets, and not when the two read different parameters
  (``self.pathology_encoder(pathology)`` beside ``self.cells(cell_data)``);
- GNN008 (and every finding) in the forward of a model a script compiles but only ever runs
  through ``getattr(model, "_orig_mod", model)`` / ``model._orig_mod`` -- the original, eager
  module -- in the local functions it hands the compiled wrapper to.
"""
from __future__ import annotations

from pathlib import Path

from tests.project_files import finding_lines, run, write_project

PYPROJECT = "[project]\nname = 'demo'\n\n[tool.gnnlint]\n"


def _lines(tmp_path: Path, files: dict, code: str) -> set:
    write_project(tmp_path, {"pyproject.toml": PYPROJECT, **files})
    out = finding_lines(run(["check", ".", "--no-cache", "--output-format", "concise"], tmp_path).output)
    return {":".join(line.split(":")[:2]) + " " + code for line in out if f" {code}" in line}


MODEL = """\
    import torch


    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.cells = torch.nn.Linear(8, 8)
            self.cells = torch.compile(self.cells, dynamic=True)
            self.head = torch.nn.Linear(8, 1)
            self.head = torch.compile(self.head)

        def forward(self, cell_data, pathology, return_attention=False):
            BODY
"""


def _model(body: str) -> dict:
    return {"model.py": MODEL.replace("BODY", body.replace("\n", "\n            "))}


def test_a_dynamic_sibling_on_the_same_parameter_is_evidence(tmp_path: Path):
    # INVALID: both read `cell_data` on every call (the wheatley shape, another spelling)
    found = _lines(tmp_path, _model("emb = self.cells(cell_data)\nreturn emb + self.head(cell_data[:, :8])"), "GNN007")
    assert found == {"model.py:10 GNN007"}, found


def test_a_dynamic_sibling_that_is_no_evidence(tmp_path: Path):
    bodies = {
        # run only when an optional flag is set
        "flag": "if return_attention and self.training:\n    print(self.cells(cell_data))\n"
                "return self.head(cell_data[:, :8])",
        # its (unpacked) output is what the submodule gets
        "output": "emb, attn = self.cells(cell_data)\nreturn self.head(emb)",
        # another parameter
        "parameter": "emb = self.cells(cell_data)\nreturn emb.sum() + self.head(pathology)",
    }
    for name, body in bodies.items():
        found = _lines(tmp_path / name, _model(body), "GNN007")
        assert found == set(), (name, found)


SCRIPT = """\
    import torch
    from demo.model import Big


    def _resolve(model):
        return getattr(model, "_orig_mod", model)


    def search(model, batch):
        inner = UNWRAP
        return inner.encode(batch)


    def main(batch, no_compile=False):
        model = Big()
        if not no_compile:
            model = torch.compile(model)
        return search(model, batch)
"""
BIG = """\
    import torch


    class Big(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(4, 4)

        def encode(self, x):
            return self.lin(x)

        def forward(self, x, mask):
            idx = mask.nonzero()
            return self.lin(x[idx])
"""


def test_a_compiled_model_only_run_unwrapped(tmp_path: Path):
    for i, unwrap in enumerate(("_resolve(model)", "model._orig_mod")):
        files = {"demo/__init__.py": "", "demo/model.py": BIG, "demo/run.py": SCRIPT.replace("UNWRAP", unwrap)}
        found = _lines(tmp_path / str(i), files, "GNN008")
        assert found == set(), (unwrap, found)


def test_a_compiled_model_run_as_well_as_unwrapped(tmp_path: Path):
    # INVALID twin: `search` also runs the wrapper itself
    files = {"demo/__init__.py": "", "demo/model.py": BIG,
             "demo/run.py": SCRIPT.replace("UNWRAP", "_resolve(model)").replace(
                 "return inner.encode(batch)", "return inner.encode(batch) + model(batch, batch > 0)")}
    found = _lines(tmp_path, files, "GNN008")
    assert found == {"demo/model.py:13 GNN008"}, found
