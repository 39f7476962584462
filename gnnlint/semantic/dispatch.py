"""Calls the call graph does not show by name: "which functions of this file
does this call (or this decorator) run?"

- ``eval(fn)(prediction, target)`` / ``globals()[fn](...)`` with ``fn`` a
  value (not a literal): a function of this module picked by its name. The
  candidates are the module-level functions whose names the file spells as
  string literals (a table of metric names ``{"energy": ["mae", "rmse"]}``);
  a function no literal names is never picked this way.
- ``@metrics_dict def mae(...)``: calling ``mae`` runs the wrapper the local
  decorator ``metrics_dict`` returns (its nested functions).

regions.py marks them hot with the function that makes the call; steps.py
counts these calls among their callers (so a per-step metric reached through
``eval(fn)`` drives what its caller's loop drives).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from gnnlint.semantic.hook_dispatch import dispatch_callers
from gnnlint.semantic.callback_hooks import abstract_callers
from gnnlint.semantic.instance_calls import instance_callers

if TYPE_CHECKING:
    from gnnlint.context import FileContext, FuncInfo

_MAX_DEPTH = 3


def _literal_names(ctx: "FileContext") -> frozenset:
    memo = ctx.__dict__.get("_dispatch_literals")
    if memo is None:
        memo = frozenset(node.raw_value for node in ctx.preorder
                         if isinstance(node, cst.SimpleString) and node.raw_value.isidentifier())
        ctx.__dict__["_dispatch_literals"] = memo
    return memo


def is_name_dispatch(ctx: "FileContext", call: cst.Call) -> bool:
    """``eval(fn)(...)`` or ``globals()[fn](...)`` with ``fn`` not a literal."""
    func = call.func
    if isinstance(func, cst.Call) and ctx.resolve(func.func) == "eval" and len(func.args) == 1:
        return not isinstance(func.args[0].value, cst.SimpleString)
    if isinstance(func, cst.Subscript) and isinstance(func.value, cst.Call) \
            and ctx.resolve(func.value.func) == "globals" and len(func.slice) == 1:
        index = func.slice[0].slice
        return isinstance(index, cst.Index) and not isinstance(index.value, cst.SimpleString)
    return False


def dispatched(ctx: "FileContext", call: cst.Call) -> list:
    """The module-level functions ``eval(fn)(...)`` may run (see module doc)."""
    if not is_name_dispatch(ctx, call):
        return []
    names = _literal_names(ctx)
    return [info for name, info in ctx.functions.items() if name in names]


def decorator_wrappers(ctx: "FileContext", info: "FuncInfo") -> list:
    """The nested functions of the local decorators of ``info``: what calling
    ``info`` runs (``@metrics_dict`` -> ``metrics_dict.<locals>.wrapped``)."""
    out = []
    for deco in info.node.decorators:
        target = deco.decorator.func if isinstance(deco.decorator, cst.Call) else deco.decorator
        if isinstance(target, cst.Name):
            outer = ctx.functions.get(target.value)
            if outer is not None and outer is not info:
                out += list(outer.nested.values())
    return out


def extra_callers(ctx: "FileContext", func: "FuncInfo", depth: int = 0) -> list:
    """Calls that run ``func`` without naming it: the ``eval(fn)(...)`` calls
    when a literal names it; for a decorator's wrapper, the calls of the
    functions so decorated."""
    if depth > _MAX_DEPTH:
        return []
    out: list = dispatch_callers(ctx, func)  # `self._call_hooks("on_train_batch_end", ...)` (hook_dispatch.py)
    out += instance_callers(ctx, func)  # `metric(out, y)` runs a local Metric's update and compute (instance_calls.py)
    out += abstract_callers(ctx, func)  # `self.loss_fn.compute(...)` of an abstract base runs the override
    if func.parent is None and func.cls is None and func.name in _literal_names(ctx):
        out += [call for call in ctx.all_calls() if is_name_dispatch(ctx, call)]
    parent = func.parent
    if parent is not None and parent.parent is None and parent.cls is None:
        for decorated in ctx.functions.values():
            if func in decorator_wrappers(ctx, decorated):
                out += ctx.callers_of(decorated) + extra_callers(ctx, decorated, depth + 1)
    return out
