"""Syntax helpers about call arguments and literal keys: pure functions of
libcst nodes, no analysis (so any rule or analysis may import them).

``arg_of(call, name, position)`` finds the argument bound to a parameter,
``passed`` says whether a non-None value is passed for it, ``has_star_args``,
``is_none``, ``param_position`` (a local function's parameter index), and
``literal_string_tuple`` (``("author", "writes", "paper")`` as a tuple).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import libcst as cst

if TYPE_CHECKING:
    from gnnlint.semantic.model import FuncInfo


def arg_of(call: cst.Call, name: str, position: int) -> Optional[cst.Arg]:
    """The argument bound to parameter ``name`` (at ``position``), if passed."""
    positional = 0
    for arg in call.args:
        if arg.keyword is not None:
            if arg.keyword.value == name:
                return arg
            continue
        if arg.star:
            return None
        if positional == position:
            return arg
        positional += 1
    return None


def has_star_args(call: cst.Call) -> bool:
    return any(arg.star for arg in call.args)


def is_none(expr: Optional[cst.BaseExpression]) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "None"


def passed(call: cst.Call, name: str, position: int) -> bool:
    """Whether a non-None value is passed for a parameter (``**kwargs``/``*args``
    count as passed: we cannot tell)."""
    if has_star_args(call):
        return True
    arg = arg_of(call, name, position)
    return arg is not None and not is_none(arg.value)


def param_position(info: FuncInfo, name: str) -> tuple[int, bool]:
    """(positional index counting from 0 for the first non-self parameter,
    keyword-only?) of a parameter."""
    params = info.node.params
    positional = list(params.posonly_params) + list(params.params)
    skip = 1 if info.cls is not None and positional and positional[0].name.value in ("self", "cls") else 0
    for i, param in enumerate(positional):
        if param.name.value == name:
            return i - skip, False
    return -1, True


def literal_string_tuple(key: cst.BaseExpression) -> Optional[tuple[str, ...]]:
    if not isinstance(key, cst.Tuple):
        return None
    out = []
    for element in key.elements:
        if not isinstance(element.value, cst.SimpleString):
            return None
        value = element.value.evaluated_value
        if not isinstance(value, str):
            return None
        out.append(value)
    return tuple(out) if len(out) > 1 else None
