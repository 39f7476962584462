"""Does this call get slices of a chunked ``range`` loop?

``for start in range(0, n, size): end = min(start + size, n); f(x[start:end])``
walks a tensor in chunks of ``size`` rows: every chunk has ``size`` rows but
the last, which has ``n % size`` -- a second shape for whatever the chunk is
fed to. A compiled function called with such slices (GNN007) sees two sizes,
so it recompiles once (the default ``dynamic=None``) or every new remainder
(``dynamic=False``), like the last partial batch of a loader.

``range_chunks(ctx, loop, target, iterable, call, func)`` answers it for
``feeds.py`` (the loop is a ``for``; ``range``/``trange`` with a step, also
inside ``tqdm(...)``; the call's arguments come from subscripts sliced by the
loop variable or by names computed from it, ``end = min(start + size, n)``).
The description it returns names the loop for messages.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import libcst as cst

if TYPE_CHECKING:
    from gnnlint.context import FileContext
    from gnnlint.semantic.model import FuncInfo

_RANGES = ("range", "builtins.range", "tqdm.trange", "tqdm.auto.trange", "tqdm.notebook.trange")
_WRAPPERS = ("tqdm", "tqdm.tqdm", "tqdm.auto.tqdm", "tqdm.notebook.tqdm", "enumerate", "builtins.enumerate")


def range_chunks(ctx: FileContext, loop: cst.CSTNode, target: cst.BaseExpression, iterable: cst.BaseExpression,
                 call: cst.Call, func: Optional[FuncInfo]) -> Optional[str]:
    """How the loop chunks (for messages), when ``call`` gets its slices; else None."""
    if not isinstance(loop, cst.For) or not isinstance(target, cst.Name) or not _stepped_range(ctx, iterable):
        return None
    pairs = [(targets, value) for targets, value in ctx._assignments_in(func) if _inside(ctx, value, loop)]
    bounds = {target.value}  # start, and end = min(start + size, n): scalars, no subscript
    changed = True
    while changed:
        changed = False
        for targets, value in pairs:
            if targets - bounds and _reads(value, bounds) and not _has_subscript(value):
                bounds |= targets
                changed = True
    seeds: set[str] = set()
    for targets, value in pairs:
        if _sliced_by(value, bounds):
            seeds |= targets
    sliced = ctx._tainted(func, seeds) - bounds if seeds else set()
    if sliced:  # `for x in xs[start:end]: items.append(Data(x=x))`: the list filled per chunk is the chunk
        filled = _filled_lists(ctx, loop, sliced) - sliced
        if filled:
            sliced = ctx._tainted(func, sliced | filled) - bounds
    if not (ctx._call_mentions(call, sliced) or any(_sliced_by(arg.value, bounds) for arg in call.args)):
        return None
    text = ctx.module.code_for_node(iterable)
    text = text if len(text) <= 60 and "\n" not in text else "range(...)"
    return f"`for {target.value} in {text}`: slices of a fixed length, and a shorter last one"


def _filled_lists(ctx: FileContext, loop: cst.CSTNode, names: set[str]) -> set[str]:
    """Names ``n`` with ``n.append(v)`` / ``n.extend(v)`` in ``loop``'s body where ``v`` reads ``names``."""
    out: set[str] = set()
    todo = [getattr(loop, "body", loop)]
    while todo:
        node = todo.pop()
        if isinstance(node, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            continue
        if (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
                and node.func.attr.value in ("append", "extend") and isinstance(node.func.value, cst.Name)
                and any(ctx.names_in(arg.value) & names for arg in node.args)):
            out.add(node.func.value.value)
        todo.extend(node.children)
    return out


def _stepped_range(ctx: FileContext, iterable: cst.BaseExpression) -> bool:
    """``range(a, b, step)`` / ``trange(a, b, step)`` with a step other than 1,
    possibly wrapped in ``tqdm(...)`` / ``enumerate(...)``."""
    for _ in range(3):
        if not isinstance(iterable, cst.Call):
            return False
        resolved = ctx.resolve(iterable.func) or ""
        if resolved in _RANGES:
            args = [a for a in iterable.args if a.keyword is None]
            step = args[2].value if len(args) == 3 else next(
                (a.value for a in iterable.args if a.keyword is not None and a.keyword.value == "step"), None)
            return step is not None and ctx.literal_value(step, step) not in (1, -1)
        if resolved not in _WRAPPERS or not iterable.args:
            return False
        iterable = iterable.args[0].value
    return False


def _sliced_by(expr: cst.CSTNode, bounds: set[str]) -> bool:
    """``expr`` holds ``x[start:end]`` (a slice whose bounds read ``bounds``)."""
    todo = [expr]
    while todo:
        node = todo.pop()
        if isinstance(node, cst.Slice) and any(_reads(part, bounds) for part in (node.lower, node.upper)):
            return True
        if isinstance(node, (cst.FunctionDef, cst.Lambda)):
            continue
        todo.extend(node.children)
    return False


def _has_subscript(expr: cst.CSTNode) -> bool:
    todo = [expr]
    while todo:
        node = todo.pop()
        if isinstance(node, cst.Subscript):
            return True
        todo.extend(node.children)
    return False


def _reads(expr: Optional[cst.CSTNode], names: set[str]) -> bool:
    if expr is None:
        return False
    todo = [expr]
    while todo:
        node = todo.pop()
        if isinstance(node, cst.Name) and node.value in names:
            return True
        if isinstance(node, cst.Attribute):
            todo.append(node.value)
            continue
        todo.extend(node.children)
    return False


def _inside(ctx: FileContext, node: cst.CSTNode, loop: cst.CSTNode) -> bool:
    return any(anc is loop for anc in ctx.ancestors(node))
