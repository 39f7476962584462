"""Evaluation loops of a training function: hot without an optimizer step.

A hot loop is found by the step it takes (``.backward()``, ``optimizer.step()``,
regions.py). A training function often also runs a validation pass every
epoch -- ``for batch in val_loader: predictions = model(batch)`` -- that takes
no step but runs the model once per batch: its syncs are per-step syncs too
(the labelling policy: "evaluation loops that run the model per batch
count"). ``evaluation_loops`` finds them where it is surely so: a loop over a
loader, in a function that holds a hot loop (or that the same epoch loop calls
as it calls one: ``for epoch ...: self._train_epoch(...); self._validate_epoch(...)``),
whose own body calls the compiled model (the same calls steps.py counts). A loop over a loader that runs no
compiled code (statistics, preprocessing) is not one.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

if TYPE_CHECKING:
    from gnnlint.context import FileContext


def evaluation_loops(ctx: "FileContext", hot_loops) -> list:
    """Loader loops of functions holding a hot loop whose body runs compiled code."""
    if not (ctx.compile_sites or ctx.compiled_classes or ctx.project.compiled_instances
            or ctx.project.compiled_returns):
        return []
    with_hot = {ctx.enclosing_function(loop) for loop in hot_loops} - {None}
    with_hot |= _epoch_siblings(ctx, with_hot)
    candidates = [loop for loop in ctx.loops
                  if loop not in hot_loops and isinstance(loop, cst.For) and ctx.enclosing_function(loop) in with_hot
                  and ctx.looks_like_loader(loop.iter) and not _inside(ctx, loop, hot_loops)]
    if not candidates:
        return []
    from gnnlint.semantic.model import calls_under
    from gnnlint.semantic.steps import StepAnalysis

    calls = StepAnalysis(ctx)._compiled_calls()  # a throwaway analysis: the hot regions are not known yet
    return [loop for loop in candidates if any(id(call) in calls for call in calls_under(loop.body))]


def _epoch_siblings(ctx: "FileContext", with_hot: set) -> set:
    """Local functions a loop calls that also calls a function holding a hot loop (the epoch loop's
    validation method next to its training method)."""
    from gnnlint.semantic.model import FuncInfo, calls_under

    out = set()
    for func in with_hot:
        for call in ctx.callers_of(func):
            loop = next((anc for anc in ctx.ancestors(call) if isinstance(anc, (cst.For, cst.While))
                         or isinstance(anc, cst.FunctionDef)), None)
            if not isinstance(loop, (cst.For, cst.While)):
                continue
            for other in calls_under(loop.body):
                callee = ctx.local_callee(other)
                if isinstance(callee, FuncInfo) and callee not in with_hot:
                    out.add(callee)
    return out


def _inside(ctx: "FileContext", loop: cst.CSTNode, hot_loops) -> bool:
    return any(anc in hot_loops for anc in ctx.ancestors(loop))
