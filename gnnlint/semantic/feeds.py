"""What feeds a compiled model: "are its batches variable-size?"

``loader_feeds(site)`` lists the variable-size loaders whose batches reach
the compiled object (``for batch in loader: model(batch)``, ``next(iter(...))``,
DDP wrappers, Lightning ``*_dataloader`` hooks and PyG Lightning data
modules, other files via ProjectFacts), each as a ``LoaderFeed`` with whether
batches are padded and which arguments ``torch._dynamo.mark_dynamic`` leaves
unmarked. ``variable_size_loader(expr)``, ``mark_dynamic_keys()``,
``pipeline_padded()``; fed_builders.py tells the project which builders'
compiled results are fed here.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Optional

import libcst as cst

from gnnlint.semantic import chunks, fed_builders, graph_models, lightning_feeds, nested_feeds
from gnnlint.semantic.dynamic_marks import DynamicMarks
from gnnlint.semantic.loader_classes import (  # noqa: F401 - fed_builders reads _FEED_LOADERS here
    _FEED_LIGHTNING_DATA, _FEED_LOADERS, _GUESS, LoaderClasses)
from gnnlint.semantic.model import ClassInfo, FuncInfo, walk
from gnnlint.semantic.vocab import LIGHTNING_STEP_HOOKS

# a guessed loader's batches count when used as graph batches: one of these attributes
_GRAPH_BATCH_ATTRS = frozenset({
    "edge_index", "edge_index_dict", "x_dict", "batch", "ptr", "num_graphs", "edge_attr", "adj_t",
    "n_id", "e_id", "batch_size", "sampled_subgraphs", "node_features", "blocks", "ndata", "edata",
})

@dataclass(frozen=True)
class LoaderFeed:
    """A variable-size loader whose batches reach a compiled object."""

    loader: str  # the loader class, e.g. "NeighborLoader"
    call: cst.Call = field(repr=False)  # the call that hands a batch to the compiled object
    via: str  # how, for messages: "`for ... in train_loader`"
    padded: bool  # batches are padded to fixed sizes (PyG Pad / ToDense / a pad call)
    unmarked: tuple[str, ...]  # arguments whose dims mark_dynamic does not cover
    marked_any: bool  # the file calls torch._dynamo.mark_dynamic at all
    # every example has one size (`T.SamplePoints(1024)`: fixed_size.py), so only the last
    # partial batch differs -- and none with drop_last=True
    fixed: Optional[str] = None
    drop_last: bool = False
    # a loader built elsewhere whose batches the loop hands on without reading them as graphs: it counts
    # only when the compiled model reads them as graph batches (graph_models.py)
    unread: bool = False


class Feeds(LoaderClasses, DynamicMarks):
    """Loader-feed questions: what reaches a compiled model, and at what sizes. Mixed into FileContext; reads the SemanticModel."""

    def _graph_batches(self, loop: cst.CSTNode, tainted: set[str], call: cst.Call) -> bool:
        """The batches of ``loop`` are used as graph batches: ``batch.edge_index``
        in the loop body, or in the body of the local function ``call`` runs
        (a compiled train step) on the parameter it receives them as."""
        def used(root: cst.CSTNode, names: set[str]) -> bool:
            hits: list = []
            walk(root, lambda node, _parent: hits.append(node) if isinstance(node, cst.Attribute)
                 and node.attr.value in _GRAPH_BATCH_ATTRS and isinstance(node.value, cst.Name)
                 and node.value.value in names else None)
            return bool(hits)
        if used(getattr(loop, "body", loop), tainted):
            return True
        callee = self.method_callee(call)  # also `trainer.train(batch)` on a local object
        if isinstance(callee, FuncInfo):
            params = {p for p in callee.params
                      if self._call_mentions(call, tainted) and p not in ("self", "cls")}
            return used(callee.node.body, params)
        return False


    def pipeline_padded(self) -> bool:
        """The file pads its batches to fixed sizes with PyG's ``Pad`` / ``ToDense``."""
        cached = getattr(self, "_feed_padded", None)
        if cached is None:
            cached = False
            for call in self.all_calls():
                resolved = self.resolve(call.func) or ""
                if resolved.startswith("torch_geometric.transforms") and resolved.split(".")[-1] in ("Pad", "ToDense"):
                    cached = True
                    break
            self._feed_padded = cached
        return cached

    def _pads_in_loop(self, loop: cst.CSTNode, tainted: set[str], func: Optional[FuncInfo]) -> bool:
        for call in self.all_calls():
            if not self.in_loop_body(call, loop) or self.enclosing_function(call) is not func:
                continue
            name = (self.last_part(call.func) or "").lower()
            if "pad" in name and self._call_mentions(call, tainted):
                return True
        return False

    def _batch_source(self, call: cst.Call, depth: int = 0, unread_ok: bool = False) -> Optional["LoaderFeed"]:
        """The variable-size loader whose batches reach ``call``'s arguments (``unread_ok``: also a
        loader built elsewhere whose batches are not read as graphs on the way, ``LoaderFeed.unread``)."""
        func = self.enclosing_function(call)
        child: cst.CSTNode = call
        for anc in self.ancestors(call):
            if isinstance(anc, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                break
            comp_fors = []
            if isinstance(anc, cst.For) and child is anc.body:
                comp_fors = [(anc, anc.target, anc.iter)]
            elif isinstance(anc, (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)):
                comp = anc.for_in
                while comp is not None:
                    comp_fors.append((comp, comp.target, comp.iter))
                    comp = comp.inner_for_in
            for loop, target, iterable in comp_fors:
                loader = self._loader_or_guess(iterable, loop)
                if not loader:
                    chunked = chunks.range_chunks(self, loop, target, iterable, call, func)
                    if chunked:  # `for start in range(0, n, size)`: x[start:end], a shorter last chunk
                        return LoaderFeed("range", call, chunked, False, tuple(self._unmarked_args(call)),
                                          bool(self.mark_dynamic_keys()))
                    continue
                tainted = self._tainted(func, self.names_in(target))
                if not self._call_mentions(call, tainted):
                    continue
                guessed, unread = loader.startswith(_GUESS), False
                if guessed:  # named like a loader: only with graph batches
                    if not self._graph_batches(loop, tainted, call):
                        if not unread_ok:
                            continue
                        unread = True
                    loader = loader[len(_GUESS):]
                padded = self.pipeline_padded() or (isinstance(loop, cst.For)
                                                    and self._pads_in_loop(loop, tainted, func))
                text = self._iter_text(iterable, loop, loader)
                marks = self._loop_mark_keys(loop, func) if isinstance(loop, cst.For) else self.mark_dynamic_keys()
                via = f"`for ... in {text}`" + (", batches of a loader built elsewhere" if unread else
                                                ", graph batches of a loader built elsewhere" if guessed else "")
                fixed, drop_last = self.fixed_size_batches(iterable, loop)
                return LoaderFeed(loader, call, via, padded,
                                  tuple(self._unmarked_args(call, marks)), bool(marks), fixed, drop_last, unread)
            child = anc
        feed = self._next_batch_source(call, func)
        if feed is not None:
            return feed
        if func is None or depth >= 3:
            return None
        params = set(func.params) - {"self", "cls"}
        tainted = self._tainted(func, params)
        if not self._call_mentions(call, tainted):
            return None
        for caller in self.callers_of(func) + self.holder_callers(func):  # `self.potential.forward(x)` (holders.py)
            feed = self._batch_source(caller, depth + 1, unread_ok)
            if feed is not None:
                return LoaderFeed(feed.loader, call, feed.via, feed.padded, tuple(self._unmarked_args(call)),
                                  feed.marked_any, feed.fixed, feed.drop_last, feed.unread)
        if func.cls is not None and func in self._lightning_reachable(func.cls):
            loader = self._lightning_loader(func.cls)
            if loader:
                return LoaderFeed(loader[0], call, loader[1], self.pipeline_padded(),
                                  tuple(self._unmarked_args(call)), bool(self.mark_dynamic_keys()))
        entry = self.framework_step_entry(func)  # ASE's calculate(atoms): a new structure every step
        if entry is not None and entry.varying_inputs and not self._compiles_itself(func):
            return LoaderFeed(f"{entry.framework.upper()} structures", call, f"`{func.cls.name}.{func.name}()`: {entry.why}",
                              self.pipeline_padded(), tuple(self._unmarked_args(call)), bool(self.mark_dynamic_keys()))
        return None

    def _compiles_itself(self, func: FuncInfo) -> bool:
        """The per-step method holds the compile site itself (``calculate()``
        compiling its model again when the system changes): it compiles for
        the structures it is given, by design, not once for whatever comes."""
        return any(self.enclosing_function(node) is func for node, _site in self.compile_sites)

    def _iter_text(self, iterable: cst.BaseExpression, loop: cst.CSTNode, loader: str) -> str:
        """How a message names the loop's iterable: as written when short,
        else the loader variable inside it (``tqdm(dl, ...) if rank == 0 else
        dl`` -> ``dl``), else ``<Loader>(...)``."""
        text = self.module.code_for_node(iterable)
        if len(text) <= 40 and "\n" not in text:
            return text
        names: list[cst.Name] = []
        walk(iterable, lambda node, _parent: names.append(node) if isinstance(node, cst.Name) else None)
        for name in names:
            if self._loader_or_guess(name, loop):
                return name.value
        return f"{loader}(...)"

    def _next_batch_source(self, call: cst.Call, func: Optional[FuncInfo]) -> Optional["LoaderFeed"]:
        """``batch = next(it)`` (``it = iter(loader)``) inside a loop, feeding ``call``."""
        if not any(isinstance(a, (cst.For, cst.While)) for a in self._ancestors_in(call, func)):
            return None
        seeds = set()
        for targets, value in self._assignments_in(func):
            if isinstance(value, cst.Call) and self.resolve(value.func) in ("next", "builtins.next") \
                    and value.args and self.variable_size_loader(value.args[0].value, value):
                seeds |= targets
                loader = self.variable_size_loader(value.args[0].value, value)
        if not seeds:
            return None
        tainted = self._tainted(func, seeds)
        if not self._call_mentions(call, tainted):
            return None
        return LoaderFeed(loader, call, "`next(iter(...))`", self.pipeline_padded(),
                          tuple(self._unmarked_args(call)), bool(self.mark_dynamic_keys()))

    def _lightning_reachable(self, cls: ClassInfo) -> set:
        """Methods of a Lightning-style module that run on every batch: the
        step hooks and what they call on ``self`` (``self(...)`` is forward)."""
        todo = [m for m in (self.method_of(cls, h) for h in LIGHTNING_STEP_HOOKS) if m is not None]
        seen: set = set()
        while todo:
            info = todo.pop()
            if info in seen:
                continue
            seen.add(info)
            for call in info.calls:
                func = call.func
                target = None
                if isinstance(func, cst.Name) and func.value == "self":
                    target = self.method_of(cls, "forward")
                elif isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) \
                        and func.value.value == "self":
                    target = self.method_of(cls, func.attr.value)
                if target is not None and target not in seen:
                    todo.append(target)
        return seen

    def _lightning_loader(self, cls: ClassInfo) -> Optional[tuple[str, str]]:
        """A variable-size loader a Lightning-style module is trained on: its
        own (or a data module's) ``*_dataloader()``, PyG's ``LightningNodeData``
        / ``LightningLinkData`` / ``LightningDataset``, or a loader passed to
        ``trainer.fit/validate/test/predict``."""
        classes = [cls] + [c for c in self.class_info.values() if c is not cls]
        for owner in classes:
            for hook in ("train_dataloader", "val_dataloader", "test_dataloader", "predict_dataloader"):
                method = self.method_of(owner, hook)
                if method is None or (owner is not cls and method.cls is cls):
                    continue
                for ret in method.returns:
                    loader = self.variable_size_loader(ret.value, ret)
                    if loader:
                        return loader, f"`{owner.name}.{hook}()`"
        for call in self.all_calls():
            resolved = self.resolve(call.func) or ""
            last = resolved.split(".")[-1]
            if resolved.startswith("torch_geometric.data") and last in _FEED_LIGHTNING_DATA:
                if self.variable_size_loader(call, call):
                    return last, f"`{last}(...)`"
            if isinstance(call.func, cst.Attribute) and call.func.attr.value in ("fit", "validate", "test",
                                                                                 "predict"):
                for arg in call.args[1:]:
                    loader = self.variable_size_loader(arg.value, call)
                    if loader:
                        return loader, f"`{self.module.code_for_node(call.func)}(...)`"
        return None

    def loader_feeds(self, site_node: cst.CSTNode) -> list["LoaderFeed"]:
        """Variable-size PyG loaders whose batches reach the object compiled at
        ``site_node``: it is called inside ``for batch in <loader>`` (directly,
        through local functions it is passed to, or from the step hooks of a
        Lightning-style module whose dataloaders yield them), or it is passed
        together with such a loader to a function (``train(model, loader)``)."""
        cache = getattr(self, "_feed_cache", None)
        if cache is None:
            cache = self._feed_cache = {}
        if site_node in cache:
            return cache[site_node]
        held = self.held_compile_calls(site_node)  # a calculator compiling `self.potential.model` (holders.py)
        if held is not None:
            feeds = [feed for feed in (self._batch_source(call) for call in held) if feed is not None]
        else:
            feeds = self._feeds_from_refs(self.compiled_refs(site_node))
        if not feeds and self.project.fed:
            feeds = fed_builders.fed_elsewhere(self, site_node)
        if not feeds and (self.project.fed or self.project.compiled_instances or self._has_self_compiled()):
            feeds = nested_feeds.nested_feed(self, site_node)  # the outer model's loader (nested_feeds.py)
        if not feeds:  # trainer.fit(model, datamodule=...) of a LightningModule whose steps take PyG batches
            fitted = lightning_feeds.trainer_feed(self, site_node) or lightning_feeds.step_feed(self, site_node)
            if fitted is not None:
                feeds = [LoaderFeed("PyG Batch", fitted[0], fitted[1], self.pipeline_padded(), (),
                                    bool(self.mark_dynamic_keys()))]
        if not feeds and held is None and (why := graph_models.site_graph_batches(self, site_node)):
            # a loader built elsewhere whose batches the loop hands on untouched: the model reads them as graphs
            feeds = [replace(feed, via=f"{feed.via}; {why}")
                     for feed in self._feeds_from_refs(self.compiled_refs(site_node), unread_ok=True)]
        cache[site_node] = feeds
        return feeds

    def _feeds_from_refs(self, refs: list[tuple], unread_ok: bool = False) -> list["LoaderFeed"]:
        feeds: list[LoaderFeed] = []
        todo = [(ref, 0) for ref in refs]
        seen: set = set()
        while todo:
            ref, depth = todo.pop()
            key = ref[:3] if ref[0] == "name" else ref
            if key in seen:
                continue
            seen.add(key)
            for call in self.ref_calls(ref):
                feed = self._batch_source(call, 0, unread_ok)
                if feed is not None:
                    feeds.append(feed)
            if depth >= 3:
                continue
            for how, new, call in self.ref_passes(ref):
                if how == "ref":
                    todo.append((new, depth + 1))
                    continue
                feed = self._batch_source(call, 0, unread_ok)
                if feed is not None:  # train_step(model, batch) inside `for batch in loader`
                    feeds.append(feed)
                    continue
                for arg in call.args:
                    loader = self.variable_size_loader(arg.value, call)
                    if loader:
                        name = self.module.code_for_node(call.func)
                        feeds.append(LoaderFeed(loader, call, f"`{name}(..., {self.module.code_for_node(arg.value)})`",
                                                self.pipeline_padded(), (), bool(self.mark_dynamic_keys())))
                        break
                else:
                    feed = self.fed_by_callee(call, ref, unread_ok)  # its loop in another file (fed_args.py)
                    if feed is not None:
                        feeds.append(feed)
            if self.project.fed_args:  # `Trainer([model], dm)`: a list literal handed to another file's loop
                feeds += [feed for feed in (self.fed_by_callee(call, ref, unread_ok) for call in self._listed_in(ref))
                          if feed is not None]
        return feeds

    def _listed_in(self, ref: tuple) -> list[cst.Call]:
        """The calls given a list or tuple literal holding ``ref`` (``Ensemble([model], dm)``)."""
        return [call for call in self.all_calls()
                if any(isinstance(arg.value, (cst.List, cst.Tuple)) and not arg.star
                       and any(self.is_ref_expr(element.value, ref, element.value) for element in arg.value.elements)
                       for arg in call.args)]
