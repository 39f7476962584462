"""``out = self(batch)`` in a per-step method runs the module's ``forward``
every step (``nn.Module.__call__``): a LightningModule's ``predict_step``
calling ``self(...)`` makes the forward per-step code (heldout4, boltz
``boltz2.py:622``: ``argsort[0].item()`` in the forward's affinity branch,
on every prediction batch of a model with a compiled submodule)."""
from __future__ import annotations

import textwrap

from gnnlint.engine import LintOptions, lint_bytes
from gnnlint.rules import all_rules

SOURCE = """
import torch
from lightning import LightningModule

class Model(LightningModule):
    def __init__(self, head):
        super().__init__()
        self.head = torch.compile(head)

    def forward(self, batch):
        scores = self.head(batch["x"])
        best = torch.argsort(scores, descending=True)[0].item()
        return scores[best]

    def predict_step(self, batch, batch_idx):
        return {CALL}
"""


def _gnn013_lines(call: str) -> list[int]:
    rules = [r for r in all_rules() if r.code == "GNN013"]
    code = textwrap.dedent(SOURCE).replace("{CALL}", call)
    opts = LintOptions(codes=frozenset({"GNN013"}))
    return sorted(f.line for f in lint_bytes("example.py", code.encode(), opts, rules=rules).findings)


def test_self_call_in_a_step_hook_runs_the_forward_every_step():
    assert _gnn013_lines("self(batch)") == [12]


def test_a_step_hook_that_does_not_call_the_module_leaves_the_forward_alone():
    assert _gnn013_lines("batch") == []
