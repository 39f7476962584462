"""What constant is this expression? ``literal_value``: a Python literal
(str/int/float/bool/None) an expression surely is, through one name binding
(arithmetic and ``max``/``min``/``abs``/``int``/``float`` of number literals
folded: ``max(8 * 32, 256)`` is 256), or ``_NO_VALUE``. Compile options (``mode="reduce-overhead"``, ``dynamic=flag``),
config values and lr arguments are read through it."""
from __future__ import annotations

from typing import Optional

import libcst as cst


class _NoValue:
    def __repr__(self) -> str:
        return "<no value>"


_NO_VALUE = _NoValue()


class Literals:
    """``literal_value``. Mixed into FileContext; reads the model's bindings through ``feed_binding``."""

    def literal_value(self, expr: Optional[cst.CSTNode], at: Optional[cst.CSTNode] = None, depth: int = 0):
        """A Python literal (str/int/float/bool/None) an expression surely is,
        through one name binding; ``_NO_VALUE`` otherwise."""
        if expr is None or depth > 3:
            return _NO_VALUE
        if isinstance(expr, cst.SimpleString):
            return expr.evaluated_value
        if isinstance(expr, (cst.Integer, cst.Float)):
            return expr.evaluated_value
        if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus) \
                and isinstance(expr.expression, (cst.Integer, cst.Float)):
            return -expr.expression.evaluated_value
        if isinstance(expr, cst.Name):
            if expr.value in ("True", "False", "None"):
                return {"True": True, "False": False, "None": None}[expr.value]
            binding = self.feed_binding(expr.value, at or expr)
            if binding is not None and binding.how == "assign":
                return self.literal_value(binding.value, binding.value, depth + 1)
        if isinstance(expr, cst.BinaryOperation):
            return _fold(type(expr.operator), [self.literal_value(expr.left, at or expr, depth + 1),
                                               self.literal_value(expr.right, at or expr, depth + 1)])
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value in _FOLDED_CALLS \
                and expr.args and all(a.keyword is None and not a.star for a in expr.args) \
                and self.resolve(expr.func) in (expr.func.value, f"builtins.{expr.func.value}") \
                and expr.func.value not in self.functions:  # not shadowed by a `def max` of the file
            # max(8 * 32, 256): a constant expression of number literals is that number
            return _fold(expr.func.value, [self.literal_value(a.value, at or expr, depth + 1) for a in expr.args])
        return _NO_VALUE


_FOLDED_OPS = {
    cst.Add: lambda a, b: a + b, cst.Subtract: lambda a, b: a - b, cst.Multiply: lambda a, b: a * b,
    cst.Divide: lambda a, b: a / b, cst.FloorDivide: lambda a, b: a // b, cst.Modulo: lambda a, b: a % b,
}
_FOLDED_CALLS = {
    "max": lambda *a: max(a), "min": lambda *a: min(a), "abs": abs, "int": int, "float": float,
}


def _fold(op, values: list):
    """``op`` (an arithmetic operator type or a builtin's name) over number
    literals; ``_NO_VALUE`` when a value is not a number or the op fails."""
    fn = _FOLDED_OPS.get(op) if not isinstance(op, str) else _FOLDED_CALLS.get(op)
    if fn is None or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        return _NO_VALUE
    try:
        return fn(*values)
    except (ArithmeticError, TypeError, ValueError):
        return _NO_VALUE
