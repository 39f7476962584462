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
