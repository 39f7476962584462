from __future__ import annotations

from typing import Optional

import libcst as cst

from gnnlint.context import _NO_VALUE
from gnnlint.rules.base import Invalid, Rule, Valid

_CONFIG = "torch._dynamo.config"
# Limits and their defaults on torch >= 2.1 (8; 256 for the accumulated one).
_LIMITS = {
    "cache_size_limit": 8, "recompile_limit": 8,
    "accumulated_cache_size_limit": 256, "accumulated_recompile_limit": 256,
}
_SUPPRESS = "suppress_errors"
_ENV_SUPPRESS = "TORCHDYNAMO_SUPPRESS_ERRORS"


def _names_in(node: cst.CSTNode) -> list:
    """The variables ``node`` reads: not the functions it calls (``int``, ``max``), not attribute names."""
    out, todo = [], [node]
    while todo:
        current = todo.pop()
        if isinstance(current, cst.Name):
            out.append(current)
        elif isinstance(current, cst.Call):
            todo.extend(a.value for a in current.args)
            if not isinstance(current.func, cst.Name):
                todo.append(current.func)
        elif isinstance(current, cst.Attribute):
            todo.append(current.value)
        else:
            todo.extend(current.children)
    return out


def _assigns_in(scope: cst.CSTNode) -> list:
    """The assignments of ``scope``, not those of functions nested in it."""
    out, todo = [], list(scope.children)
    while todo:
        current = todo.pop()
        if isinstance(current, cst.Assign):
            out.append(current)
        if not isinstance(current, (cst.FunctionDef, cst.ClassDef)):
            todo.extend(current.children)
    return out


