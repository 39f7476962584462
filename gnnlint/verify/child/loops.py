"""How the loops of the user's files ran: per loop header, how many times it
was reached and how many compiled calls ran between its iterations.

A per-step finding names its step loop (``Finding.step_loop``); its verdict
counts the finding's events per iteration of that loop (a sync once every
ten epochs of a full-batch loop is a per-step sync under a condition; one
after a loop of 50 compiled batches is once per epoch). The coverage tracer
reports each line event of a loop header here: Python reaches a ``for`` or
``while`` header once per iteration (and once more when the loop ends).
"""
from __future__ import annotations

import ast
from typing import Callable


def loop_header_lines(filename: str) -> frozenset:
    """Lines of the ``for`` / ``while`` headers in a file (empty if unreadable)."""
    try:
        with open(filename, encoding="utf-8", errors="replace") as f:
            tree = ast.parse(f.read(), filename)
    except (OSError, SyntaxError, ValueError, RecursionError):
        return frozenset()
    lines = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.For, ast.AsyncFor)):
            lines.add(node.lineno)
        elif isinstance(node, ast.While):
            lines.update((node.lineno, node.test.lineno))
    return frozenset(lines)


class Iterations:
    """Per (file, header line): how often the header was reached and, for
    each time the compiled-call clock had moved since the previous time, by
    how much (``{calls: iterations}``): the compiled calls each iteration ran."""

    def __init__(self) -> None:
        self.clock: Callable[[], int] = lambda: 0
        self.loops: dict[tuple[str, int], list] = {}  # [hits, clock at the last hit, {delta: n}]

    def hit(self, filename: str, line: int) -> None:
        now = self.clock()
        rec = self.loops.get((filename, line))
        if rec is None:
            self.loops[(filename, line)] = [1, now, {}]
            return
        rec[0] += 1
        if now != rec[1]:
            deltas = rec[2]
            deltas[now - rec[1]] = deltas.get(now - rec[1], 0) + 1
            rec[1] = now

    def as_json(self, real_path: Callable[[str], str]) -> dict[str, dict[str, dict]]:
        """``{file: {line: {"hits": n, "calls": {delta: iterations}}}}`` for
        the loops whose iterations ran compiled code."""
        out: dict[str, dict[str, dict]] = {}
        for (fn, line), (hits, _, deltas) in self.loops.items():
            if deltas:
                out.setdefault(real_path(fn), {})[str(line)] = {
                    "hits": hits, "calls": {str(d): n for d, n in sorted(deltas.items())}}
        return out
