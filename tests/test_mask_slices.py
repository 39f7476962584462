"""A boolean mask stays one through basic slicing (``pp_mask = knn_mask[:, :n, :n]``,
a view of the same booleans), and a ``*mask*`` field read from a dict batch
(``pad_mask = batch["features"]["res_atom_mask"]``) is a mask when it indexes
(heldout7 FlowDock ``flowdock.py:1099/1144``: both in a compiled forward)."""
from __future__ import annotations

import textwrap

from gnnlint.engine import LintOptions, lint_bytes
from gnnlint.rules import all_rules

SOURCE = """
from typing import Any, Dict

import torch


class Head(torch.nn.Module):
    def forward(self, batch: Dict[str, Any], coords, n: int):
        return self.select(batch, coords, n)

    def select(self, batch, coords, n: int):
        {BODY}


model = torch.compile(Head())
"""


def _gnn008_lines(body: str) -> list[int]:
    rules = [r for r in all_rules() if r.code == "GNN008"]
    code = textwrap.dedent(SOURCE).replace("{BODY}", textwrap.indent(textwrap.dedent(body), " " * 8).strip())
    opts = LintOptions(codes=frozenset({"GNN008"}))
    return sorted(f.line for f in lint_bytes("example.py", code.encode(), opts, rules=rules).findings)


def test_a_slice_of_a_boolean_mask_is_a_mask():
    assert _gnn008_lines("""
        knn_mask = torch.cdist(coords, coords) < 4.0
        pp_edges = knn_mask[:, :n, :n]
        return coords[pp_edges]
    """) == [14]


def test_a_slice_of_a_float_tensor_is_not_a_mask():
    assert _gnn008_lines("""
        dist = torch.cdist(coords, coords)
        near = dist[:, :n]
        return coords[near]
    """) == []


def test_a_mask_field_of_a_dict_batch_is_a_mask():
    assert _gnn008_lines("""
        pad_mask = batch["features"]["res_atom_mask"]
        return coords[pad_mask]
    """) == [13]


def test_a_mask_field_store_is_not_a_read():
    assert _gnn008_lines("""
        coords[batch["features"]["res_atom_mask"]] = 0.0
        return coords
    """) == []


def test_a_slice_of_mask_named_indices_is_not_a_mask():
    # FraGNNet fragnnet_model.py:809: `frag_edge_mask_idxs = th.nonzero(mask).long()`, then `[:, 0]`
    assert _gnn008_lines("""
        idx_mask_idxs = torch.nonzero(coords > 0).long()
        return coords[idx_mask_idxs[:, 0]]
    """) == [12]
