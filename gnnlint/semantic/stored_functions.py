"""Which function does ``self.<attr>(...)`` run when the class stores a function there?

A module often keeps a configured helper as an attribute::

    from proteinworkshop.models.utils import centralize
    ...
    self.centralize = partial(centralize, key="pos")     # in __init__
    ...
    pos_centroid, batch.pos = self.centralize(batch, batch_index=batch.batch)   # in forward

A compiled forward calling it runs ``centralize`` (another file's, here), so its body is a compiled
region. ``stored_functions(ctx, func, call)`` answers with the function every value the class stores
in ``<attr>`` names: a function of this file (FuncInfo) or one a project module defines (ImportRef),
directly or through ``functools.partial(f, ...)``; [] when any stored value is something else (a
module, a lambda, a value gnnlint cannot name) -- then nothing is guessed. Asked by regions.py's
callee walk for the ``self.<attr>(...)`` calls that are neither methods nor submodules it knows.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from gnnlint.semantic.imported_functions import imported_function

if TYPE_CHECKING:
    from gnnlint.context import FileContext


def stored_functions(ctx: "FileContext", func: cst.BaseExpression, call: cst.Call) -> list:
    if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self"):
        return []
    cls = ctx.enclosing_class(call)
    values = cls.attrs.get(func.attr.value) if cls is not None else None
    if not values or ctx.method_of(cls, func.attr.value) is not None:
        return []
    out = []
    for value in values:
        if isinstance(value, cst.Call) and (ctx.resolve(value.func) or "") in ("functools.partial", "partial") \
                and value.args and value.args[0].keyword is None:
            value = value.args[0].value
        found = None
        if isinstance(value, cst.Name):
            binding, _ = ctx.lookup(value.value, value)
            if binding is not None and binding.how == "def":
                found = ctx.func_info.get(binding.node)
            elif binding is None and value.value in ctx.functions:
                found = ctx.functions[value.value]
        if found is None:
            found = imported_function(ctx, value, value)
        if found is None:
            return []
        out.append((found, call))
    return out
