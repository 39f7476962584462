"""Loops that leave on their first iteration: "does this loop body run once?"

Research scripts take one batch and stop: ``for batch in loader: ...; break``
(initialise lazy modules, profile one batch), ``for i, x in
enumerate(loader): ...; if i == 0: plot(...); exit(9)`` (an evaluation cut
short while debugging). The body runs once, so nothing in it is per step:
hot_loops.py does not make such a loop a hot loop (``runs_once``).

A loop is left on its first iteration when its body (not counting nested
loops and functions) has no ``continue`` and ends in ``break`` / ``return`` /
``raise`` / ``exit()`` / ``sys.exit()`` / ``quit()``, or holds an ``if`` on
the ``enumerate`` counter being 0 (no ``start=``) whose block ends so.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import libcst as cst

if TYPE_CHECKING:  # pragma: no cover
    from gnnlint.context import FileContext

_EXITS = ("exit", "sys.exit", "quit", "os._exit")


def runs_once(ctx: "FileContext", loop: cst.CSTNode) -> bool:
    """``loop`` (a For / While) leaves on its first iteration."""
    body = getattr(loop, "body", None)
    stmts = list(body.body) if isinstance(body, (cst.IndentedBlock, cst.SimpleStatementSuite)) else []
    if not stmts:
        return False
    counter = None
    leaves = _leaves(ctx, stmts[-1]) or (counter := _first_counter(ctx, loop)) is not None and any(
        isinstance(stmt, cst.If) and stmt.orelse is None and _is_first(stmt.test, counter)
        and isinstance(stmt.body, cst.IndentedBlock) and stmt.body.body and _leaves(ctx, stmt.body.body[-1])
        for stmt in stmts)
    return leaves and not _continues(body)  # (the visitor only for the few loops that leave)


def _leaves(ctx: "FileContext", stmt: cst.CSTNode) -> bool:
    if not isinstance(stmt, cst.SimpleStatementLine) or not stmt.body:
        return False
    small = stmt.body[-1]
    if isinstance(small, (cst.Break, cst.Return, cst.Raise)):
        return True
    return isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) \
        and (ctx.dotted(small.value.func) or "") in _EXITS


def _continues(body: cst.CSTNode) -> bool:
    """A ``continue`` of this loop (not of a nested one) skips to the next iteration."""
    found = []

    class _Finder(cst.CSTVisitor):
        def visit_Continue(self, node: cst.Continue) -> None:
            found.append(node)

        def visit_For(self, node: cst.For) -> bool:
            return False

        def visit_While(self, node: cst.While) -> bool:
            return False

        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return False

    body.visit(_Finder())
    return bool(found)


def _first_counter(ctx: "FileContext", loop: cst.CSTNode) -> Optional[str]:
    """``i`` of ``for i, x in enumerate(xs)`` (counting from 0)."""
    if not isinstance(loop, cst.For) or not isinstance(loop.iter, cst.Call) or len(loop.iter.args) != 1 \
            or ctx.resolve(loop.iter.func) != "enumerate":
        return None
    target = loop.target
    if isinstance(target, cst.Tuple) and len(target.elements) == 2 and isinstance(target.elements[0].value, cst.Name):
        return target.elements[0].value.value
    return None


def _is_first(test: cst.BaseExpression, counter: str) -> bool:
    """``counter == 0`` / ``0 == counter``."""
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1 \
            or not isinstance(test.comparisons[0].operator, cst.Equal):
        return False
    sides = (test.left, test.comparisons[0].comparator)
    return any(isinstance(a, cst.Name) and a.value == counter and isinstance(b, cst.Integer) and b.value == "0"
               for a, b in (sides, sides[::-1]))
