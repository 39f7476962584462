"""Which project function does a callable name hold where it is called?

A training loop is often handed its loss or metric function instead of
naming it::

    # train.py
    from helpers import directional_loss
    def train_epoch(model, loader, loss_fn):
        for batch in loader:
            loss = loss_fn(model(batch), batch.y)     # runs helpers.directional_loss every step
    loss_fn = directional_loss
    train_epoch(model, loader, loss_fn)

``passed_function(call)`` answers with the import of that function when every
binding reaching the callee's name says the same: ``name = imported_fn`` in
this function, or a parameter every local caller fills with such a name (or
passes on from its own parameter, a few levels up). steps.py asks it for the
calls of a loop that drives compiled code, so the helper's file learns that
its function runs every step (``stepped`` facts).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import libcst as cst

if TYPE_CHECKING:
    from gnnlint.context import FileContext
    from gnnlint.facts import ImportRef

_MAX_DEPTH = 3


def passed_function(ctx: "FileContext", call: cst.Call) -> Optional["ImportRef"]:
    """The imported project function ``call`` runs through a local name or parameter, or None."""
    func = call.func
    if not isinstance(func, cst.Name) or func.value in ctx.imports:
        return None
    return _held(ctx, func, 0)


def _held(ctx: "FileContext", name: cst.Name, depth: int) -> Optional["ImportRef"]:
    reaching = ctx.reaching(name.value, name)
    if not reaching or depth > _MAX_DEPTH:
        return None
    found = None
    for binding, scope in reaching:
        if binding.how == "assign" and isinstance(binding.value, cst.Name):
            ref = _imported(ctx, binding.value) or _held(ctx, binding.value, depth + 1)
        elif binding.how == "param" and scope is not None:
            ref = _passed_by_callers(ctx, scope, name.value, depth)
        else:
            return None
        if ref is None or (found is not None and ref != found):
            return None
        found = ref
    return found


def _passed_by_callers(ctx: "FileContext", func, param: str, depth: int) -> Optional["ImportRef"]:
    callers = ctx.callers_of(func)
    found = None
    for call in callers:
        arg = ctx.arg_for_param(func, call, param)
        ref = (_imported(ctx, arg) or _held(ctx, arg, depth + 1)) if isinstance(arg, cst.Name) else None
        if ref is None or (found is not None and ref != found):
            return None
        found = ref
    return found


def _imported(ctx: "FileContext", name: cst.Name) -> Optional["ImportRef"]:
    """``name`` is a function imported by name (``from helpers import directional_loss``)."""
    ref = ctx.imports.get(name.value)
    if ref is None or not ref.name[:1].islower() or "." in ref.name:
        return None
    binding, _scope = ctx.lookup(name.value, name)
    return ref if binding is None or binding.how == "import" else None  # (not shadowed by a local binding)
