"""An optional ``forward`` input no caller passes: "is this parameter always None here?"

A module's ``forward(self, x, mask, labels=None)`` often keeps an optional input
for a use the project never makes: the owner runs the submodule as
``self.permuter(x, mask=mask, tau=tau)`` and nothing passes ``labels``. In
every run, compiled or not, ``labels`` is None: ``if self.use_ce and labels:``
tests no tensor (no sync, no graph break), and a branch needing ``labels``
(``if labels is not None:``, ``if flag and labels:``) never runs.

``unpassed_input(ctx, name)`` is True for a read of such a parameter (not
rebound before it) and ``unpassed_branch(ctx, node)`` for a line under such a
branch, when the file runs the class's forward at least once (``self.sub(...)``,
``sub(...)`` on an instance ``class_of`` names: forward_args.py's index) and
every such call leaves the parameter out (no ``*args`` / ``**kwargs``), and no
other file's compiled call of the class gives it (``compiled_passed`` facts,
optional_inputs.py). Calls in other files that run it eagerly are not read:
they cannot make the compiled forward see the input. Gate: the enclosing
function is a ``forward`` with a parameter defaulting to None (no file walk
otherwise); the answer is memoised per function.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from gnnlint.semantic.forward_args import _arg, _module_calls

if TYPE_CHECKING:
    from gnnlint.context import FileContext, FuncInfo

_MAX_CALLS = 20


def _defaults_to_none(param: cst.Param) -> bool:
    return isinstance(param.default, cst.Name) and param.default.value == "None"


def unpassed_params(ctx: "FileContext", func: "FuncInfo") -> frozenset:
    """The ``= None`` parameters of a local module class's ``forward`` that no call gives."""
    if func.cls is None or func.name != "forward" or func.parent is not None \
            or not any(_defaults_to_none(p) for p in func.params.values() if isinstance(p, cst.Param)):
        return frozenset()
    return ctx._memoised((func, "unpassed_params"), lambda: _unpassed(ctx, func), frozenset())


def _unpassed(ctx: "FileContext", func: "FuncInfo") -> frozenset:
    calls = _module_calls(ctx).get(id(func.cls), [])
    if not calls or len(calls) > _MAX_CALLS:
        return frozenset()
    spec = ctx.project.compiled_passed.get(func.cls.name, "")
    if "*" in spec.split("|") or any(a.star for call in calls for a in call.args):
        return frozenset()
    given = {item.rstrip("!") for one in spec.split("|") for item in one.partition("@")[0].split(",")}
    params = list(func.node.params.params)
    out = set()
    for position, param in enumerate(params[1:]):
        name = param.name.value
        if not _defaults_to_none(param) or name in given or str(position) in given:
            continue
        if all(_arg(call, position, name) is None for call in calls):
            out.add(name)
    for param in func.node.params.kwonly_params:
        name = param.name.value
        if _defaults_to_none(param) and name not in given \
                and all(not any(a.keyword is not None and a.keyword.value == name for a in call.args)
                        for call in calls):
            out.add(name)
    return frozenset(out)


def unpassed_input(ctx: "FileContext", expr: cst.BaseExpression) -> bool:
    """``expr`` reads a ``forward`` parameter no call gives, not rebound before: None."""
    if not isinstance(expr, cst.Name):
        return False
    func = ctx.enclosing_function(expr)
    if func is None or expr.value not in unpassed_params(ctx, func):
        return False
    reaching = ctx.reaching(expr.value, expr)
    return bool(reaching) and all(b.how == "param" for b, _f in reaching)


def unpassed_branch(ctx: "FileContext", node: cst.CSTNode) -> bool:
    """``node`` runs only when a ``forward`` parameter no call gives is not None
    (``if labels is not None:``, ``if self.use_ce and labels:``, the ``else`` of ``if labels is None:``)."""
    func = ctx.enclosing_function(node)
    if func is None or not unpassed_params(ctx, func):
        return False
    for test, holds in ctx._conditions(node, func):
        if any(unpassed_input(ctx, name) for name in _needs_given(test, holds, ctx, func)):
            return True
    return False


def _needs_given(test: cst.BaseExpression, holds: bool, ctx: "FileContext", func: "FuncInfo",
                 depth: int = 0) -> list:
    """The names ``test`` (true when ``holds``, else false) requires not None; through a local flag
    the function binds once (``track = ids is not None and batch is not None`` ... ``if track:``)."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return _needs_given(test.expression, not holds, ctx, func, depth)
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And) == holds:
        return _needs_given(test.left, holds, ctx, func, depth) + \
            _needs_given(test.right, holds, ctx, func, depth)  # `a and b` true / `a or b` false
    if isinstance(test, cst.Name) and test.value not in func.params and depth < 2:
        flag = _flag_value(ctx, func, test)
        if flag is not None:
            return _needs_given(flag, holds, ctx, func, depth + 1)
    if isinstance(test, cst.Name) and holds:
        return [test]
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and isinstance(test.left, cst.Name) \
            and isinstance(test.comparisons[0].comparator, cst.Name) \
            and test.comparisons[0].comparator.value == "None":
        op = test.comparisons[0].operator
        if isinstance(op, cst.IsNot) and holds or isinstance(op, cst.Is) and not holds:
            return [test.left]
    return []


def _flag_value(ctx: "FileContext", func: "FuncInfo", name: cst.Name):
    """What a local flag holds when the function binds it once, to a test (a comparison, ``and`` /
    ``or`` / ``not`` of tests), before reading it; else None."""
    bindings = func.bindings.get(name.value, ())
    if len(bindings) != 1 or bindings[0].how != "assign" or bindings[0].value is None:
        return None
    value = bindings[0].value
    if not isinstance(value, (cst.Comparison, cst.BooleanOperation, cst.UnaryOperation)):
        return None
    return value if ctx.sole_binding(name.value, name) is bindings[0] else None
