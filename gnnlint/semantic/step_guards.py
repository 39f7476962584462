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
None.
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, Optional

import libcst as cst

from gnnlint.semantic.model import iter_children

if TYPE_CHECKING:
    from gnnlint.context import FileContext

_STEP_WORDS = re.compile(r"step|iter|log|freq|interval|every|print", re.IGNORECASE)
_MAX_TEXT = 48


def logging_guard(ctx: "FileContext", node: cst.CSTNode, loop: Optional[cst.CSTNode]) -> Optional[str]:
    child: cst.CSTNode = node
    for anc in ctx.ancestors(node):
        if anc is loop or isinstance(anc, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            return None
        if isinstance(anc, cst.If) and child is not anc.test and _step_test(anc.test):
            if child is anc.body:  # the `if` branch (an `else:` runs on the other steps)
                return _short(ctx.module.code_for_node(anc.test))
        child = anc
    return None


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


def _presence_test(node: cst.CSTNode) -> bool:
    """``x is None`` / ``x is not None``: whether something exists, not which step it is."""
    return isinstance(node, cst.Comparison) and all(
        isinstance(c.operator, (cst.Is, cst.IsNot)) and isinstance(c.comparator, cst.Name)
        and c.comparator.value == "None" for c in node.comparisons)


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _MAX_TEXT else text[: _MAX_TEXT - 1] + "…"
