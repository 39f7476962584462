"""Loops over batches that hand each batch to an iterative sampler.

An ODE / diffusion sampler runs the model many times on one batch, in a loop
over integration steps of its own::

    def sample_structures(model, atoms, num_atoms, hp):
        for k in range(hp.integration_steps):
            v = model(t[k], atoms, x, num_atoms)
            x = x + dt * v
        return x

    for i in range(0, n_test, bs):
        nb = num_atoms_all[i:i + bs].to(device)
        pos = sample_structures(model, species[...], nb, hp)
        pos_cpu = pos.cpu().numpy()          # once per batch

The sampler's loop is the innermost hot loop (hot_loops.py), and the outer
loop would be dropped as "an epoch loop around a loop of its own". It is not
one: it is the batch loop, and its syncs run once per batch. ``sampler_batch_loops``
names such loops, only where it is sure to be so: the callee's hot loops all walk a
``range`` (steps, not a loader), the callee takes no optimizer step and calls no
``backward`` (a training function's loop is the step loop, and the loop around it
an epoch loop), and the call hands it the model together with a value the outer
loop binds (a new batch each iteration).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from gnnlint.semantic.compile_facts import varying_names
from gnnlint.semantic.kinds import MODEL
from gnnlint.semantic.model import FuncInfo

if TYPE_CHECKING:
    from gnnlint.context import FileContext

_STEPS = ("backward", "step", "zero_grad", "manual_backward")


def sampler_batch_loops(ctx: "FileContext", hot_loops: dict, direct_calls) -> list:
    """The loops (not hot yet) that hand a batch and the model to a sampler whose step loop is hot."""
    samplers = _samplers(ctx, hot_loops)
    if not samplers:
        return []
    out = []
    for loop in ctx.loops:
        if loop in hot_loops or not isinstance(loop, cst.For):
            continue
        varying = None
        for call in direct_calls(loop.body, ctx.enclosing_function(loop)):
            if ctx.method_callee(call) not in samplers:
                continue
            values = [a.value for a in call.args if not a.star]
            if not any(ctx.kind(v) == MODEL for v in values):
                continue
            varying = varying_names(ctx, loop) if varying is None else varying
            if any(ctx.names_in(v) & varying for v in values):
                out.append(loop)
                break
    return out


def _samplers(ctx: "FileContext", hot_loops: dict) -> set:
    by_func: dict = {}
    for loop in hot_loops:
        func = ctx.enclosing_function(loop)
        if func is not None:
            by_func.setdefault(func, []).append(loop)
    out = set()
    for func, loops in by_func.items():
        if isinstance(func, FuncInfo) and all(_range_loop(ctx, loop) for loop in loops) and not any(
                isinstance(c.func, cst.Attribute) and c.func.attr.value in _STEPS for c in func.calls):
            out.add(func)
    return out


def _range_loop(ctx: "FileContext", loop) -> bool:
    return isinstance(loop, cst.For) and isinstance(loop.iter, cst.Call) \
        and ctx.resolve(loop.iter.func) in ("range", "builtins.range")
