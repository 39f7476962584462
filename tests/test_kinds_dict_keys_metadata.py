"""A value ``x if cond else None`` has ``x``'s kind where it is used (heldout4,
neural-graphs: ``to_dense_adj(...) if hasattr(batch, "m") else None``, a mask).
Two values that are never tensors, even when read from a batch of tensors
(heldout4, boltz: 5 GNN013 findings on them): a dict's keys (``for k, v in
loss_dict["breakdown"].items()``: a tensor has no ``.items()``) and a tensor's
metadata read from a batch mapping (``batch["coords"].shape[0]``)."""
from __future__ import annotations

import libcst as cst

from gnnlint.context import FileContext
from gnnlint.semantic.kinds import SCALAR, TENSOR

SOURCE = """
import torch
from torch import Tensor

def step(batch: dict[str, Tensor], out, table):
    loss = torch.ones(3, 2)
    for k, v in out["loss_breakdown"].items():
        print(k, v)
    for key in table.keys():
        print(key)
    for k2, (a, b) in out["pairs"].items():
        print(a)
    for row in loss:
        print(row)
    print(batch["coords"].shape[0], batch["coords"].dtype, batch["coords"][0])
    maybe = torch.ones(2) if table else None
    print(maybe, None if table else torch.zeros(1))
"""


def _kinds() -> dict[str, str]:
    module = cst.parse_module(SOURCE)
    ctx = FileContext(module, "<kinds>")
    out = {}

    class Printed(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            if module.code_for_node(node.func) == "print":
                for arg in node.args:
                    out[module.code_for_node(arg.value)] = ctx.kind(arg.value)

    module.visit(Printed())
    return out


def test_dict_keys_are_not_tensors_values_keep_their_kind():
    kinds = _kinds()
    assert kinds["k"] == SCALAR
    assert kinds["key"] == SCALAR
    assert kinds["a"] != SCALAR  # nested unpacking of a value: not the key
    assert kinds["row"] == TENSOR  # iterating a tensor still gives tensors


def test_tensor_metadata_read_from_a_batch_mapping_is_not_a_tensor():
    kinds = _kinds()
    assert kinds['batch["coords"].shape[0]'] != TENSOR
    assert kinds['batch["coords"].dtype'] == SCALAR
    assert kinds['batch["coords"][0]'] != SCALAR


def test_a_value_or_none_has_the_value_s_kind():
    kinds = _kinds()
    assert kinds["maybe"] == TENSOR
    assert kinds["None if table else torch.zeros(1)"] == TENSOR
