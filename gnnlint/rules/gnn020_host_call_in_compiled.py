from __future__ import annotations

import re
from typing import Optional

import libcst as cst

from gnnlint.rules.base import Invalid, Rule, Valid

_LOG_METHODS = {"debug", "info", "warning", "warn", "error", "exception", "critical", "log"}
_LOGGER_NAMES = re.compile(r"^_*(log|logger|LOG|LOGGER|Logger|_logger|logging_)$")
_SEEDS = {"torch.manual_seed", "torch.random.manual_seed", "torch.cuda.manual_seed",
          "torch.cuda.manual_seed_all", "torch.seed"}


class HostCallInCompiled(Rule):
    """
    ## What it does
    Flags Python host calls that dynamo does not trace, inside compiled code:
    `print(...)` (of anything but a tensor, which GNN001 reports),
    `logging.*` and `logger.*` calls, `warnings.warn`, `time.*`,
    `random.*`, `np.random.*`, and `torch.manual_seed`.

    This is a lower-severity rule: print, logging and warnings are **info**
    (a break per call, typically in debug code you can see running);
    `time`, `random` and `manual_seed` are **warnings** (a break per call,
    and the value they return is baked into the graph as a constant, which
    recompiles when it changes). Calls in `except` handlers and `raise`
    paths, under `if not torch.compiler.is_compiling():` (also in a helper
    only called there), and print / logging / warnings in a guard clause
    (`if not items: warnings.warn(...); return None`; a loop's `... ; break`) or under a device
    test (`if not x.is_cuda: warnings.warn("slow CPU path")`), are not flagged; nor print / logging when the file registers the logger in
    `torch._dynamo.config.reorderable_logging_functions`.

    ## Why is this bad?
    Measured on torch 2.13.0 + torch_geometric 2.8.1
    (`shared/evidence/torch-2.13-pyg-2.8.1/e10_misc.py`): `print` ("Failed to
    trace builtin operator"), `logging.info` ("logging.Logger method not
    supported for non-export cases"), `warnings.warn` and
    `torch.manual_seed` (functions dynamo skips) each cost **1 graph break per
    call** (`log.debug` 2); `random.random()`, `np.random.rand()` and
    `time.perf_counter()` also break, and add 1–2 recompiles because the
    value they return becomes a guarded constant. `torch.rand(())` in their
    place: 0. Only torch 2.13 was measured.

    ## Example
    ```python
    class Net(torch.nn.Module):
        def forward(self, x, edge_index):
            start = time.perf_counter()
            x = self.conv(x, edge_index)
            logger.debug("conv took %.3f s", time.perf_counter() - start)
            return x
    ```

    ## Use instead
    Time and log outside the compiled model (around the call), draw random
    numbers with `torch.rand`, and seed once before training. For a logger
    that must stay, add it to `torch._dynamo.config.reorderable_logging_functions`
    (not measured).

    ## Fix safety
    No automatic fix: removing a log line or a timer changes what the
    program prints.

    ## References
    - [torch.compile: graph breaks](https://pytorch.org/docs/stable/torch.compiler_troubleshooting.html)
    - Evidence: `shared/evidence/torch-2.13-pyg-2.8.1/report.md` (10a, 10b)
    """

    code = "GNN020"
    name = "host-call-in-compiled"
    summary = "print / logging / warnings / time / random / manual_seed in compiled code (a break per call)"
    region = "compiled"
    severity = "info"  # print/logging/warnings; time/random/seed are warnings
    torch_versions = ">=2.0"
    triggers = (b"print(", b"log", b"warn", b"time.", b"random", b"manual_seed", b"perf_counter")

    VALID = (
        # a warning about the setup, issued only off the intended device
        Valid("""
import torch
import warnings
class Conv(torch.nn.Module):
    def forward(self, x, batch):
        if not x.is_cuda:
            warnings.warn("the CPU version is slow")
        if batch is not None and x.device != batch.device:
            warnings.warn("x and batch are on different devices")
        return x
model = torch.compile(Conv())
"""),
        # a torch.compiler.disable helper runs eagerly: dynamo calls it without tracing
        Valid("""
import time
import torch
@torch.compiler.disable
def stamp():
    return time.time()
class Net(torch.nn.Module):
    def forward(self, x):
        self.t = stamp()
        return x
model = torch.compile(Net())
"""),
        Valid("""
import time, logging
import torch
logger = logging.getLogger(__name__)
class Net(torch.nn.Module):
    def forward(self, x):
        if not torch.compiler.is_compiling():
            print("eager run")
        if x.dim() != 2:
            raise ValueError(f"bad input {logger}")
        return self.lin(x) * torch.rand(())
model = torch.compile(Net())
start = time.perf_counter()
logger.info("epoch took %.1f s", time.perf_counter() - start)
"""),
        # the decoding loop's way out: logged once, when the loop gives up
        Valid("""
import logging
import torch
log = logging.getLogger(__name__)
class Policy(torch.nn.Module):
    def forward(self, x, max_steps: int = 100):
        step = 0
        while step < 10:
            x = x + 1
            step += 1
            if step > max_steps:
                log.error(f"Exceeded maximum number of steps ({max_steps})")
                break
        return x
model = torch.compile(Policy())
"""),
        Valid("""
import torch
class Net(torch.nn.Module):
    def forward(self, x):
        print(x)  # a tensor: GNN001's
        return x
model = torch.compile(Net())
"""),
    )
    INVALID = (
        Invalid("""
import logging, random, time, warnings
import numpy as np
import torch
logger = logging.getLogger(__name__)
class Net(torch.nn.Module):
    def forward(self, x):
        start = time.perf_counter()
        print("shape", x.shape)
        logger.debug("forward")
        warnings.warn("slow path")
        if random.random() < 0.5:
            x = x + float(np.random.rand())
        torch.manual_seed(0)
        return x
model = torch.compile(Net())
""", lines=(8, 9, 10, 11, 12, 13, 14)),
    )

    def visit_Call(self, node: cst.Call) -> None:
        found = self._what(node)
        if found is None:
            return
        what, severity = found
        ctx = self.context
        region = ctx.compiled_region(node)
        if region is None or ctx.in_error_path(node):
            return
        if severity == "info" and (_in_guard_clause(ctx, node) or _under_device_test(ctx, node)):
            return  # `if not data_list: warn(...); return None`: a degenerate call, not every call
        extra = "; the value it returns is baked into the graph (a recompile when it changes)" \
            if severity == "warning" else ""
        resolved = ctx.resolve(node.func) or ""
        instead = " (or draw with `torch.rand`)" if resolved.startswith(("random.", "numpy.random.")) else ""
        self.report(node, f"{what} in the {region}: a graph break on every call. Dynamo does not trace this "
                          f"host call{extra}; move it out of the compiled code{instead}.",
                    severity=severity)

    def _what(self, node: cst.Call) -> Optional[tuple[str, str]]:
        ctx = self.context
        func = node.func
        resolved = ctx.resolve(func) or ""
        if resolved == "print":
            if ctx.lookup("print", node)[0] is not None or self._logging_reordered():
                return None
            if any(ctx.is_tensor(a.value) or _formats(ctx, a.value) for a in node.args if a.keyword is None):
                return None  # printing a tensor is a host sync: GNN001
            return "`print(...)`", "info"
        if resolved == "warnings.warn":
            return f"`{ctx.module.code_for_node(func)}(...)`", "info"
        if resolved.startswith("logging.") and resolved.split(".")[-1] in _LOG_METHODS:
            return None if self._logging_reordered() else (f"`{ctx.module.code_for_node(func)}(...)`", "info")
        if isinstance(func, cst.Attribute) and func.attr.value in _LOG_METHODS \
                and isinstance(func.value, cst.Name) and _LOGGER_NAMES.match(func.value.value):
            if self._logging_reordered():
                return None
            return f"`{func.value.value}.{func.attr.value}(...)`", "info"
        parts = resolved.split(".")
        if parts[0] == "time" and len(parts) == 2 and parts[1] in ("time", "perf_counter", "monotonic",
                                                                   "time_ns", "perf_counter_ns", "process_time"):
            return f"`{ctx.module.code_for_node(func)}()`", "warning"
        if parts[0] == "random" and len(parts) == 2:
            return f"`{ctx.module.code_for_node(func)}(...)`", "warning"
        if resolved.startswith("numpy.random."):
            return f"`{ctx.module.code_for_node(func)}(...)`", "warning"
        if resolved in _SEEDS:
            return f"`{ctx.module.code_for_node(func)}(...)`", "warning"
        return None

    def _logging_reordered(self) -> bool:
        return bool(self.context.attribute_nodes("reorderable_logging_functions"))


