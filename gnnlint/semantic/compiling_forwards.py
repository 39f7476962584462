"""Modules whose forward runs code the module compiles itself: "is this
forward per-step code driving compiled code?"

A model may compile part of itself (``self.forward_fn =
torch.compile(self.compiled_forward)``, ``self.encoder =
torch.compile(self.encoder)`` in ``__init__``, an ``@torch.compile`` method)
and call it from its ``forward``, which first prepares the batch eagerly
(graph construction, padding, masks). The module is what a training or
inference loop calls once per step -- often a trainer of another package
(fairchem, Lightning), so the project has no loop of its own -- and the eager
part of the forward, with the project helpers it calls here or in other
files, runs once per step around the compiled part: a ``.item()`` /
``.tolist()`` there is a per-step sync driving compiled code (GNN013).

``compiling_forward(ctx, func)`` answers for a ``forward`` method: why a loop
calls it once per step (frameworks.py makes it a per-step entry, so
hot_loops.py marks it hot and steps.py exports its calls of other files'
helpers as ``stepped`` facts), or None. Not for a class whose whole forward
is compiled (no eager part), nor a LightningModule (its hooks are the steps).
Only for a module something builds: a framework registry (a
``@registry.register_model`` decorator) or a construction in this file (one
only another file imports is hot through that file's loop, ``hot`` facts; one
no program builds runs no step). Gate: a compile site in this file (no new
walk otherwise); memoised per class.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import libcst as cst

from gnnlint.semantic.model import FuncInfo
from gnnlint.semantic.vocab import SELF_COMPILED_MARK

if TYPE_CHECKING:
    from gnnlint.context import FileContext



def compiling_forward(ctx: "FileContext", func: FuncInfo) -> Optional[str]:
    """Why the loop calling ``func``'s module runs this ``forward`` every step
    around compiled code the module compiled itself, or None."""
    cls = func.cls
    if func.name != "forward" or cls is None or func.parent is not None or not ctx.compile_sites:
        return None
    return ctx._memoised(("compiling_forward", cls.name), lambda: _why(ctx, func), None)


def _why(ctx: "FileContext", forward: FuncInfo) -> Optional[str]:
    cls = forward.cls
    if SELF_COMPILED_MARK in ctx.compiled_classes.get(cls.name, "") or not ctx.is_module_class(cls) \
            or any(base.split(".")[-1].startswith("Lightning") for base in cls.bases):
        return None  # the whole forward is compiled / a LightningModule's step hooks are the steps
    if forward in ctx.compiled_funcs:
        return None
    if not _run_by_something(ctx, cls):
        return None  # a module nothing here builds nor registers: a loop elsewhere tells (`hot` facts), or none runs it
    runners = {forward} | _self_methods(ctx, forward)
    for site_node, site in ctx.compile_sites:
        owner = ctx.enclosing_function(site_node)
        while owner is not None and owner.parent is not None:
            owner = owner.parent
        if owner is None or owner.cls is not cls:
            continue  # compiled by the class itself, in one of its methods
        for ref in ctx.compiled_refs(site_node):
            if ref[0] == "self" or ref[0] == "func" or (ref[0] == "name" and ref[2] in runners):
                if any(ctx.enclosing_function(call) in runners for call in ctx.ref_calls(ref)):
                    return f"a loop calls `{cls.name}` once per step, and its forward runs what it compiles itself"
    return None


def _run_by_something(ctx: "FileContext", cls) -> bool:
    """The module is built: registered through a decorator for a framework to
    build from a config (``@registry.register_model("name")``), or constructed
    in this file. (One another file imports and runs in its loop is hot there,
    and that file tells this one; one nobody builds runs no step.)"""
    for deco in cls.node.decorators:
        target = deco.decorator.func if isinstance(deco.decorator, cst.Call) else deco.decorator
        if (ctx.last_part(target) or "").startswith("register"):
            return True
    return bool(ctx.constructions(cls))


def _self_methods(ctx: "FileContext", forward: FuncInfo) -> set:
    """The methods of the class the forward calls on ``self`` (one level)."""
    out = set()
    for call in forward.calls:
        callee = ctx.method_callee(call)
        if isinstance(callee, FuncInfo) and callee.cls is forward.cls and callee is not forward:
            out.add(callee)
    return out
