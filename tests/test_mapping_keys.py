"""A value read with a string key is a mapping, not a tensor: iterating it
yields its keys (heldout9, brepnet ``train.py``: ``loss, data =
self.model(data)``, then ``for key in loss: self.log(f"Training/{key}",
loss[key])`` -- three GNN013 f-string findings on Python strings). A value
iterated without a string read stays what its source says (a tensor: its
elements are tensors, formatting one syncs)."""
from __future__ import annotations

import textwrap

from gnnlint.engine import LintOptions, lint_bytes
from gnnlint.rules import all_rules

SOURCE = """
import torch
from lightning import LightningModule

class Task(LightningModule):
    def __init__(self, net):
        super().__init__()
        self.model = torch.compile(net)

    def training_step(self, batch, batch_idx):
        loss, data = self.model(batch)
        for key in loss:
            print(f"Training/{key}")
        {READ}
        return data
"""


def _gnn013_lines(read: str) -> list[int]:
    rules = [r for r in all_rules() if r.code == "GNN013"]
    code = textwrap.dedent(SOURCE).replace("{READ}", read)
    opts = LintOptions(codes=frozenset({"GNN013"}))
    return sorted(f.line for f in lint_bytes("example.py", code.encode(), opts, rules=rules).findings)


def test_a_string_keyed_value_iterates_keys():
    assert _gnn013_lines('total = loss["total_loss"]') == []


def test_a_value_without_string_reads_iterates_tensors():
    assert _gnn013_lines("total = loss[0]") == [13]


def test_a_string_read_of_another_binding_says_nothing():
    assert _gnn013_lines('loss = {"total_loss": loss}; total = loss["total_loss"]') == [13]
