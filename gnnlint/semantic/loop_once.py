"""Which lines of a loop body run on one iteration only?

``for i, batch in enumerate(loader): ... if i == 0: log_images(...)`` runs its
branch on the first batch only: once per pass over the loader, like code
after the loop -- not once per step (the labelling policy: once per epoch is
not a hazard), and a sync there must not be worded "every batch".

``first_iteration_only(ctx, node)``: ``node`` is in the body of an ``if``
whose test compares a loop counter with an integer literal (``i == 0``,
``0 == step``, ``not i``; one operand of an ``and`` suffices), the counter
being the target of the innermost enclosing ``for i in range(...)`` or the
first name of the innermost enclosing ``for i, x in enumerate(...)`` (an outer
loop's counter, ``if epoch == 0:`` inside the batch loop, runs the branch on
every batch of that epoch), not assigned in that loop's body. The loop
itself must not run per step: a loop over a committee of models inside an
ASE calculator's ``calculate()`` takes its first iteration on every MD step.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import libcst as cst

if TYPE_CHECKING:
    from gnnlint.context import FileContext

_COUNTING = ("range", "trange")
_WRAPPERS = ("tqdm", "iter", "list")


def first_iteration_only(ctx: "FileContext", node: cst.CSTNode) -> bool:
    child: cst.CSTNode = node
    for anc in ctx.ancestors(node):
        if isinstance(anc, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            return False
        if isinstance(anc, cst.If) and child is anc.body:
            names = _compared_with_literal(anc.test)
            loop = _innermost_loop(ctx, anc)
            if names and loop is not None and _counter(ctx, loop) in names and ctx.hot_region(loop) is None:
                return True
        child = anc
    return False


def _compared_with_literal(test: cst.BaseExpression) -> set:
    """The names the test requires to equal an integer literal."""
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        return _compared_with_literal(test.left) | _compared_with_literal(test.right)
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not) \
            and isinstance(test.expression, cst.Name):
        return {test.expression.value}  # `not i`: i == 0
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1 \
            and isinstance(test.comparisons[0].operator, cst.Equal):
        left, right = test.left, test.comparisons[0].comparator
        if isinstance(left, cst.Name) and isinstance(right, cst.Integer):
            return {left.value}
        if isinstance(right, cst.Name) and isinstance(left, cst.Integer):
            return {right.value}
    return set()


def _innermost_loop(ctx: "FileContext", node: cst.CSTNode) -> Optional[cst.For]:
    """The innermost ``for`` whose body holds ``node`` (an outer loop's counter, ``if epoch == 0:``
    inside the batch loop, still runs the branch on every batch of that epoch)."""
    child = node
    for anc in ctx.ancestors(node):
        if isinstance(anc, (cst.FunctionDef, cst.ClassDef, cst.Lambda, cst.While)):
            return None
        if isinstance(anc, cst.For) and child is anc.body:
            return anc
        child = anc
    return None


def _counter(ctx: "FileContext", loop: cst.For) -> Optional[str]:
    """The loop's counter: ``i`` of ``for i in range(n)`` / ``for i, x in enumerate(xs)``."""
    iterable = loop.iter
    while isinstance(iterable, cst.Call) and (ctx.last_part(iterable.func) or "") in _WRAPPERS and iterable.args:
        iterable = iterable.args[0].value
    if not isinstance(iterable, cst.Call):
        return None
    func = ctx.last_part(iterable.func) or ""
    target = loop.target
    if func in _COUNTING and isinstance(target, cst.Name):
        name = target.value
    elif func == "enumerate" and isinstance(target, cst.Tuple) and target.elements \
            and isinstance(target.elements[0].value, cst.Name):
        name = target.elements[0].value.value
    else:
        return None
    return None if name in ctx.names_bound_in(loop.body) else name
