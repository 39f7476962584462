"""Flags a project keeps in a batch dict (semantic/host_flags.py) and f-strings of a tensor in
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
