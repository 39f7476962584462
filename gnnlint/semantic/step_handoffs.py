"""A compiled model handed to another file's step function: "does this call run one step?"

Research scripts compile the model and hand it, every iteration, to a
function of another file that runs one step on it (``log =
model.train_step(model, optimizer, train_iterator, args, step)``, a static
method reached through the compiled wrapper; ``loss = train_step(model, opt,
batch)`` imported from a helpers module). The loop around such a call is a
step loop (hot_loops.py asks ``hands_compiled_to_step``), so the step
function's file is told it runs every step (``stepped`` facts).

By name only: a function another file defines may hold a whole epoch
(``train(model, loader)``), whose caller's loop is an epoch loop, not a step
loop; a function whose name ends in ``step`` runs one step by convention.
Local functions are read, not guessed (hot_loops.runs_step).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

if TYPE_CHECKING:  # pragma: no cover
    from gnnlint.context import FileContext


def hands_compiled_to_step(ctx: "FileContext", call: cst.Call) -> bool:
    """``call`` runs a function this file does not define whose name ends in
    ``step`` (``train_step``, ``eval_step``), handing it a compiled model."""
    from gnnlint.semantic.model import ClassInfo, FuncInfo

    func = call.func
    name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
    if not name.lower().endswith("step") or name.lower() == "step" or not call.args:
        return False  # a bare `.step(...)` is an optimizer's / scheduler's / environment's
    if isinstance(ctx.method_callee(call), (FuncInfo, ClassInfo)):
        return False
    return any(isinstance(arg.value, cst.Name) and not arg.star
               and (ctx.compiled_value(arg.value, call) or "").startswith("compiled `")
               for arg in call.args)


def compiled_class(ctx: "FileContext", expr: cst.BaseExpression, at: cst.CSTNode, depth: int = 0):
    """The class of the model a compiled wrapper holds (``model =
    torch.compile(model)`` after ``model = Net(...)``; ``.cuda()`` / ``.to()``
    on it; a parameter every local caller passes such a wrapper): what
    ``model.train_step(...)`` on the wrapper reaches (the wrapper forwards
    attribute reads to the model). ``class_of`` itself does not see through
    ``torch.compile``; asked by ``_imported_method`` and step_targets' ``imported_target``."""
    if depth > 6 or not isinstance(expr, cst.Name):
        return None
    return ctx._memoised(("compiled_class", id(expr), id(at)), lambda: _compiled_class(ctx, expr, at, depth), None)


def _compiled_class(ctx: "FileContext", expr: cst.Name, at: cst.CSTNode, depth: int):
    from gnnlint.semantic.kinds import _MODEL_METHODS_SELF

    binding, func = ctx.lookup(expr.value, at)
    if binding is None:
        return None
    if binding.how == "param" and func is not None and isinstance(binding.node, cst.Param):
        args = ctx._args_for_param(binding.node, func) or [None]
        found = {compiled_class(ctx, a, a, depth + 1) if a is not None else None for a in args}
        return found.pop() if len(found) == 1 else None
    value = binding.value if binding.how == "assign" else None
    while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
            and value.func.attr.value in _MODEL_METHODS_SELF and value.func.attr.value != "compile":
        value = value.func.value  # model.cuda() / model.to(device): the same wrapper
    if isinstance(value, cst.Name):
        return compiled_class(ctx, value, binding.value, depth + 1)
    if isinstance(value, cst.Call) and value.args and ctx.compile_api(value.func) is not None:
        return ctx.class_of(value.args[0].value, value)
    return None
