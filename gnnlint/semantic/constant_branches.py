"""Is this line in a branch a module constant switches off (``if DEBUG:`` with ``DEBUG = False``)?

Projects keep debug switches as module constants, in the file or in a settings module::

    # config.py                      # model.py
    debug_mode = False               from config import debug_mode
                                     ...
                                         if debug_mode:
                                             print("h", h.sum().item())

Under ``torch.compile`` dynamo reads the global, guards on it and never traces the branch; in eager
code it never runs either. So no rule reports what such a branch holds, compiled or per step. The
constant must be one falsy literal (``False``, ``None``, ``0``, ``""``) that nothing in the file
re-binds: a module-level binding of this file that no function binds again (a ``global`` write),
or an imported one (semantic/imported_constants.py: the defining module's one literal, told by the
engine's ``imported_constants`` join). ``if not DEBUG:`` / ``else:`` branches are the ones that run.
"""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Optional

import libcst as cst

from gnnlint.semantic.imported_constants import imported_constant

if TYPE_CHECKING:
    from gnnlint.context import FileContext

_FALSY = (False, None, 0, "")


def constant_off(ctx: "FileContext", node: cst.CSTNode) -> Optional[str]:
    """Why ``node`` never runs: the ``if`` around it needs a module constant that is off
    ("`DEBUG` is False in `config`"), or None."""
    child = node
    for anc in ctx.ancestors(node):
        if isinstance(anc, (cst.If, cst.While)) and child is anc.body:
            why = _off_test(ctx, anc.test)
            if why is not None:
                return why
        elif isinstance(anc, cst.IfExp) and child is anc.body:
            why = _off_test(ctx, anc.test)
            if why is not None:
                return why
        elif isinstance(anc, cst.BooleanOperation) and isinstance(anc.operator, cst.And) and child is anc.right:
            why = _off_test(ctx, anc.left)  # `DEBUG and t.item() > 0`: the right side never runs
            if why is not None:
                return why
        child = anc
    return None


def _off_test(ctx: "FileContext", test: cst.BaseExpression) -> Optional[str]:
    """``test`` is false for good: an off constant, or an ``and`` with one."""
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        return _off_test(ctx, test.left) or _off_test(ctx, test.right)
    if isinstance(test, (cst.Name, cst.Attribute)):
        found = _constant(ctx, test)
        if found is not None and found[0] in _FALSY and not isinstance(found[0], float):
            return found[1]
    return None


def _constant(ctx: "FileContext", expr: cst.BaseExpression) -> Optional[tuple[object, str]]:
    memo = ctx._memo
    key = ("constant_branches", expr)
    if key not in memo:
        memo[key] = _local_constant(ctx, expr) if isinstance(expr, cst.Name) else None
        if memo[key] is None and _imported_name(ctx, expr):
            memo[key] = imported_constant(ctx, expr)
    return memo[key]


def _imported_name(ctx: "FileContext", expr: cst.BaseExpression) -> bool:
    """Only names an import gives (``from config import debug_mode``, ``config.debug_mode``) are
    asked of the project: the request costs a fact join."""
    root = expr.value if isinstance(expr, cst.Attribute) else expr
    return isinstance(root, cst.Name) and (root.value in ctx.imports or root.value in ctx.aliases
                                           or (isinstance(expr, cst.Name) and bool(ctx.star_imports)))


def _local_constant(ctx: "FileContext", name: cst.Name) -> Optional[tuple[object, str]]:
    """(value, why) of a module-level name every binding of which is the same literal, bound by no
    import and no function body (``global DEBUG; DEBUG = True`` in a function re-binds it)."""
    bindings = ctx.module_bindings.get(name.value)
    if not bindings or any(b.how != "assign" or b.value is None for b in bindings):
        return None
    if name.value in ctx.imports or name.value in ctx.aliases:
        return None  # `try: from ext import HAVE_EXT` / `except ImportError: HAVE_EXT = False`: True when it imports
    binding, _scope = ctx.lookup(name.value, name)
    if binding is None or not any(binding is b for b in bindings):
        return None  # a parameter or local of the same name
    if any(name.value in f.bindings for f in ctx.func_info.values()):
        return None
    values = set()
    for b in bindings:
        try:
            value = ast.literal_eval(ctx.module.code_for_node(b.value))
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            return None
        if not isinstance(value, (bool, int, str, type(None))):
            return None
        values.add((type(value), value))
    if len(values) != 1:
        return None
    value = next(iter(values))[1]
    return value, f"`{name.value}` is {value!r} in this module"
