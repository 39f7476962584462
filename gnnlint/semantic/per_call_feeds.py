"""A compiled object run on a value its caller makes per call: "which function feeds it what it builds?"

Two questions share this walk: a PyG ``Batch`` assembled per call (assembled_batches.py) and a
sequence batch padded to its longest per call (padded_batches.py). Both ask the same thing of the
functions that call what ``site_node`` compiles: does the function make such a value from its own
parameters (``made``) and pass what it bound the value to (``x = make(...)`` or
``x = make(...).to(dev)``) on to the compiled call?
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Optional

import libcst as cst

if TYPE_CHECKING:
    from gnnlint.context import FileContext


def per_call_feed(ctx: "FileContext", site_node: cst.CSTNode,
                  made: Callable[[object, cst.Call, set], Optional[str]]) -> Optional[tuple[str, str, cst.Call]]:
    """``(function name, the making call's text, the compiled call)`` for the first function that
    calls what ``site_node`` compiles on a value ``made(func, call, from_params)`` says one of its
    calls makes from its parameters (the text for messages, or None), else None."""
    for ref in ctx.compiled_refs(site_node):
        for call in ctx.ref_calls(ref):
            func = ctx.enclosing_function(call)
            if func is None:
                continue
            params = set(func.params) - {"self", "cls"}
            if not params:
                continue
            from_params = ctx._tainted(func, params)
            for making in func.calls:
                text = made(func, making, from_params)
                if text is None:
                    continue
                holders = assigned_names(ctx, making)
                if holders and ctx._call_mentions(call, ctx._tainted(func, holders)):
                    return func.name, text, call
    return None


def assigned_names(ctx: "FileContext", call: cst.CSTNode) -> set[str]:
    """The names ``x = call`` / ``x = call.to(dev)`` binds."""
    node = call
    parent = ctx.parent.get(node)
    while isinstance(parent, (cst.Attribute, cst.Call)):
        if isinstance(parent, cst.Attribute) and parent.value is node:
            node = parent
        elif isinstance(parent, cst.Call) and parent.func is node:
            node = parent
        else:
            break
        parent = ctx.parent.get(node)
    if isinstance(parent, cst.Assign) and parent.value is node:
        return {t.target.value for t in parent.targets if isinstance(t.target, cst.Name)}
    return set()
