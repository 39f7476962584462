"""Compiled objects handed to another file's function: "does this call run the compiled model it passes?"

A script compiles its model and never calls it itself: every step it hands
it to a helper of the project (``for q, d in apply_step(net, p, v, a, dt):``,
``p_seq = ssm_rollout(model, p0, v0, ...)``, ``loss = train_step(model,
batch)``) that runs it. The helper's file is told its parameter holds the
compiled object (handoffs.py, ``compiled_args``); the calling loop runs
compiled code through that call, as through a local function (steps.py asks
``runs_handed`` for a call ``ref_passes`` reports as an outside hand-off).

Not a call of a library (``torch.save(model, path)``, ``copy.deepcopy``), nor
of a helper whose name says it only stores, copies or inspects the object
(``save_checkpoint(model, path)``, ``ema_update(ema, model)``,
``count_parameters(model)``): those do not run its forward.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

if TYPE_CHECKING:  # pragma: no cover
    from gnnlint.context import FileContext

# name parts of helpers that take a model without running it
_NOT_RUNNING_PARTS = ("save", "checkpoint", "ckpt", "load", "log", "ema", "copy", "clone", "export", "count",
                      "param", "state", "print", "summary", "summar", "freeze", "init", "weight", "grad",
                      "average", "swa", "sync", "broadcast", "wrap", "register", "hook", "watch", "to_")


def runs_handed(ctx: "FileContext", call: cst.Call) -> bool:
    """``call`` hands a compiled object to a function another project file
    defines (imported from the project, not a library), whose name does not
    say it only stores or inspects it: the call runs the compiled object."""
    # `utils.train(model, loader)` / `model.train_step(model, opt)`: a method of a project class (handoffs.py)
    target = ctx._imported_function(call) or ctx._imported_method(call)
    if target is None:
        return False
    name = target.name.rpartition(".")[2].lower()
    return not any(part in name for part in _NOT_RUNNING_PARTS)
