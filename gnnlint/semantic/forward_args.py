"""What do the module calls in this file pass for a ``forward`` parameter?

An unannotated ``forward`` parameter is presumed a tensor (kinds.py). A
module's own owner often passes it a Python value instead:
``self.label_embedder(labels, self.training)`` for ``def forward(self,
labels, train)`` -- ``train`` is a bool, and ``if train and p > 0:`` is
ordinary Python control flow, not a tensor condition.
``host_forward_param(ctx, func, param)`` says True when the file runs the
module class (``self.sub(...)``, ``sub(...)`` on an instance whose class
``class_of`` names) at least once and every such call passes, for
``param``, a Python value: a literal, ``self.training``, a ``not`` / ``and``
/ ``or`` of those, or an expression ``kind`` calls a scalar. Any call that
passes something else, or passes nothing for it (``*args``, the default),
keeps the old answer. Calls in other files are not read: precision first
for the findings the presumption makes (it only ever removes a tensor).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from gnnlint.semantic.model import ClassInfo, FuncInfo

if TYPE_CHECKING:
    from gnnlint.context import FileContext

_MAX_CALLS = 20
# `self.training` and its relatives on an nn.Module: Python bools
_MODULE_BOOLS = frozenset(("training",))


def host_forward_param(ctx: FileContext, func: FuncInfo, param: cst.Param) -> bool:
    cls = func.cls
    if cls is None or func.name != "forward" or param in func.node.params.kwonly_params:
        return False
    params = list(func.node.params.params)
    position = next((i for i, p in enumerate(params) if p is param), -1) - 1  # self is not passed
    if position < 0:
        return False
    calls = _module_calls(ctx).get(id(cls), [])
    if not calls:
        return False
    for call in calls[:_MAX_CALLS]:
        arg = _arg(call, position, param.name.value)
        if arg is None or not _host_value(ctx, arg):
            return False
    return True


def _module_calls(ctx: FileContext) -> dict:
    """``{id(ClassInfo): [call, ...]}``: the calls that run a local module class's forward."""
    index = getattr(ctx, "_module_calls_idx", None)
    if index is None:
        index = {}
        ctx._module_calls_idx = index  # set first: class_of may ask kinds again
        for call in ctx.all_calls():
            func = call.func
            if not isinstance(func, (cst.Name, cst.Attribute)) or ctx.local_callee(call) is not None:
                continue
            if isinstance(func, cst.Attribute) and not (isinstance(func.value, cst.Name)
                                                        and func.value.value == "self"):
                continue
            cls = ctx.class_of(func, call)
            if isinstance(cls, ClassInfo):
                index.setdefault(id(cls), []).append(call)
    return index


def _arg(call: cst.Call, position: int, name: str):
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg.value
    positional = [a for a in call.args if a.keyword is None]
    if any(a.star for a in call.args) or position >= len(positional):
        return None
    return positional[position].value


def _host_value(ctx: FileContext, expr: cst.BaseExpression) -> bool:
    if isinstance(expr, cst.Name) and expr.value in ("True", "False"):
        return True
    if isinstance(expr, (cst.Integer, cst.Float, cst.SimpleString)):
        return True
    if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self" \
            and expr.attr.value in _MODULE_BOOLS:
        return True
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Not):
        return _host_value(ctx, expr.expression)
    if isinstance(expr, cst.BooleanOperation):
        return _host_value(ctx, expr.left) and _host_value(ctx, expr.right)
    return ctx.kind(expr) == "scalar"
