"""Dead None branches: "is this line in a branch a parameter filled earlier can no longer take?"

``if dim_size is None: dim_size = index.max().item() + 1`` and, further down
the same function, ``if dim_size is not None: ... else: size = int(index.max())``:
after the fill the name is never None, so the ``else`` never runs (the first
branch may; the second may not). ``none_filled_unreached(node)`` says so, and
``compiled_region`` (regions.py) leaves such lines out.
"""
from __future__ import annotations

from typing import Optional

import libcst as cst


class NoneFilled:
    """Branches needing a name None after it was filled. Mixed into FileContext."""

    def none_filled_unreached(self, node: cst.CSTNode) -> bool:
        func = self.enclosing_function(node)
        if func is None:
            return False
        return any(must_be_none and self._filled_before(name, test_if)
                   for name, must_be_none, test_if in self.enclosing_none_tests(node, func))

    def _filled_before(self, name: str, test_if: cst.If) -> bool:
        """An earlier ``if name is None: name = <never None>`` in the same block,
        and every definition of ``name`` reaching ``test_if`` is the parameter
        (or first binding) or that fill."""
        block = self.parent.get(test_if)
        body = getattr(block, "body", None)
        if not isinstance(body, (list, tuple)) or test_if not in body:
            return False
        fills = []
        for stmt in body[:body.index(test_if)]:
            fill = self._none_fill(stmt, name)
            if fill is not None:
                fills.append(fill)
        if not fills:
            return False
        reaching = self.reaching(name, test_if.test)
        inside = [b for b, _f in reaching if any(b.node is f for f in fills)]
        return bool(inside) and len(reaching) - len(inside) <= 1

    def _none_fill(self, stmt: cst.CSTNode, name: str) -> Optional[cst.CSTNode]:
        """``if name is None: name = <never None>`` (no else): the assignment statement."""
        if not isinstance(stmt, cst.If) or stmt.orelse is not None or self._none_test(stmt.test) != (name, True):
            return None
        # the fill sits on a simple line of the `if` body (`if x is None: x = 0` or an indented
        # `x = ...` line); a nested compound statement (`if`, `for`) is no unconditional fill
        smalls = [s for line in stmt.body.body
                  for s in (line.body if isinstance(line, cst.SimpleStatementLine) else (line,))]
        assigns = [s for s in smalls
                   if isinstance(s, cst.Assign) and len(s.targets) == 1
                   and isinstance(s.targets[0].target, cst.Name) and s.targets[0].target.value == name]
        if len(assigns) != 1 or not self._never_none(assigns[0].value, assigns[0], 0):
            return None
        return assigns[0]
