"""Which builders' compiled results are fed variable-size batches, across files? (GNN006/GNN007)

A builder in one file compiles the model and returns it (``def build_model(cfg): ... return
torch.compile(model)``, or ``return model, ema``, ``return RunData(model=model, ...)``, or through a
local wrapper: ``def setup(m, cfg): m = compile_model(m, cfg); return m``); another file runs what it
gets back on a loader's batches. ``export_fed`` (the running file) tells the builder's file which
loader feeds it (``fed`` facts, keyed by the builder's name); ``fed_elsewhere`` (the builder's file)
turns them into a ``LoaderFeed`` for the compile site, where GNN006/GNN007 report.
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING

import libcst as cst

from gnnlint.semantic.model import FuncInfo

if TYPE_CHECKING:  # pragma: no cover
    from gnnlint.context import FileContext
    from gnnlint.semantic.feeds import LoaderFeed


def export_fed(ctx: "FileContext") -> None:
    """``enc = build_encoder(...)`` (or ``run = build_run(spec); model = run.model``) from
    another file, then fed a variable-size loader's batches here: tell that file (its
    compile call is where GNN006/GNN007 report)."""
    from gnnlint.semantic.feeds import _FEED_LOADERS  # (feeds imports this module)

    if not any(ref.name.split(".")[-1] in _FEED_LOADERS for ref in ctx.imports.values()):
        return
    # what an imported builder returns compiled (`run = build_run(spec)`, `model = run.model`):
    # its batches are told to the builder's file, whose compile call reports
    told: set = set()
    for ref, _what, target in ctx.returned_compiled_builders():
        feeds = ctx._feeds_from_refs([ref]) if target not in told and "." not in target.name else []
        if feeds:
            told.add(target)
            ctx.exported.fed.append((target, f"{feeds[0].loader}: {feeds[0].via}"))
    for call in ctx.all_calls():
        func = call.func
        assign = ctx.parent.get(call)
        if not (isinstance(func, cst.Name) and func.value in ctx.imports and func.value[:1].islower()
                and isinstance(assign, cst.Assign) and len(assign.targets) == 1):
            continue
        ref = ctx._ref_for_target(assign.targets[0].target, call)
        feeds = ctx._feeds_from_refs([ref]) if ref is not None else []
        if feeds:
            ctx.exported.fed.append((ctx.imports[func.value], f"{feeds[0].loader}: {feeds[0].via}"))


def fed_elsewhere(ctx: "FileContext", site_node: cst.CSTNode) -> list["LoaderFeed"]:
    """A top-level function returns the compiled object and another file
    feeds its result a loader's batches (ProjectFacts.fed)."""
    from gnnlint.semantic.feeds import LoaderFeed

    site_func = ctx.enclosing_function(site_node)
    refs = [r for r in ctx.compiled_refs(site_node) if r[0] == "name"]
    # the compiling function itself, or a local wrapper returning its result
    # (`def setup(m, cfg): m = compile_model(m, cfg); return m`, the wrapper imported)
    for func in dict.fromkeys([site_func] + [r[2] for r in refs]):
        if not isinstance(func, FuncInfo) or func.cls is not None or func.parent is not None \
                or func.name not in ctx.project.fed:
            continue
        names = {r[1] for r in refs if r[2] is func}
        returned = func is site_func and isinstance(ctx._compile_holder(site_node)[1], cst.Return)
        code = ctx.module.code_for_node(func.node)
        if returned or ctx._returned_positions(func, names) \
                or any(re.search(rf"\breturn\s+{re.escape(n)}\b", code) for n in names):
            # return model / model, ema / Run(model=model) / model.to(device)
            loader, _, via = ctx.project.fed[func.name].partition(": ")
            return [LoaderFeed(loader, site_node, f"{via}, via `{func.name}()`", False, (), False)]
    return []
