"""Entry points a runner loads by name at run time (a plugin interface).

A benchmark runner imports the user's submission from a path given on the
command line and calls the functions it must define, by name, once per
training step with the compiled model::

    submission = importlib.import_module(path_to_module)
    update_params = submission.update_params
    ...
    model = torch.compile(model)
    while not done:
        state = update_params(workload=workload, current_param_container=model, ...)

No import line names the submission, so the usual cross-file facts (which
follow ``from m import f``) do not reach it. This module answers, for the
runner's file: which calls run a function taken from a module imported at
run time (``importlib.import_module(...)``, ``__import__(...)``, a module made
by ``importlib.util.module_from_spec``), directly or through a parameter the
runner's own callers fill, in a loop, unconditionally in the loop's body,
with a compiled object among the arguments. Such a call is exported as a
``stepped`` fact addressed by *name* (``ENTRY_POINT`` module marker, with the
keywords the call passes): the engine delivers it to every project file that
defines a top-level function of that name accepting those keywords
(``gnnlint/entry_points.py``).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import libcst as cst

from gnnlint.facts import ENTRY_POINT, ImportRef

if TYPE_CHECKING:
    from gnnlint.context import FileContext

_DYNAMIC_IMPORTS = ("importlib.import_module", "__import__", "importlib.util.module_from_spec",
                    "importlib.__import__")
_MAX_DEPTH = 3


def export(ctx: "FileContext") -> None:
    """Add the ``stepped`` facts of this file's per-step entry-point calls."""
    if ctx.options.assume_compiled == "modules" or not ctx.compile_sites:
        return
    for call in ctx.all_calls():
        if not isinstance(call.func, cst.Name):
            continue
        name = entry_point_name(ctx, call.func, call, 0)
        if name is None:
            continue
        loop = _per_step_loop(ctx, call)
        if loop is None:
            continue
        what = next((w for w in (ctx.compiled_value(a.value, call) for a in call.args if not a.star) if w), None)
        if what is None:
            continue
        keywords = ",".join(a.keyword.value for a in call.args if a.keyword is not None)
        if any(a.star or a.keyword is None for a in call.args):
            keywords += ",*"
        callee = ctx.module.code_for_node(call.func)
        ctx.exported.stepped.append((ImportRef(f"{ENTRY_POINT}{keywords}", name),
                                     f"step|?|{what}|{callee}"))
        ctx.exported.stepped_args.append((ImportRef(f"{ENTRY_POINT}{keywords}", name), "*"))  # not read


def entry_point_name(ctx: "FileContext", expr: cst.BaseExpression, at: cst.CSTNode,
                     depth: int) -> Optional[str]:
    """The name of the function ``expr`` (read at ``at``) takes from a module
    imported at run time, when every value it may hold is one: ``mod.update_params``,
    a name bound to it, or a parameter every local caller fills with one."""
    if depth > _MAX_DEPTH:
        return None
    if isinstance(expr, cst.Attribute):
        return expr.attr.value if _dynamic_module(ctx, expr.value, at) else None
    if not isinstance(expr, cst.Name):
        return None
    reaching = ctx.reaching(expr.value, at)
    if not reaching:
        return None
    names = set()
    for binding, func in reaching:
        if binding.how == "assign" and binding.value is not None:
            found = entry_point_name(ctx, binding.value, binding.value, depth + 1)
        elif binding.how == "param" and func is not None:
            callers = ctx.callers_of(func)
            args = [ctx.arg_for_param(func, c, expr.value) for c in callers]
            if not callers or any(a is None for a in args):
                return None
            found_all = {entry_point_name(ctx, a, a, depth + 1) for a in args}
            found = found_all.pop() if len(found_all) == 1 else None
        else:
            return None
        if found is None:
            return None
        names.add(found)
    return names.pop() if len(names) == 1 else None


def _dynamic_module(ctx: "FileContext", expr: cst.BaseExpression, at: cst.CSTNode) -> bool:
    if isinstance(expr, cst.Call):
        return (ctx.resolve(expr.func) or "") in _DYNAMIC_IMPORTS
    if not isinstance(expr, cst.Name):
        return False
    reaching = ctx.reaching(expr.value, at)
    return bool(reaching) and all(b.how == "assign" and b.value is not None and isinstance(b.value, cst.Call)
                                  and (ctx.resolve(b.value.func) or "") in _DYNAMIC_IMPORTS
                                  for b, _f in reaching)


def _per_step_loop(ctx: "FileContext", call: cst.Call) -> Optional[cst.CSTNode]:
    """The loop whose every iteration makes ``call``: the nearest enclosing
    ``for`` / ``while`` of the same function, with no ``if`` (nor ``try``'s
    handlers, nor a nested def) between them."""
    child: cst.CSTNode = call
    for anc in ctx.ancestors(call):
        if isinstance(anc, (cst.For, cst.While)):
            return anc if child is anc.body else None
        if isinstance(anc, (cst.If, cst.IfExp, cst.ExceptHandler, cst.FunctionDef, cst.Lambda,
                            cst.ClassDef, cst.BooleanOperation)):
            return None
        child = anc
    return None
