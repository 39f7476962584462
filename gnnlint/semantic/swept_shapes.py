"""Does a loop call the compiled function on tensors of a new size each iteration?

A benchmark or a sweep builds its inputs from a size it is given and runs a
compiled function on them, once per size::

    def bench(shape, l_max):
        x = torch.rand(shape, device=device)
        return torch.compile(sph_harm, fullgraph=True)(l_max, x)

    for n in sizes:
        bench((int(10 ** n), 3), l_max=4)

No loader feeds it (feeds.py finds none), yet every iteration hands the
compiled function a new input size: without ``dynamic=True`` the first call
of each new size recompiles it (GNN007). ``swept_shape_feed(ctx, site_node)``
answers it, only where it is sure to be so: the compile site sits in a
function; a parameter of that function sizes a tensor a torch factory makes
there (``torch.rand(shape)``, ``torch.zeros(n, 3)``); the compiled object is
called there on a value made from that tensor; and a loop calls the function
with an argument for that parameter that changes per iteration (the loop
variable or a name bound in the loop; compile_facts.sweep_loop). A function
fed a fixed-size tensor (``compare(torch.rand(n_feats, 3))`` in a loop over
repetitions) is not one.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple, Optional

import libcst as cst

from gnnlint.semantic.compile_facts import sweep_loop, target_names, varying_names

if TYPE_CHECKING:
    from gnnlint.context import FileContext

_FACTORIES = frozenset(("rand", "randn", "zeros", "ones", "empty", "full", "randint", "arange", "linspace"))


class SweptFeed(NamedTuple):
    func: str  # the function that sizes the inputs and runs the compiled object ("bench")
    param: str  # its parameter that sizes them ("shape")
    loop: str  # the loop target that changes it ("n")


def swept_shape_feed(ctx: "FileContext", site_node: cst.CSTNode) -> Optional[SweptFeed]:
    func = ctx.enclosing_function(site_node)
    if func is None or not isinstance(site_node, cst.Call):
        return None
    calls = _compiled_calls(ctx, site_node, func)
    if not calls:
        return None
    for param, sized in _sized_by_params(ctx, func).items():
        tainted = ctx._tainted(func, sized)
        if not any(ctx._call_mentions(call, tainted) for call in calls):
            continue
        for caller in ctx.callers_of(func, through_aliases=True):
            loop = sweep_loop(ctx, caller)
            arg = ctx.arg_for_param(func, caller, param) if loop is not None else None
            if arg is not None and ctx.names_in(arg) & varying_names(ctx, loop):
                return SweptFeed(func.name, param, ctx.module.code_for_node(loop.target))
    return None


def _compiled_calls(ctx: "FileContext", site_node: cst.Call, func) -> list:
    """The calls in ``func`` that run what ``site_node`` compiles: ``torch.compile(f)(x)`` at once, or
    through the name it is bound to."""
    parent = ctx.parent.get(site_node)
    out = [parent] if isinstance(parent, cst.Call) and parent.func is site_node else []
    for ref in ctx.compiled_refs(site_node):
        out += [c for c in ctx.ref_calls(ref) if ctx.enclosing_function(c) is func]
    return out


def _sized_by_params(ctx: "FileContext", func) -> dict:
    """parameter -> the names ``func`` binds to a torch factory's tensor that the parameter sizes
    (``x = torch.rand(shape, ...)``; the size argument, positional or ``size=``)."""
    params = set(func.params) - {"self", "cls"}
    out: dict = {}
    for call in func.calls:
        if ctx.enclosing_function(call) is not func:
            continue
        resolved = (ctx.resolve(call.func) or "").split(".")
        if len(resolved) != 2 or resolved[0] != "torch" or resolved[1] not in _FACTORIES:
            continue
        sizes = [a.value for a in call.args if a.keyword is None or a.keyword.value == "size"]
        mentioned = {n for size in sizes for n in ctx.names_in(size)} & params
        stmt = ctx.statement_of(call)
        body = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) and stmt.body else None
        if not mentioned or not isinstance(body, cst.Assign) or body.value is not call:
            continue
        for param in mentioned:
            out.setdefault(param, set()).update(n for t in body.targets for n in target_names(t.target))
    return out
