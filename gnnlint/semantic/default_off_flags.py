"""Does this line run only when an opt-in constructor switch is on, in a class another file compiles?

A library class takes a switch for eager-only runtime checks, off by default::

    class TBGFlowNet(TrajectoryBasedGFlowNet):
        def __init__(self, pf, pb, init_logZ=0.0, debug: bool = False):
            super().__init__(pf, pb, debug=debug)        # the base stores self.debug

        def loss(self, env, trajectories):               # compiled by another file's program
            ...
            if self.debug and torch.isnan(loss).any():   # not compiled: debug is off there
                raise ValueError("loss is nan")

The file compiles nothing itself; its methods run compiled because a program elsewhere compiles them
(a ``compiled`` fact), and that program builds the class with what it passes. A switch defaulting to
``False`` is off unless turned on; the check behind it is the eager debugging path, not the compiled one.
``default_off_branch(ctx, node)`` is True for a line in the body of ``if self.<flag>`` /
``if self.<flag> and ...`` or in the right operand of ``self.<flag> and ...``, where ``<flag>`` is a
parameter of the class's ``__init__`` (here, through the class's local bases) defaulting to ``False``,
and the class stores nothing but that parameter in ``self.<flag>`` here. Gate: the file has no compile call
and some ``compiled`` fact names a ``Class.method`` (asked by ``compiled_region``).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import libcst as cst

if TYPE_CHECKING:
    from gnnlint.context import FileContext


def _gate(ctx: "FileContext") -> bool:
    key = ("default_off_flags.gate",)
    if key not in ctx._memo:
        ctx._memo[key] = not ctx.compile_calls and any("." in name for name in ctx.project.compiled)
    return ctx._memo[key]


def _self_flag(expr: cst.BaseExpression) -> Optional[str]:
    if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self":
        return expr.attr.value
    return None


def _guard_flags(ctx: "FileContext", node: cst.CSTNode) -> list:
    """The ``self.<flag>`` names whose truth this line needs (an enclosing ``if`` body or ``and`` operand)."""
    out = []
    if isinstance(node, cst.BooleanOperation) and isinstance(node.operator, cst.And) \
            and (flag := _self_flag(node.left)) is not None:
        out.append(flag)  # `self.debug and x.isnan().any()` as a whole: its tensor is read only when on
    child = node
    for parent in ctx.ancestors(node):
        if isinstance(parent, cst.FunctionDef):
            break
        if isinstance(parent, cst.If) and child is parent.body:
            tests = [parent.test]
            while tests:
                test = tests.pop()
                if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
                    tests += [test.left, test.right]
                elif (flag := _self_flag(test)) is not None:
                    out.append(flag)
        elif isinstance(parent, cst.BooleanOperation) and isinstance(parent.operator, cst.And) \
                and child is parent.right and (flag := _self_flag(parent.left)) is not None:
            out.append(flag)
        child = parent
    return out


def _default_off(ctx: "FileContext", cls, flag: str) -> bool:
    """``flag`` is an ``__init__`` parameter defaulting to False, and ``self.<flag>`` holds only it here."""
    init = ctx.method_of(cls, "__init__")
    param = init.params.get(flag) if init is not None else None
    if param is None or not (isinstance(param.default, cst.Name) and param.default.value == "False"):
        return False
    for current in ctx.local_lineage(cls):
        for value in current.attrs.get(flag, ()):
            if not (isinstance(value, cst.Name) and value.value == flag):
                return False
    return True


def default_off_branch(ctx: "FileContext", node: cst.CSTNode) -> bool:
    if not _gate(ctx):
        return False
    func = ctx.enclosing_function(node)
    if func is None or func.cls is None:
        return False
    flags = _guard_flags(ctx, node)
    return any(_default_off(ctx, func.cls, flag) for flag in flags)
