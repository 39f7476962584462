"""Per-step code that runs only on some steps: "which `if` makes this sync a
logging-step sync?"

A per-step sync under ``if global_step % 500 == 0:`` (or ``if step <= 100 or
...``, ``if samples_since_logging >= cfg.logging_frequency:``) still costs a
sync on those steps -- the labelling policy counts conditional logging in a
hot loop -- but not on *every* step, and a message must say which.
``logging_guard(ctx, node, loop)`` is the innermost ``if`` around ``node``,
inside the loop body (or inside the per-step function when the loop is in
another file or a framework's), whose test reads a step counter: a ``%`` or a
name about steps, iterations, logging or a frequency. Its test's source, or
None. An early exit before it in a block around it (``if step % 10 != 0:
continue``, ``if not timing.call_now(step): return``) is such an ``if`` too,
negated.

The guard travels with a call: a helper every per-step call of which sits
under the same step-counter ``if`` (``if N % 500 == 0: check_grads(model)``)
syncs on those steps too. ``call_guard(ctx, func)`` is that test for a hot
function of this file, from its local per-step callers and from the
``stepped`` facts of the files that call it (``GUARD_FIELD``,
stepped_payload.py); one caller without it (or a framework / Lightning entry, a
``forward``) and the helper runs every step: None.
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, Optional

import libcst as cst

from gnnlint.semantic.model import iter_children
from gnnlint.semantic.stepped_payload import stepped_guard

if TYPE_CHECKING:
    from gnnlint.context import FileContext

GUARD_FIELD = "@if "  # the last field of a ``stepped`` payload: "...|callee[|entry]|@if N % 500 == 0"
_STEP_WORDS = re.compile(r"step|iter|log|freq|interval|every|print", re.IGNORECASE)
_MAX_TEXT = 48


def logging_guard(ctx: "FileContext", node: cst.CSTNode, loop: Optional[cst.CSTNode]) -> Optional[str]:
    child: cst.CSTNode = node
    for anc in ctx.ancestors(node):
        if anc is loop or isinstance(anc, (cst.ClassDef, cst.Lambda)):
            return None
        if isinstance(anc, cst.FunctionDef):  # a hot helper: the guard around its per-step calls
            info = ctx.func_info.get(anc)
            return call_guard(ctx, info) if info is not None and info in ctx.hot_funcs else None
        if isinstance(anc, cst.If) and child is not anc.test and (
                _step_test(anc.test) or _outer_count_test(ctx, anc.test, loop)):
            if child is anc.body:  # the `if` branch (an `else:` runs on the other steps)
                return _short(ctx.module.code_for_node(anc.test))
        if isinstance(anc, cst.IndentedBlock):
            guard = _early_exit_guard(ctx, anc, child)
            if guard is not None:
                return guard
        child = anc
    return None


_NEGATED = {cst.Equal: "!=", cst.NotEqual: "==", cst.LessThan: ">=", cst.GreaterThanEqual: "<",
            cst.GreaterThan: "<=", cst.LessThanEqual: ">"}


def _early_exit_guard(ctx: "FileContext", block: cst.IndentedBlock, stmt: cst.CSTNode) -> Optional[str]:
    """``if step % N != 0: continue`` (or ``if not timing.call_now(step): return``)
    before ``stmt`` in ``block``: what follows runs on the steps where the test fails."""
    for before in block.body:
        if before is stmt:
            return None
        if isinstance(before, cst.If) and before.orelse is None and _only_exit(before.body) \
                and _step_test(before.test):
            return _short(_negation(ctx, before.test))
    return None


def _only_exit(body: cst.BaseSuite) -> bool:
    stmts = body.body if isinstance(body, cst.IndentedBlock) else (body,)
    if len(stmts) != 1 or not isinstance(stmts[0], (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
        return False
    small = stmts[0].body
    return len(small) == 1 and isinstance(small[0], (cst.Return, cst.Continue))


def _negation(ctx: "FileContext", test: cst.BaseExpression) -> str:
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return ctx.module.code_for_node(test.expression)
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and not test.lpar \
            and type(test.comparisons[0].operator) in _NEGATED:
        comp = test.comparisons[0]
        return f"{ctx.module.code_for_node(test.left)} {_NEGATED[type(comp.operator)]} " \
               f"{ctx.module.code_for_node(comp.comparator)}"
    return f"not ({ctx.module.code_for_node(test)})"


def _step_test(test: cst.BaseExpression) -> bool:
    todo: list[cst.CSTNode] = [test]
    while todo:
        current = todo.pop()
        if isinstance(current, cst.BinaryOperation) and isinstance(current.operator, cst.Modulo):
            return True
        if _presence_test(current):
            continue  # `logger is not None`, `test_iter is None`: the same on every step
        if isinstance(current, cst.Name) and _STEP_WORDS.search(current.value):
            return True
        if isinstance(current, cst.Attribute) and _STEP_WORDS.search(current.attr.value):
            return True
        if isinstance(current, cst.SimpleString) and _STEP_WORDS.search(current.value):
            return True  # cfg["print_every"]
        todo.extend(iter_children(current))
    return False


def _outer_count_test(ctx: "FileContext", test: cst.BaseExpression, loop: Optional[cst.CSTNode]) -> bool:
    """``if epoch == 0:`` in a batch loop: a comparison of the counter of a loop around
    the hot one (``for epoch in range(n)``, ``for i, x in enumerate(xs)``), which holds
    on every step of some passes only."""
    if loop is None or not isinstance(test, cst.Comparison) or not isinstance(test.left, cst.Name) \
            or any(isinstance(c.operator, (cst.Is, cst.IsNot, cst.In, cst.NotIn)) for c in test.comparisons):
        return False
    for anc in ctx.ancestors(loop):
        if isinstance(anc, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            return False
        if isinstance(anc, cst.For) and isinstance(anc.iter, cst.Call) and isinstance(anc.iter.func, cst.Name):
            target = anc.target
            if anc.iter.func.value == "enumerate" and isinstance(target, cst.Tuple) and target.elements:
                target = target.elements[0].value
            elif anc.iter.func.value != "range":
                continue
            if isinstance(target, cst.Name) and target.value == test.left.value:
                return True
    return False


def _presence_test(node: cst.CSTNode) -> bool:
    """``x is None`` / ``x is not None``: whether something exists, not which step it is."""
    return isinstance(node, cst.Comparison) and all(
        isinstance(c.operator, (cst.Is, cst.IsNot)) and isinstance(c.comparator, cst.Name)
        and c.comparator.value == "None" for c in node.comparisons)


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _MAX_TEXT else text[: _MAX_TEXT - 1] + "…"


def call_guard(ctx: "FileContext", func) -> Optional[str]:
    """The step-counter test every per-step call of the hot function ``func``
    runs under (the same text for all of them), or None."""
    key = ("call_guard", func)
    memo = ctx._memo
    if key in memo:
        return memo[key]
    memo[key] = None  # a cycle of per-step calls: no guard
    memo[key] = _call_guard(ctx, func)
    return memo[key]


def _call_guard(ctx: "FileContext", func) -> Optional[str]:
    from gnnlint.semantic.stepped_overrides import stepped_items
    from gnnlint.semantic.vocab import LIGHTNING_STEP_HOOKS

    if func.name == "forward" or func.name in LIGHTNING_STEP_HOOKS or func in ctx.framework_step_entries():
        return None  # run every step by the model call / the framework, whatever else calls them
    guards: set = set()
    for stepped_key, why in stepped_items(ctx).items():  # another file calls it per step
        if func in ctx.stepped_functions(stepped_key):
            guard = stepped_guard(why)
            if guard is None:
                return None
            guards.add(guard)
    for call in ctx._step_analysis()._callers(func):
        if ctx.step_unreached(call):
            continue
        loop = _hot_loop_of(ctx, call)
        if loop is None:
            outer = ctx.enclosing_function(call)
            if outer is None or outer is func or outer not in ctx.hot_funcs:
                continue  # not a per-step call (once before or after the loop)
        guard = logging_guard(ctx, call, loop)  # (in a hot helper: up to its own callers' guard)
        if guard is None:
            return None
        guards.add(guard)
    return guards.pop() if len(guards) == 1 else None


def _hot_loop_of(ctx: "FileContext", node: cst.CSTNode) -> Optional[cst.CSTNode]:
    """The hot loop of the function holding ``node`` whose body holds it."""
    child = node
    for anc in ctx.ancestors(node):
        if anc in ctx.hot_loops and child is getattr(anc, "body", None):
            return anc
        if isinstance(anc, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            return None
        child = anc
    return None
