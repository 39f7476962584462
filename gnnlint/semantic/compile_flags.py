"""Which branches of a class never run while its compiled model runs?

A class that compiles what it holds only under a flag (``if compile and
self.potential.model_name == "m3gnet": self.potential.model.forward =
torch.compile(...)`` in its ``__init__``) often switches other code with the
same flag (``self._use_direct_graph = direct_graph or compile``). When the
compiled model runs, the flag was on, so ``self._use_direct_graph`` is true and
code under ``if not self._use_direct_graph:`` -- or in the ``else`` of ``if
self._use_direct_graph and self.potential.model_name == "m3gnet":`` -- never
runs with it. A per-step sync there syncs an eager step, not a compiled one:
``hot_region`` and ``step_drive`` leave it out, and its calls are neither
marked per-step nor told to other files as per-step calls.

What holds when compiled, for a class ``K`` holding every compile site of the
file, each under ``if`` tests one of whose ``and`` conjuncts is a parameter of
its method (the flag):

- the conjuncts common to all sites that read only ``self`` (they mean the same
  in every method of ``K``);
- an attribute ``self.a`` that ``K`` assigns once, in a compiling method, as the
  flag or an ``or`` with the flag as an operand.

``compile_flag_unreached(node)`` is True when a line of a method of ``K`` runs
only under a test that is then false (also after an ``if <test>: return``).
"""
from __future__ import annotations

from typing import Optional

import libcst as cst


class CompileFlags:
    """Mixed into FileContext; reads the SemanticModel and the compile sites (regions.py)."""

    def compile_flag_unreached(self, node: cst.CSTNode) -> bool:
        if not self.compile_sites:
            return False
        func = self.enclosing_function(node)
        while func is not None and func.cls is None and func.parent is not None:
            func = func.parent
        if func is None or func.cls is None:
            return False
        held = self._memoised(("compile_flag", func.cls.name), lambda: self._held_when_compiled(func.cls), frozenset())
        if not held:
            return False
        for test, holds in self._conditions(node, func):
            value = _truth(test, held, self.module.code_for_node)
            if value is not None and value != holds:
                return True
        return False

    def _held_when_compiled(self, cls) -> frozenset:
        """The normalised texts of the expressions true whenever ``cls``'s compiled model runs."""
        common: Optional[set] = None
        flag_methods: dict = {}
        for site_node, _site in self.compile_sites:
            func = self.enclosing_function(site_node)
            if func is None or func.cls is not cls:
                return frozenset()  # compiled code this class does not switch
            conjuncts = [c for test in self._guard_tests(site_node, func) for c in _conjuncts(test)]
            flags = {c.value for c in conjuncts if isinstance(c, cst.Name) and c.value in func.params}
            if not flags:
                return frozenset()  # compiled unconditionally
            flag_methods.setdefault(func, set()).update(flags)
            texts = {_text(self.module.code_for_node, c) for c in conjuncts if _reads_only_self(c)}
            common = texts if common is None else common & texts
        held = set(common or ())
        for func, flags in flag_methods.items():
            for attr, values in cls.attrs.items():
                if len(values) == 1 and self.enclosing_function(values[0]) is func and _has_flag(values[0], flags):
                    held.add(f"self.{attr}")
        return frozenset(held)

    def _guard_tests(self, node: cst.CSTNode, func) -> list:
        """The ``if`` tests ``node`` runs under, in the body side, within ``func``."""
        out, child = [], node
        for anc in self.ancestors(node):
            if anc is func.node:
                break
            if isinstance(anc, cst.If) and child is anc.body:
                out.append(anc.test)
            child = anc
        return out


def _conjuncts(test: cst.BaseExpression) -> list:
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        return _conjuncts(test.left) + _conjuncts(test.right)
    return [test]


def _has_flag(value: cst.BaseExpression, flags: set) -> bool:
    """``flag`` or ``x or flag`` (any depth of ``or``)."""
    if isinstance(value, cst.Name):
        return value.value in flags
    return isinstance(value, cst.BooleanOperation) and isinstance(value.operator, cst.Or) \
        and (_has_flag(value.left, flags) or _has_flag(value.right, flags))


def _reads_only_self(expr: cst.BaseExpression) -> bool:
    """Every name ``expr`` reads is ``self`` (attributes of it, constants, comparisons)."""
    if isinstance(expr, cst.Name):
        return expr.value == "self"
    if isinstance(expr, cst.Attribute):
        return _reads_only_self(expr.value)
    if isinstance(expr, cst.Comparison):
        return _reads_only_self(expr.left) and all(_reads_only_self(c.comparator) for c in expr.comparisons)
    if isinstance(expr, cst.UnaryOperation):
        return _reads_only_self(expr.expression)
    return isinstance(expr, (cst.SimpleString, cst.Integer, cst.Float))


def _text(code_for_node, expr: cst.BaseExpression) -> str:
    return "".join(code_for_node(expr).split())


def _truth(test: cst.BaseExpression, held: frozenset, code_for_node) -> Optional[bool]:
    """Whether ``test`` is true when compiled (None: not known)."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        value = _truth(test.expression, held, code_for_node)
        return None if value is None else not value
    if isinstance(test, cst.BooleanOperation):
        left, right = _truth(test.left, held, code_for_node), _truth(test.right, held, code_for_node)
        if isinstance(test.operator, cst.And):
            return False if False in (left, right) else (True if left and right else None)
        return True if True in (left, right) else (False if left is False and right is False else None)
    return True if _text(code_for_node, test) in held else None
