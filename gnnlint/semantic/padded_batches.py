"""Sequences padded (or cut) to the longest of each batch: "does this batch's length change every call?"

Text and token models batch sequences of unequal length by padding each batch to its own longest
member, so the sequence dimension a compiled model sees changes from batch to batch::

    enc = self.tokenizer(texts, padding=True, return_tensors="pt")   # HF: pad to this call's longest
    out = self.model(**enc)

    def collate(samples):                                              # a loader's collate_fn
        feats = default_data_collator(samples)
        n = feats["attention_mask"].sum(-1).max()
        return {k: v[..., :n] for k, v in feats.items()}             # cut to the batch's longest

    def collate(batch):
        return pad_sequence([b["ids"] for b in batch], batch_first=True)

Without ``dynamic=True`` each new length recompiles the model (GNN007), and CUDA graphs record one
graph per length (GNN006). Only the exact shapes: a tokenizer call returning tensors
(``return_tensors=``) with ``padding=True`` / ``"longest"`` (never ``"max_length"``, which pads to
one fixed size), ``torch.nn.utils.rnn.pad_sequence``, and a slice whose bound is a ``.max()`` of
the batch computed in the same function.

- ``pads_to_longest(ctx, call)``: the call makes such a batch (its text, for messages), or None;
- ``collate_pads(ctx, func)``: a local ``collate_fn`` (FuncInfo) whose batches are padded or cut so;
- ``padded_call_feed(ctx, site_node)``: the function that runs what ``site_node`` compiles on such
  a batch it makes per call from its parameters (``embed(self, texts)``), or None (GNN006/GNN007,
  when no loader feed is found).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple, Optional

import libcst as cst

from gnnlint.semantic.model import iter_children
from gnnlint.semantic.per_call_feeds import per_call_feed

if TYPE_CHECKING:
    from gnnlint.context import FileContext

_PAD_SEQUENCE = ("torch.nn.utils.rnn.pad_sequence",)


class PaddedFeed(NamedTuple):
    func: str  # the function padding the batch and running the compiled object ("embed")
    pad: str  # the padding call's text, for messages
    call: cst.Call  # the compiled call


def _keyword(call: cst.Call, name: str) -> Optional[cst.BaseExpression]:
    return next((a.value for a in call.args if a.keyword is not None and a.keyword.value == name), None)


def pads_to_longest(ctx: "FileContext", call: cst.Call) -> Optional[str]:
    """``call`` pads the sequences it is given to the longest of them: a tokenizer returning tensors
    with ``padding=True`` / ``"longest"``, or ``pad_sequence(...)``. Its text, or None."""
    if (ctx.resolve(call.func) or "") in _PAD_SEQUENCE:
        return ctx.module.code_for_node(call.func)
    padding = _keyword(call, "padding")
    if padding is None or _keyword(call, "return_tensors") is None or not call.args or call.args[0].keyword:
        return None
    value = ctx.literal_value(padding)
    if value is True or value == "longest":
        return f"{ctx.module.code_for_node(call.func)}(..., padding={ctx.module.code_for_node(padding)})"
    return None


def _cuts_to_batch_max(ctx: "FileContext", func, node: cst.CSTNode) -> bool:
    """A slice ``v[..., :n]`` whose bound ``n`` is bound in ``func`` to a ``.max()`` of a value."""
    if not isinstance(node, cst.Slice) or not isinstance(node.upper, cst.Name):
        return False
    binding = ctx.lookup(node.upper.value, node)[0]
    value = binding.value if binding is not None and binding.how == "assign" else None
    return isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
        and value.func.attr.value == "max" and not value.args and ctx.enclosing_function(value) is func


def collate_pads(ctx: "FileContext", func) -> bool:
    """A local collate function that pads its samples to the batch's longest or cuts them to it."""
    if any(pads_to_longest(ctx, call) for call in func.calls):
        return True
    todo = list(iter_children(func.node.body))
    while todo:
        node = todo.pop()
        if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            continue  # a nested function is another scope
        if _cuts_to_batch_max(ctx, func, node):
            return True
        todo += iter_children(node)
    return False


def padded_call_feed(ctx: "FileContext", site_node: cst.CSTNode) -> Optional[PaddedFeed]:
    """The function that runs what ``site_node`` compiles on a batch it pads per call (a tokenizer call
    with ``padding=True`` on its parameters), or None (per_call_feeds.py)."""
    def made(func, call: cst.Call, from_params: set[str]) -> Optional[str]:
        text = pads_to_longest(ctx, call)
        return text if text is not None and ctx._call_mentions(call, from_params) else None

    found = per_call_feed(ctx, site_node, made)
    return PaddedFeed(*found) if found is not None else None
