"""Attributes holding Python lists: "is this ``data.layer_layout[k]`` an
element of a Python list, not a tensor?"

A PyG ``Data`` / ``Batch`` carries tensors and whatever other Python values
its dataset stores (``Data(x=..., layer_layout=[3, 16, 10])``; a ``Batch``
keeps a list attribute as a list of lists). kinds.py presumes a graph
batch's attributes are tensors. When this file calls a list-only method on
the same attribute of the same object (``batch[i].layer_layout.insert(j, n)``,
``.append``, ``.extend``, ``.remove``: a tensor has none of them), the
attribute holds lists, and what is read from it is a Python value (an int
for sizes). ``list_attribute(ctx, expr)`` answers with the attribute's
name, or None. Asked by ``int_or_tensor_is_tensor`` (shapes.py) for
``repeat_interleave``'s ``repeats`` (GNN004).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import libcst as cst

if TYPE_CHECKING:
    from gnnlint.context import FileContext

_LIST_ONLY = frozenset(("append", "insert", "extend", "remove"))


def list_attribute(ctx: FileContext, expr: cst.BaseExpression) -> Optional[str]:
    """``<obj>.attr`` or ``<obj>.attr[...]`` whose ``attr`` this file mutates
    with a list-only method on an object with the same root name
    (``batch[i].attr.insert(...)`` for ``batch[i].attr[k]``): ``attr``; else None."""
    while isinstance(expr, cst.Subscript):
        expr = expr.value
    if not isinstance(expr, cst.Attribute):
        return None
    root = _root_name(expr.value)
    if root is None or root == "self":
        return None
    attr = expr.attr.value
    for node in ctx.attribute_nodes(attr):
        method = ctx.parent.get(node)
        if not (isinstance(method, cst.Attribute) and method.value is node and method.attr.value in _LIST_ONLY):
            continue
        call = ctx.parent.get(method)
        if isinstance(call, cst.Call) and call.func is method and _root_name(node.value) == root:
            return attr
    return None


def _root_name(expr: cst.BaseExpression) -> Optional[str]:
    while isinstance(expr, (cst.Subscript, cst.Attribute)):
        expr = expr.value
    return expr.value if isinstance(expr, cst.Name) else None
