"""``torch.allclose`` / ``torch.equal`` of device tensors are syncs
(bench/evidence/e24_bool_comparisons.py), except in test modules, where
they check outputs (``assert torch.allclose(out, ref)``), not a training or
inference path (dev: fairchem ``tests/core/models/test_escn_compiles.py``)."""
from __future__ import annotations

from gnnlint.engine import LintOptions, lint_bytes
from gnnlint.rules import all_rules

SOURCE = b"""
import torch
class Net(torch.nn.Module):
    def forward(self, x):
        if torch.allclose(x, torch.zeros_like(x)):
            return x
        return -x
model = torch.compile(Net())
"""


def _lines(path: str) -> list[int]:
    rules = [r for r in all_rules() if r.code == "GNN001"]
    opts = LintOptions(codes=frozenset({"GNN001"}))
    return sorted(f.line for f in lint_bytes(path, SOURCE, opts, rules=rules).findings)


def test_allclose_in_a_compiled_forward_is_reported():
    assert _lines("pkg/model.py") == [5]


def test_allclose_in_a_test_module_is_a_check():
    assert _lines("tests/test_model.py") == []
    assert _lines("pkg/model_test.py") == []