class HiddenCompileErrors(Rule):
    """
    ## What it does
    Flags settings that hide `torch.compile` problems instead of fixing them:

    - `torch._dynamo.config.suppress_errors = True` (also through an alias
      such as `import torch._dynamo.config as dcfg`, `setattr(...)`,
      `torch._dynamo.config.patch(suppress_errors=True)`, or
      `os.environ["TORCHDYNAMO_SUPPRESS_ERRORS"] = "1"`);
    - raising `torch._dynamo.config.cache_size_limit` / `recompile_limit`
      above 8, or `accumulated_cache_size_limit` /
      `accumulated_recompile_limit` above 256 (by assignment, `+=`,
      `config.patch(...)`, or `torch.compile(..., recompile_limit=N)`).

    The finding points at the assignment (or the call).

    ## Why is this bad?
    With `suppress_errors`, a frame that fails to compile silently runs
    eager: the program "works", only slower, and the error that explains why
    is a log line nobody reads. A raised recompile limit hides a recompile
    storm: each recompile is a full trace and compile (seconds to tens of
    seconds for a GNN), and the usual causes — batches of varying size
    without `dynamic=True`, a Python-float lr changed by a scheduler, a Python
    int that changes every step — have real fixes (GNN007, GNN002). When the
    default limit is hit, torch says so and which guard failed; with the limit
    raised it keeps compiling.

    Not flagged: `suppress_errors = False`, limits set at or below the
    default (`recompile_limit = 1` with `fail_on_recompile_limit_hit` is a
    good way to catch regressions; constant expressions are evaluated:
    `max(8 * 32, 256)` is the default 256). A limit set from an expression gnnlint
    cannot evaluate is flagged: it is almost always a raise. An accumulated
    limit computed from the value a per-frame limit set in the same function
    takes (`cache_size_limit = int(n)`, then `accumulated_cache_size_limit =
    max(8 * int(n), 256)`) follows it: one setting, reported once, at the
    per-frame limit. The names
    `recompile_limit` / `accumulated_recompile_limit` exist since torch 2.7
    (pytorch/pytorch#143709); the old `cache_size_limit` names are aliases.

    ## Example
    ```python
    torch._dynamo.config.suppress_errors = True
    torch._dynamo.config.cache_size_limit = 256
    model = torch.compile(model)
    ```

    ## Use instead
    ```python
    model = torch.compile(model, dynamic=True)  # and fix what TORCH_LOGS=recompiles reports
    ```

    ## Fix safety
    No automatic fix: removing the setting surfaces the errors or recompiles
    it was hiding; the real fix is elsewhere.

    ## References
    - [torch.compile troubleshooting: recompilations, `recompile_limit`](https://pytorch.org/docs/stable/torch.compiler_troubleshooting.html)
    - [torch._dynamo.config: `suppress_errors`, `recompile_limit`](https://github.com/pytorch/pytorch/blob/main/torch/_dynamo/config.py)
    - [pytorch/pytorch#143709: cache limit renamed recompile limit](https://github.com/pytorch/pytorch/pull/143709)
    """

    code = "GNN011"
    name = "hidden-compile-errors"
    severity = "error"  # compile failures are hidden and the code runs eagerly
    summary = "`suppress_errors = True` or a raised dynamo recompile limit hides compile failures"
    triggers = (b"suppress_errors", b"cache_size_limit", b"recompile_limit", b"SUPPRESS_ERRORS")

    VALID = (
        Valid("""
import torch
torch._dynamo.config.suppress_errors = False
torch._dynamo.config.recompile_limit = 1
torch._dynamo.config.fail_on_recompile_limit_hit = True
"""),
        Valid("""
import torch
torch._dynamo.config.cache_size_limit = 8
limit = torch._dynamo.config.cache_size_limit
"""),
        Valid("""
config = {"suppress_errors": True}
cache_size_limit = 64
"""),
        Valid("""
import torch
torch._dynamo.config.accumulated_cache_size_limit = max(8 * 32, 256)
torch._dynamo.config.cache_size_limit = 4 * 2
"""),
    )
    INVALID = (
        Invalid("""
import torch
torch._dynamo.config.suppress_errors = True
torch._dynamo.config.cache_size_limit = 64
""", lines=(3, 4)),
        Invalid("""
import torch._dynamo.config as dcfg
dcfg.recompile_limit = args.recompile_limit
dcfg.accumulated_cache_size_limit *= 4
""", lines=(3, 4)),
        Invalid("""
import os
import torch
from torch._dynamo import config
os.environ["TORCHDYNAMO_SUPPRESS_ERRORS"] = "1"

@config.patch(suppress_errors=True)
def run():
    pass

with torch._dynamo.config.patch("cache_size_limit", 1024):
    pass
setattr(torch._dynamo.config, "suppress_errors", True)
model = torch.compile(model, recompile_limit=64)
""", lines=(5, 7, 11, 13, 14)),
        Invalid("""
import torch

def set_limits(limit, floor):
    torch._dynamo.config.cache_size_limit = int(limit)
    torch._dynamo.config.accumulated_cache_size_limit = max(8 * int(limit), 256)
    torch._dynamo.config.accumulated_recompile_limit = max(8 * int(floor), 256)
    torch._dynamo.config.recompile_limit = 2 * 16
""", lines=(5, 7, 8)),
    )

    # -- assignments ----------------------------------------------------------
    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            message = self._assignment_message(target.target, node.value)
            if message:
                self.report(node, message)
                return

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            message = self._assignment_message(node.target, node.value)
            if message:
                self.report(node, message)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        setting = self._setting(node.target)
        if setting in _LIMITS and isinstance(node.operator, (cst.AddAssign, cst.MultiplyAssign,
                                                              cst.PowerAssign, cst.LeftShiftAssign)):
            self.report(node, self._limit_message(setting, None, self.context.module.code_for_node(node.target)))

    def _setting(self, target: cst.BaseExpression) -> Optional[str]:
        if not isinstance(target, cst.Attribute):
            return None  # `limit = torch._dynamo.config.cache_size_limit` reads it
        resolved = self.context.resolve(target)
        if resolved and resolved.startswith(_CONFIG + "."):
            name = resolved[len(_CONFIG) + 1:]
            if name == _SUPPRESS or name in _LIMITS:
                return name
        return None

    def _assignment_message(self, target: cst.BaseExpression, value: cst.BaseExpression) -> Optional[str]:
        ctx = self.context
        setting = self._setting(target)
        if setting == _SUPPRESS:
            if self._truthy(value):
                return self._suppress_message()
            return None
        if setting in _LIMITS:
            return self._limit_check(setting, value, ctx.module.code_for_node(target))
        if isinstance(target, cst.Subscript) and ctx.resolve(target.value) == "os.environ" \
                and len(target.slice) == 1 and isinstance(target.slice[0].slice, cst.Index) \
                and ctx.literal_value(target.slice[0].slice.value) == _ENV_SUPPRESS \
                and self._truthy(value):
            return self._suppress_message(env=True)
        return None

    def _truthy(self, value: cst.BaseExpression) -> bool:
        literal = self.context.literal_value(value, value)
        if literal is _NO_VALUE:
            return False
        if isinstance(literal, str):
            return literal.strip().lower() not in ("", "0", "false", "no", "off")
        return bool(literal)

    def _limit_check(self, setting: str, value: cst.BaseExpression, spelled: Optional[str] = None) -> Optional[str]:
        literal = self.context.literal_value(value, value)
        if literal is _NO_VALUE:
            if setting.startswith("accumulated_") and self._follows_per_frame_limit(value):
                return None  # one setting, reported once: at the per-frame limit it is computed from
            return self._limit_message(setting, None, spelled)
        if isinstance(literal, (int, float)) and not isinstance(literal, bool) and literal > _LIMITS[setting]:
            return self._limit_message(setting, literal, spelled)
        return None

    def _follows_per_frame_limit(self, value: cst.BaseExpression) -> bool:
        """The accumulated limit is computed from a value that a per-frame
        limit set in the same function (or module) also takes:
        ``cache_size_limit = int(n)`` then ``accumulated_cache_size_limit =
        max(8 * int(n), 256)`` -- it follows the per-frame limit, whose finding
        names the raise."""
        names = {n.value for n in _names_in(value)}
        func = self.context.enclosing_function(value)
        scope = func.node if func is not None else self.context.module
        for node in _assigns_in(scope):
            for target in node.targets:
                setting = self._setting(target.target)
                if setting in _LIMITS and not setting.startswith("accumulated_") \
                        and names & {n.value for n in _names_in(node.value)}:
                    return True
        return False

    @staticmethod
    def _suppress_message(env: bool = False) -> str:
        how = "`TORCHDYNAMO_SUPPRESS_ERRORS`" if env else "`torch._dynamo.config.suppress_errors`"
        return (f"{how} hides every compile failure: the model silently runs uncompiled, with no error. "
                f"The cause is only a log line; remove it and fix the failure (or wrap the offending code in "
                f"`torch.compiler.disable`).")

    @staticmethod
    def _limit_message(setting: str, value, spelled: Optional[str] = None) -> str:
        default = _LIMITS[setting]
        raised = f"to {value}" if value is not None else "(above its default of %d)" % default
        return (f"Raising `{spelled or 'torch._dynamo.config.' + setting}` {raised} hides a recompile storm: "
                f"every extra recompile is a full compile. The default limit ({default}) is what reports the "
                f"failing guard; find it with `TORCH_LOGS=recompiles` and fix the cause (`dynamic=True` for "
                f"variable-size batches, a tensor lr, ...).")

    # -- calls: config.patch(...), setattr(config, ...), torch.compile(recompile_limit=N) --
    def visit_Call(self, node: cst.Call) -> None:
        ctx = self.context
        resolved = ctx.resolve(node.func) or ""
        if resolved == _CONFIG + ".patch":
            self._check_patch(node)
        elif resolved == "setattr" and len(node.args) >= 3 and ctx.resolve(node.args[0].value) == _CONFIG:
            name = ctx.literal_value(node.args[1].value)
            message = self._pair_message(name, node.args[2].value)
            if message:
                self.report(node, message)
        elif resolved in ("torch.compile", "torch_geometric.compile"):
            for arg in node.args:
                if arg.keyword is not None and arg.keyword.value == "recompile_limit":
                    message = self._limit_check("recompile_limit", arg.value,
                                                f"{ctx.module.code_for_node(node.func)}(recompile_limit=...)")
                    if message:
                        self.report(arg, message)

    def _pair_message(self, name, value: cst.BaseExpression) -> Optional[str]:
        if name == _SUPPRESS:
            return self._suppress_message() if self._truthy(value) else None
        if name in _LIMITS:
            return self._limit_check(name, value)
        return None

    def _check_patch(self, node: cst.Call) -> None:
        ctx = self.context
        args = list(node.args)
        messages = []
        if args and args[0].keyword is None and isinstance(args[0].value, cst.Dict):
            for element in args[0].value.elements:
                if isinstance(element, cst.DictElement):
                    messages.append(self._pair_message(ctx.literal_value(element.key), element.value))
        elif len(args) >= 2 and args[0].keyword is None and args[1].keyword is None:
            messages.append(self._pair_message(ctx.literal_value(args[0].value), args[1].value))
        for arg in args:
            if arg.keyword is not None:
                messages.append(self._pair_message(arg.keyword.value, arg.value))
        message = next((m for m in messages if m), None)
        if message:
            self.report(node, message)