_DEVICE_ATTRS = ("is_cuda", "is_cpu", "device")


def _under_device_test(ctx, node: cst.CSTNode) -> bool:
    """Inside ``if not x.is_cuda:`` / ``if x.device != batch.device:``: a
    warning about the setup (CPU fallback, tensors on two devices), issued
    only when the program runs somewhere it was not meant to."""
    child = node
    for anc in ctx.ancestors(node):
        if isinstance(anc, (cst.FunctionDef, cst.ClassDef)):
            return False
        if isinstance(anc, cst.If) and child is anc.body:
            return _mentions_device(anc.test)
        child = anc
    return False


def _mentions_device(test: cst.BaseExpression) -> bool:
    todo = [test]
    while todo:
        expr = todo.pop()
        if isinstance(expr, cst.Attribute) and expr.attr.value in _DEVICE_ATTRS:
            return True
        if isinstance(expr, cst.UnaryOperation):
            todo.append(expr.expression)
        elif isinstance(expr, cst.BooleanOperation):
            todo += [expr.left, expr.right]
        elif isinstance(expr, cst.Comparison):
            todo += [expr.left] + [c.comparator for c in expr.comparisons]
        elif isinstance(expr, cst.Subscript):
            todo.append(expr.value)
        elif isinstance(expr, cst.Attribute):
            todo.append(expr.value)
    return False


def _in_guard_clause(ctx, node: cst.CSTNode) -> bool:
    """Inside ``if ...:`` whose block ends with ``return`` / ``raise`` / ``break``
    (``if step > max_steps: log.error(...); break``: the loop's way out, once)."""
    for anc in ctx.ancestors(node):
        if isinstance(anc, (cst.FunctionDef, cst.ClassDef)):
            return False
        if isinstance(anc, cst.If):
            body = anc.body.body if isinstance(anc.body, cst.IndentedBlock) else []
            last = body[-1] if body else None
            if isinstance(last, cst.SimpleStatementLine) and last.body \
                    and isinstance(last.body[-1], (cst.Return, cst.Raise, cst.Break)):
                return True
            return False
    return False


def _formats(ctx, expr: cst.BaseExpression) -> bool:
    if isinstance(expr, cst.FormattedString):
        return any(isinstance(p, cst.FormattedStringExpression) and ctx.is_tensor(p.expression) for p in expr.parts)
    return False
