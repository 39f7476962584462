"""String-keyed values: "is this name a mapping, not a tensor?"

A tensor is never subscripted with a string: ``loss["total_loss"]`` makes
``loss`` a dict (of tensors, often -- what a model returns as ``loss, out =
self.model(batch)``), whatever kinds.py presumes from the call it came from.
Iterating it yields its keys, Python strings: ``for key in loss:
self.log(f"Training/{key}", loss[key])`` formats no tensor (no sync).

``string_keyed(ctx, name)`` is True when another read of the same variable in
the same function -- reached by the same bindings -- subscripts it with a
string literal. Asked by kinds.py for the element of ``for k in <name>:``.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

if TYPE_CHECKING:
    from gnnlint.context import FileContext


def string_keyed(ctx: "FileContext", name: cst.Name) -> bool:
    reaching = ctx.reaching(name.value, name)
    if not reaching:
        return False
    ids = {id(b) for b, _f in reaching}
    func = ctx.enclosing_function(name)
    for use in ctx.name_uses(name.value):
        if use is name or ctx.enclosing_function(use) is not func:
            continue
        parent = ctx.parent.get(use)
        if not (isinstance(parent, cst.Subscript) and parent.value is use and len(parent.slice) == 1):
            continue
        index = parent.slice[0].slice
        if not (isinstance(index, cst.Index) and isinstance(index.value, (cst.SimpleString, cst.ConcatenatedString))):
            continue
        if {id(b) for b, _f in ctx.reaching(use.value, use)} == ids:
            return True
    return False
