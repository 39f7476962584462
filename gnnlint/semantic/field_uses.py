"""Fields of one value read as arrays: "is ``batch["n"]`` (or ``data.n``) used
as an array elsewhere in this function?"

A batch handed to a forward as a dict or an object carries its per-graph
counts as fields (``v_data["num_face_record"]``, ``data.num_nodes_per_graph``).
The file rarely says what such a field is, but the function itself often
reads the same field as an array -- ``v_data["num_face_record"].shape[0]``,
``data.n.to(device)``, ``len(data.n)`` -- and an int has no first dimension,
no device, no length. The same field of the same unrebound value, with no
store into it in the function, is one value: its use as an array there
speaks for every read (``shapes.int_or_tensor_is_tensor`` asks this for
``repeat_interleave``'s ``repeats``, GNN004).

- ``field_used_as_array(ctx, expr)``: ``expr`` is ``base["key"]`` or
  ``base.attr`` with ``base`` a name (not ``self``: module state is set
  anywhere) bound once in the enclosing function, no assignment to the same
  field there, and some read of the same field in that function is used as
  an array (``used_as_array``).
- ``used_as_array(ctx, node)``: ``node.shape[i]``, ``node.device``,
  ``node.is_cuda``, ``node.to(...)`` / ``.size()`` / ``.numel()`` ...,
  ``len(node)``.

Gate: only asked for an argument that is a subscript with a string key or
an attribute of a name; the candidates are the base name's uses
(``flow.name_uses``, memoised per file), no new walk.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import libcst as cst

if TYPE_CHECKING:
    from gnnlint.context import FileContext


# what a Python int (or a numpy scalar) does not have: a device, a first dimension, tensor methods
_ARRAY_ATTRS = ("device", "is_cuda")
_ARRAY_METHODS = ("to", "size", "numel", "dim", "cuda", "contiguous", "view", "reshape", "cumsum")


def used_as_array(ctx: FileContext, use: cst.BaseExpression) -> bool:
    parent = ctx.parent.get(use)
    if isinstance(parent, cst.Arg) and parent.keyword is None:  # `len(n)`: an int has no length
        call = ctx.parent.get(parent)
        return isinstance(call, cst.Call) and len(call.args) == 1 and ctx.resolve(call.func) == "len"
    if not isinstance(parent, cst.Attribute) or parent.value is not use:
        return False
    attr = parent.attr.value
    if attr in _ARRAY_ATTRS:
        return True
    outer = ctx.parent.get(parent)
    if attr == "shape":  # `n.shape[0]`: at least one dimension
        return isinstance(outer, cst.Subscript) and outer.value is parent
    return attr in _ARRAY_METHODS and isinstance(outer, cst.Call) and outer.func is parent


def _field(expr: cst.BaseExpression) -> Optional[tuple[str, str]]:
    """(base name, field) of ``base["key"]`` / ``base.attr``, else None."""
    if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name):
        return expr.value.value, "." + expr.attr.value
    if isinstance(expr, cst.Subscript) and isinstance(expr.value, cst.Name) and len(expr.slice) == 1:
        index = expr.slice[0].slice
        if isinstance(index, cst.Index) and isinstance(index.value, cst.SimpleString):
            key = index.value.evaluated_value
            if isinstance(key, str):
                return expr.value.value, "[" + key + "]"
    return None


def _stored(ctx: FileContext, node: cst.BaseExpression) -> bool:
    parent = ctx.parent.get(node)
    if isinstance(parent, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign)) and parent.target is node:
        return True
    if isinstance(parent, cst.Element):  # `a, data.n = ...`: unpacked into
        literal = ctx.parent.get(parent)
        holder = ctx.parent.get(literal) if isinstance(literal, (cst.Tuple, cst.List)) else None
        return isinstance(holder, (cst.AssignTarget, cst.For)) and holder.target is literal
    return False


def field_used_as_array(ctx: FileContext, expr: cst.BaseExpression) -> bool:
    field = _field(expr)
    if field is None or field[0] == "self":
        return False
    base = field[0]
    func = ctx.enclosing_function(expr)
    if func is None or len(func.bindings.get(base, ())) != 1:
        return False  # one value of the base in the whole function
    same = []
    for use in ctx.name_uses(base):
        node = ctx.parent.get(use)
        if node is None or ctx.enclosing_function(use) is not func or _field(node) != field \
                or getattr(node, "value", None) is not use:
            continue
        if _stored(ctx, node):
            return False  # `data["n"] = ...` here: the field is not one value
        same.append(node)
    return any(used_as_array(ctx, node) for node in same if node is not expr)
