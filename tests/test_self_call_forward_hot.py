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


TUPLE_SOURCE = """
import torch
import torch.nn.functional as F
from lightning import LightningModule

class Task(LightningModule):
    def __init__(self, net):
        super().__init__()
        self.net = torch.compile(net)

    def forward(self, batch):
        pred, vec = self.net(batch.x, batch.edge_index)
        {RETURN}

    def training_step(self, batch, batch_idx):
        loss_mse, loss_vec = self(batch)
        self.log("mse", float(loss_mse))
        return loss_mse + loss_vec
"""


def _tuple_lines(ret: str) -> list[int]:
    rules = [r for r in all_rules() if r.code == "GNN013"]
    code = textwrap.dedent(TUPLE_SOURCE).replace("{RETURN}", ret)
    opts = LintOptions(codes=frozenset({"GNN013"}))
    return sorted(f.line for f in lint_bytes("example.py", code.encode(), opts, rules=rules).findings)


def test_an_element_unpacked_from_self_call_has_the_kind_the_forward_returns():
    # `loss_mse, loss_vec = self(batch)`: the forward returns two tensors (3D-GSRD trainer_qm9.py:88)
    assert _tuple_lines("return F.mse_loss(pred, batch.y), vec.norm(dim=-1).mean()") == [17]


def test_an_element_the_forward_returns_as_a_python_value_stays_unflagged():
    assert _tuple_lines("return len(pred), vec.mean()") == []
