"""Precision shapes from real code (s11prec). Flags a project keeps in a batch dict
(semantic/host_flags.py), f-strings of a tensor in
compiled code (GNN001, bench/evidence/e28_fstring_tensor.py): Python values, no graph break.

- ``batch["misc"]["protein_only"]`` tested in a compiled forward, when every store of the key in the
  project (here: the data pipeline in another file) is ``True`` / ``False``: a Python bool, no finding.
  A key the project also stores a tensor under, or never stores, stays a tensor condition.
"""
from __future__ import annotations

from tests.project_files import whole_tree_lines, write_project

MODEL = """\
    import torch


    class Denoiser(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(8, 8)

        def forward(self, batch):
            features = batch["features"]
            x = self.lin(features["x"])
            if not batch["misc"]["protein_only"]:
                x = x + features["lig"]
            if batch["misc"]["{key}"]:
                x = x * 2
            return x


    model = torch.compile(Denoiser())
"""

PIPELINE = """\
    import torch


    def prepare_batch(batch, ligand):
        if ligand is None:
            batch["misc"]["protein_only"] = True
        else:
            batch["misc"]["protein_only"] = False
        batch["misc"]["has_mask"] = {value}
        return batch
"""


def _lines(tmp_path, key, value):
    root = write_project(tmp_path, {"pyproject.toml": "[project]\nname = 'demo'\n",
                                    "demo/__init__.py": "",
                                    "demo/model.py": MODEL.replace("{key}", key),
                                    "demo/data.py": PIPELINE.replace("{value}", value)})
    return {line.split(":")[1] for line in whole_tree_lines(root) if "GNN001" in line}


def test_flag_set_only_to_bools_is_no_tensor_condition(tmp_path):
    # VALID: both keys are only ever set to True / False by the pipeline
    assert _lines(tmp_path, "has_mask", "True") == set()


def test_key_also_holding_a_tensor_stays_a_condition(tmp_path):
    # INVALID: `has_mask` also holds a tensor somewhere; the bool-only `protein_only` is still quiet
    assert _lines(tmp_path, "has_mask", "torch.ones(3, dtype=torch.bool).any()") == {"14"}


def test_key_never_stored_stays_a_condition(tmp_path):
    # INVALID: nothing in the project says what `coords_ok` holds: presumed a tensor, as before
    assert _lines(tmp_path, "coords_ok", "True") == {"14"}


FSTRING = """\
    import torch
    import warnings


    class Block(torch.nn.Module):
        def forward(self, x):
            mask = (x != 0).any(dim=1)
            note = f"{(~mask).sum()} rows are zero"
            warnings.warn(f"Skipping {(~mask).sum()} rows")
            print(f"total {x.sum()}")
            return x * mask[:, None], note


    model = torch.compile(Block())


    def train(loader, opt):
        for batch in loader:
            loss = model(batch)[0].sum()
            loss.backward()
            opt.step()
            desc = f"loss {loss}"
"""


def test_fstring_of_tensor_breaks_nothing_in_compiled_code(tmp_path):
    # VALID lines 8-9 (an f-string is formatted after the graph, e28); INVALID: print (10) still breaks,
    # and the per-step f-string of the loss (22) is still a per-step sync (GNN013)
    root = write_project(tmp_path, {"pyproject.toml": "[project]\nname = 'demo'\n", "block.py": FSTRING})
    found = {(line.split(":")[1], line.split()[1]) for line in whole_tree_lines(root)}
    assert ("10", "GNN001") in found and ("22", "GNN013") in found, found
    assert not {item for item in found if item[0] in ("8", "9") and item[1] == "GNN001"}, found


# A library function compiled only through another file's call (`smooth = torch.compile(raw.smooth)`,
# `raw.smooth` calling `smooth_laplacian(m, n_iter=...)`): its branches behind a parameter whose constant
# default fails the test (`if preserve_features:` with False, `if convergence > 0:` with 0.0) run only for a
# caller that passes it; no compiled call does, so they are not compiled (semantic/optional_inputs.py).
SMOOTHING = """\
    import torch


    def _sharp_vertices(points):
        return torch.where(points.norm(dim=-1) > 1.0)[0]


    def smooth_laplacian(points, n_iter: int = 20, convergence: float = 0.0, preserve_features: bool = False):
        fixed = points.new_zeros(0, dtype=torch.long)
        if preserve_features:
            fixed = _sharp_vertices(points)
        for _ in range(n_iter):
            old = points
            points = points * 0.5
            if convergence > 0:
                if torch.norm(points - old) < convergence:
                    break
        if not preserve_features:
            points = points + 1
        return points, fixed
"""

RAW = """\
    from demo.smoothing import smooth_laplacian


    def smooth(points, n_iter):
        return smooth_laplacian(points, n_iter=n_iter{extra})[0]
"""

COMPILED = """\
    import torch
    from demo import raw

    smooth = torch.compile(raw.smooth)
"""


def _smoothing_lines(tmp_path, extra):
    root = write_project(tmp_path, {"pyproject.toml": "[project]\nname = 'demo'\n",
                                    "demo/__init__.py": "",
                                    "demo/smoothing.py": SMOOTHING,
                                    "demo/raw.py": RAW.replace("{extra}", extra),
                                    "demo/compiled.py": COMPILED})
    return {(line.split(":")[1], line.split()[1]) for line in whole_tree_lines(root)
            if line.startswith("demo/smoothing.py")}


def test_branches_behind_defaults_no_compiled_call_overrides_are_not_compiled(tmp_path):
    # VALID: neither `preserve_features` (False) nor `convergence` (0.0) is passed by the compiled call
    assert _smoothing_lines(tmp_path, "") == set()


def test_a_compiled_call_passing_the_switch_reaches_the_branch(tmp_path):
    # INVALID: the compiled call turns both on: the `torch.where` (5) and the tensor condition (16) run compiled
    found = _smoothing_lines(tmp_path, ", convergence=1e-3, preserve_features=True")
    assert ("5", "GNN008") in found and ("16", "GNN001") in found, found
