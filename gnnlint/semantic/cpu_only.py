"""Does this file pin its tensors to the CPU?

A CPU benchmark script sets ``device = torch.device("cpu")`` (or ``"cpu"``)
and moves its model and data there: every tensor it reads once per step is a
CPU tensor, and ``.item()`` of a CPU tensor does not wait for a device. The
answer is yes only when the file names no other device at all: every binding
of a ``*device*`` name is a CPU literal (no parameter named so, which a caller
could fill with ``"cuda"``), and the source never says ``cuda``, ``gpu``,
``mps``, ``xpu`` or ``accelerator`` (``torch.cuda.manual_seed(0)``, seeding
habit, and comments aside). A byte check first: most files never
assign a CPU device.
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING

import libcst as cst

if TYPE_CHECKING:
    from gnnlint.context import FileContext

_OTHER_DEVICES = re.compile(r"cuda|gpu|mps|xpu|accelerat|hpu|npu", re.I)
# seeding every generator is habit, not a device choice
_SEEDING = re.compile(r"torch\.cuda\.manual_seed(?:_all)?\(")
_COMMENT = re.compile(r"#[^\n]*")
_CPU_ASSIGN = re.compile(r"""device\w*\s*=\s*(?:torch\.device\(\s*)?['"]cpu['"]""")


def pins_cpu(ctx: "FileContext") -> bool:
    memo = ctx.__dict__
    if "_pins_cpu" not in memo:
        memo["_pins_cpu"] = _pins_cpu(ctx)
    return memo["_pins_cpu"]


def _pins_cpu(ctx: "FileContext") -> bool:
    code = ctx.module.code
    if not _CPU_ASSIGN.search(code) or _OTHER_DEVICES.search(_SEEDING.sub("", _COMMENT.sub("", code))):
        return False
    finder = _DeviceBindings()
    ctx.module.visit(finder)
    return finder.cpu > 0 and not finder.other


class _DeviceBindings(cst.CSTVisitor):
    """Counts bindings of names that contain ``device``: CPU literals and any other value."""

    def __init__(self) -> None:
        self.cpu = 0
        self.other = False

    def visit_Param(self, node: cst.Param) -> None:
        if "device" in node.name.value.lower():
            self.other = True

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            name = _name_of(target.target)
            if name is not None and "device" in name.lower():
                if _is_cpu(node.value):
                    self.cpu += 1
                else:
                    self.other = True

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        name = _name_of(node.target)
        if name is not None and "device" in name.lower() and node.value is not None:
            if _is_cpu(node.value):
                self.cpu += 1
            else:
                self.other = True


def _name_of(target: cst.BaseExpression):
    if isinstance(target, cst.Name):
        return target.value
    if isinstance(target, cst.Attribute):
        return target.attr.value
    return None


def _is_cpu(value: cst.BaseExpression) -> bool:
    if isinstance(value, cst.SimpleString):
        return value.evaluated_value == "cpu"
    if isinstance(value, cst.Call) and len(value.args) == 1 and isinstance(value.args[0].value, cst.SimpleString):
        func = value.func
        named = func.attr.value if isinstance(func, cst.Attribute) else getattr(func, "value", None)
        return named == "device" and value.args[0].value.evaluated_value == "cpu"
    return False
