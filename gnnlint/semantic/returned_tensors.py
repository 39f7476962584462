"""Does this call of a function another project file defines return a tensor?

A project helper says so in its signature::

    # utils/misc_utils.py
    def scatter_reduce(src: th.Tensor, index: th.Tensor, reduce: str) -> th.Tensor:
        ...

    # model/fragnnet_model.py (compiled forward)
    sizes = scatter_reduce(ones, idx, "sum")
    th.repeat_interleave(x, sizes)          # tensor repeats: GNN004

Within one file ``kind`` reads the helper's returns (``returns_kind``); across
files it cannot. ``export_returned_tensors`` tells the files importing a
top-level function that its return annotation names a tensor (``-> Tensor``,
``-> torch.Tensor``, ``-> th.Tensor`` with ``import torch as th``); the
annotation is the exact, cheap precondition: the author's word, no walk of
the body. ``returned_tensor_call`` answers for a call here (asked by ``kind``).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import libcst as cst

from gnnlint.facts import ImportRef

if TYPE_CHECKING:
    from gnnlint.context import FileContext
    from gnnlint.semantic.model import FuncInfo

_TENSOR_TYPES = ("Tensor", "FloatTensor", "LongTensor", "BoolTensor")


def tensor_annotation(ctx: "FileContext", annotation: Optional[cst.BaseExpression]) -> bool:
    """``Tensor`` / ``torch.Tensor`` / ``th.Tensor`` (any alias of torch), not ``Optional[...]``:
    a value that is always a tensor."""
    if isinstance(annotation, cst.Name):
        return annotation.value in _TENSOR_TYPES and (ctx.resolve(annotation) or "torch.Tensor").startswith("torch")
    if isinstance(annotation, cst.Attribute) and annotation.attr.value in _TENSOR_TYPES:
        return (ctx.resolve(annotation) or "").startswith("torch.")
    return False


def _returns_tensor(ctx: "FileContext", func: "FuncInfo") -> bool:
    returns = getattr(func.node, "returns", None)
    return returns is not None and tensor_annotation(ctx, returns.annotation)


def export_returned_tensors(ctx: "FileContext") -> None:
    for name, func in ctx.functions.items():
        if func.cls is not None or func.parent is not None or func.is_async or func.node.returns is None:
            continue
        if _returns_tensor(ctx, func):
            ctx.exported.returned_tensors.append((ImportRef("", name), f"`{name}` returns a tensor"))


def returned_tensor_call(ctx: "FileContext", call: cst.Call) -> bool:
    """``call`` runs a function of another project file whose return annotation names a tensor."""
    facts = ctx.project.returned_tensors
    if not facts:
        return False
    return ctx.imported_function_key(call) in facts
