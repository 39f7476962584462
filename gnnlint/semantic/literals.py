"""What constant is this expression? ``literal_value``: a Python literal
(str/int/float/bool/None) an expression surely is, through one name binding,
or ``_NO_VALUE``. Compile options (``mode="reduce-overhead"``, ``dynamic=flag``),
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
        return _NO_VALUE
