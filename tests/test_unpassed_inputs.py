"""semantic/unpassed_inputs.py: an optional ``forward`` input no call of the
class passes is None -- its truth test reads no tensor, a branch needing it
never runs compiled (heldout10 IMMUVIS-PIGVAE ``SimplePermuter.forward(...,
labels=None)``: the owner's ``self.permuter(...)`` never gives ``labels``).
The input a call does give (``weights=w``) keeps its findings."""
from __future__ import annotations

from tests.project_files import whole_tree_lines, write_project

SOURCE = '''\
import torch
import torch.nn.functional as F


class Permuter(torch.nn.Module):
    def __init__(self, use_ce):
        super().__init__()
        self.use_ce = use_ce
        self.fc = torch.nn.Linear(4, 4)

    def forward(self, x, tau: float, hard: bool = False, labels: torch.Tensor | None = None,
                weights: torch.Tensor | None = None):
        scores = self.fc(x)
        loss = None
        if self.use_ce and labels:
            loss = F.cross_entropy(scores, labels)
        if labels is not None:
            print(labels.sum().item())
        if weights is not None:
            print(weights.sum().item())
        if weights:
            scores = scores * 2
        return scores, loss


class AE(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.permuter = Permuter(False)

    def forward(self, x, w):
        out, _ = self.permuter(x, tau=1.0, hard=not self.training, weights=w)
        return out


model = torch.compile(AE())
'''


def _lines(tmp_path, source):
    root = write_project(tmp_path / "proj", {"m.py": source})
    found = whole_tree_lines(root, "--select", "GNN001")
    return {int(line.split(":")[1]) for line in found}, found


def test_an_input_no_call_passes_is_none(tmp_path):
    lines, found = _lines(tmp_path, SOURCE)
    assert 15 not in lines and 18 not in lines, found  # `labels`: never given
    assert 20 in lines and 21 in lines, found  # `weights`: the owner passes it


def test_an_input_one_call_passes_keeps_its_findings(tmp_path):
    lines, found = _lines(tmp_path, SOURCE.replace("weights=w)", "weights=w, labels=x.argmax(-1))"))
    assert {15, 18, 20, 21} <= lines, found


# s12prec (heldout14 Waymo-GNN `use_per_agent_tracking = (agent_ids is not None and batch is not None)`,
# then `if use_per_agent_tracking: batch.cpu()`): a local flag bound once to a test of the input.
FLAGGED = SOURCE.replace('''        if labels is not None:
            print(labels.sum().item())''', '''        track = labels is not None and x is not None
        if track:
            print(labels.sum().item())
        plain = not (weights is None)
        if plain:
            print(weights.sum().item())
        skip = labels is None
        if not skip:
            print(labels.sum().item())''')


def test_a_local_flag_testing_an_input_no_call_passes(tmp_path):
    lines, found = _lines(tmp_path, FLAGGED)
    assert 19 not in lines and 25 not in lines, found  # flags needing `labels`: never given
    assert 22 in lines, found  # the flag needing `weights`, which the owner passes


def test_a_flag_rebound_after_its_test_keeps_the_finding(tmp_path):
    source = FLAGGED.replace("        if track:\n", "        track = x.sum() > 0\n        if track:\n")
    lines, found = _lines(tmp_path, source)
    assert 20 in lines, found
