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

import re
from dataclasses import dataclass, field
from typing import Optional

import libcst as cst

from gnnlint.semantic import chunks, fed_builders, graph_collates, lightning_feeds, nested_feeds, padded_batches
from gnnlint.semantic.kinds import BATCH, SCALAR
from gnnlint.semantic.model import Binding, ClassInfo, FuncInfo, walk
from gnnlint.semantic.vocab import LIGHTNING_STEP_HOOKS

# PyG loaders whose batches change size from one batch to the next. Not
# DenseDataLoader (graphs padded to one size by ToDense) nor TemporalDataLoader
# (fixed-size event windows).
_FEED_LOADERS = {
    "NeighborLoader", "LinkNeighborLoader", "HGTLoader", "ClusterLoader", "ShaDowKHopSampler",
    "DataLoader", "DataListLoader", "GraphSAINTNodeSampler", "GraphSAINTEdgeSampler",
    "GraphSAINTRandomWalkSampler", "GraphSAINTSampler", "NeighborSampler", "RandomNodeLoader",
    "ZipLoader", "LinkLoader", "NodeLoader", "IBMBBatchLoader", "IBMBNodeLoader",
}


# PyG wrappers around a loader, and iteration helpers around any iterable.
_FEED_LOADER_WRAPPERS = {"PrefetchLoader", "CachedLoader"}


# PyG's Lightning data modules (NeighborLoader / DataLoader inside, unless loader="full").
_FEED_LIGHTNING_DATA = {"LightningNodeData", "LightningLinkData", "LightningDataset"}


_FEED_ITER_WRAPPERS = {"enumerate", "tqdm", "iter", "zip", "islice", "chain", "trange_wrap", "track"}


# DGL's loaders of sampled subgraphs / batched graphs (GraphBolt's minibatches
# come from neighbour sampling: new node and edge counts every batch).
_DGL_LOADERS = {
    "dgl.graphbolt.DataLoader": "gb.DataLoader",
    "dgl.graphbolt.dataloader.DataLoader": "gb.DataLoader",
    "dgl.dataloading.DataLoader": "dgl.dataloading.DataLoader",
    "dgl.dataloading.GraphDataLoader": "GraphDataLoader",
    "dgl.dataloading.NodeDataLoader": "NodeDataLoader",
    "dgl.dataloading.EdgeDataLoader": "EdgeDataLoader",
}


# PyTorch Frame's loader of TensorFrame row batches (PyG's tabular sibling): `batch_size` rows each, and
# without `drop_last` a shorter last batch, a second size for a compiled model (fixed_size.py).
_FRAME_LOADERS = {
    "torch_frame.data.DataLoader": "torch_frame.data.DataLoader",
    "torch_frame.data.loader.DataLoader": "torch_frame.data.DataLoader",
}


# A loader gnnlint cannot trace (a parameter no local caller binds, a name
# bound by an imported function) counts only when its name says loader and
# its batches are used as graph batches (one of these attributes).
_LOADER_NAME = re.compile(r"(?:\w+_)?(?:data)?loader|(?:\w+_)?dl|(?:\w+_)?dataloader", re.IGNORECASE)
# the Lightning DataModule protocol: what `dm.train_dataloader()` returns is the data module's loader
_DATAMODULE_LOADERS = frozenset({"train_dataloader", "val_dataloader", "test_dataloader", "predict_dataloader"})
_GRAPH_BATCH_ATTRS = frozenset({
    "edge_index", "edge_index_dict", "x_dict", "batch", "ptr", "num_graphs", "edge_attr", "adj_t",
    "n_id", "e_id", "batch_size", "sampled_subgraphs", "node_features", "blocks", "ndata", "edata",
})
_GUESS = "?"  # prefix of a guessed loader (the variable's name): see _graph_batches


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


class Feeds:
    """Loader-feed questions: what reaches a compiled model, and at what sizes. Mixed into FileContext; reads the SemanticModel."""

    # -- which loaders feed it ---------------------------------------------------
    def variable_size_loader(self, expr: Optional[cst.CSTNode], at: Optional[cst.CSTNode] = None) -> Optional[str]:
        """The variable-size loader class ``expr`` yields batches of (see
        ``_loader_or_guess``; never a guess from a name)."""
        found = self._loader_or_guess(expr, at)
        return found if found and not found.startswith(_GUESS) else None

    def _loader_or_guess(self, expr: Optional[cst.CSTNode], at: Optional[cst.CSTNode] = None,
                         depth: int = 0) -> Optional[str]:
        """The PyG loader class whose batches (of varying size) ``expr``
        yields: ``NeighborLoader(...)``, a name or ``self.attr`` bound to one,
        ``enumerate``/``tqdm``/``zip`` of one, a local function returning one,
        a parameter a local caller binds to one."""
        if expr is None or depth > 6:
            return None
        at = at or expr
        if isinstance(expr, cst.Call):
            return self._loader_of_call(expr, at, depth)
        if isinstance(expr, cst.Name):
            return self._loader_of_name(expr, at, depth)
        if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self":
            cls = self.enclosing_class(at)
            if cls is None:
                return None
            for value in self.class_attr_values(cls, expr.attr.value):
                found = self._loader_or_guess(value, value, depth + 1)
                if found:
                    return found
            return None
        if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name):
            owner = self.class_of(expr.value, at)  # dm.train_loader, dm being a local class
            if isinstance(owner, ClassInfo):
                for value in self.class_attr_values(owner, expr.attr.value):
                    found = self._loader_or_guess(value, value, depth + 1)
                    if found:
                        return found
            return None
        if isinstance(expr, cst.Subscript):
            return self._loader_or_guess(expr.value, at, depth + 1)
        if isinstance(expr, (cst.Dict, cst.List, cst.Tuple)):
            for element in expr.elements:
                value = element.value if not isinstance(element, cst.DictElement) else element.value
                found = self._loader_or_guess(value, at, depth + 1)
                if found:
                    return found
            return None
        if isinstance(expr, cst.IfExp):
            return self._loader_or_guess(expr.body, at, depth + 1) or \
                self._loader_or_guess(expr.orelse, at, depth + 1)
        return None

    def _loader_of_call(self, expr: cst.Call, at: cst.CSTNode, depth: int) -> Optional[str]:
        """A loader constructor, a wrapper around one, a local class or function that builds one."""
        resolved = self.resolve(expr.func) or ""
        last = resolved.split(".")[-1]
        if resolved.startswith(("torch_geometric.loader", "torch_geometric.data")) and last in _FEED_LOADERS:
            first = expr.args[0].value if expr.args and expr.args[0].keyword is None else None
            if last in ("DataLoader", "DataListLoader") and isinstance(first, (cst.List, cst.Tuple)) \
                    and len(first.elements) == 1:
                return None  # DataLoader([data]): the same single graph every step
            return last  # (PyG 1.x kept the loaders in torch_geometric.data)
        if resolved in _DGL_LOADERS:
            return _DGL_LOADERS[resolved]
        if resolved in _FRAME_LOADERS:  # rows of one size: `fixed_size_batches` tells (fixed_size.py)
            return _FRAME_LOADERS[resolved]
        if resolved in ("torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"):
            collate = next((a.value for a in expr.args if a.keyword is not None and a.keyword.value == "collate_fn"),
                           None)
            return "DataLoader" if collate is not None and (self._graph_collate(collate, expr)
                                                            or self._padding_collate(collate)) else None
        if resolved.startswith("torch_geometric.data") and last in _FEED_LIGHTNING_DATA:
            mode = next((self.literal_value(a.value, a.value) for a in expr.args
                         if a.keyword is not None and a.keyword.value == "loader"), None)
            return None if mode == "full" else last
        if (resolved.startswith("torch_geometric.loader") and last in _FEED_LOADER_WRAPPERS) or \
                last in _FEED_ITER_WRAPPERS:
            for arg in expr.args:  # a sub-expression: no cycle, no depth spent
                found = self._loader_or_guess(arg.value, at, depth)
                if found:
                    return found
            return None
        local = self.local_callee(expr)
        if isinstance(local, ClassInfo):  # class NeighborSampler(RawNeighborSampler): ...
            for base in local.bases:
                found = self._loader_or_guess(cst.Call(func=cst.parse_expression(base)), at, depth + 1) \
                    if base else None
                if found:
                    return found
            return None
        if local is None and isinstance(expr.func, cst.Attribute) and not isinstance(expr.func.value, cst.Call):
            owner = self.class_of(expr.func.value, at)
            if isinstance(owner, ClassInfo):
                local = self.method_of(owner, expr.func.attr.value)
        if isinstance(local, FuncInfo):
            for ret in local.returns:
                found = self._loader_or_guess(ret.value, ret, depth + 1)
                if found:
                    return found
        elif local is None and isinstance(expr.func, cst.Attribute) and expr.func.attr.value in _DATAMODULE_LOADERS:
            # `dm.train_dataloader()` of a data module built elsewhere: graph batches only when used as such
            return _GUESS + "DataLoader"
        return None

    def _imported_call(self, call: cst.Call) -> bool:
        """A call of a function imported from the project or a third party
        (not torch / PyG / DGL, whose loaders are known)."""
        func = call.func
        while isinstance(func, cst.Attribute):
            func = func.value
        if not isinstance(func, cst.Name) or func.value not in self.imports:
            return False
        binding = self.lookup(func.value, call)[0]
        if binding is not None and binding.how != "import":
            return False  # shadowed by a local binding
        return not (self.resolve(call.func) or "").startswith(("torch", "dgl", "builtins"))

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

    def _graph_collate(self, expr: cst.BaseExpression, loader: cst.Call) -> bool:
        """A ``collate_fn`` that batches graphs (so batch sizes vary): PyG's
        ``Batch.from_data_list`` / ``Collater``, ``dgl.batch``, or a local
        function that calls one of them, or such a function of another project
        file (graph_collates.py)."""
        if graph_collates.batches_graphs(self, expr):
            return True
        local = self.local_callee(cst.Call(func=expr)) if isinstance(expr, cst.Name) else None
        if isinstance(local, FuncInfo):
            return any(graph_collates.batches_graphs(self, call) for call in local.calls)
        return local is None and graph_collates.imported_graph_collate(self, expr, loader)

    def _padding_collate(self, expr: cst.BaseExpression) -> bool:
        """A local ``collate_fn`` that pads its samples to the batch's longest or cuts them to it
        (``pad_sequence``, ``v[..., :lengths.max()]``): the sequence length changes every batch
        (padded_batches.py)."""
        local = self.local_callee(cst.Call(func=expr)) if isinstance(expr, cst.Name) else None
        return isinstance(local, FuncInfo) and padded_batches.collate_pads(self, local)

    def _loader_of_name(self, expr: cst.Name, at: cst.CSTNode, depth: int) -> Optional[str]:
        """A name bound to a loader: assigned, unpacked from a local call, iterated, a parameter."""
        binding = self.feed_binding(expr.value, at)
        if binding is None:
            return None
        if binding.how == "assign":
            found = self._loader_or_guess(binding.value, binding.value, depth + 1)
            if not found and isinstance(binding.value, cst.Call) and _LOADER_NAME.fullmatch(expr.value) \
                    and self._imported_call(binding.value):
                return _GUESS + expr.value  # train_loader = build_loader(cfg), imported
            if not found and isinstance(binding.value, cst.Attribute) and _LOADER_NAME.fullmatch(expr.value) \
                    and self._imported_result(binding.value.value, binding.value):
                return _GUESS + expr.value  # run = build_run(spec); train_loader = run.train_loader
            return found
        if binding.how == "unpack" and isinstance(binding.value, (cst.GeneratorExp, cst.ListComp)):
            # a, b = (make_loader(s) for s in splits): every element is one
            return self._loader_or_guess(binding.value.elt, binding.value.elt, depth)
        if binding.how == "unpack" and isinstance(binding.value, cst.Call) and binding.index >= 0:
            local = self.local_callee(binding.value)
            if isinstance(local, FuncInfo):
                for ret in local.returns:
                    if isinstance(ret.value, cst.Tuple) and binding.index < len(ret.value.elements):
                        found = self._loader_or_guess(ret.value.elements[binding.index].value, ret,
                                                          depth + 1)
                        if found:
                            return found
            return None
        if binding.how == "unpack" and isinstance(binding.value, cst.Name) and binding.index >= 0:
            # train_loader, val_loader = loaders: an element of what the name holds
            found = self._loader_or_guess(binding.value, at, depth + 1)
            if found and not found.startswith(_GUESS):
                return found
            if _LOADER_NAME.fullmatch(expr.value) and (found or self._param_binding(binding.value, at)):
                return _GUESS + expr.value  # a loader tuple another file (or no caller here) passes
            return None
        if binding.how == "iter" and isinstance(binding.value, (cst.List, cst.Tuple)):
            return self._loader_or_guess(binding.value, at, depth + 1)
        if binding.how == "param":
            return self._loader_of_param(binding, expr.value, depth)
        return None

    def _annotated_loader(self, param: Optional[cst.CSTNode]) -> Optional[str]:
        """The PyG loader class a parameter is annotated with (``loader: DataLoader``)."""
        if not isinstance(param, cst.Param) or param.annotation is None:
            return None
        annotation = param.annotation.annotation
        if isinstance(annotation, cst.Subscript):  # Optional[DataLoader]
            elements = [e.slice.value for e in annotation.slice if isinstance(e.slice, cst.Index)]
            annotation = elements[0] if len(elements) == 1 else annotation
        if isinstance(annotation, cst.BinaryOperation) and isinstance(annotation.operator, cst.BitOr):
            annotation = annotation.left  # DataLoader | None
        if not isinstance(annotation, (cst.Name, cst.Attribute)):
            return None
        found = self._loader_of_call(cst.Call(func=annotation), param, 6)
        return found if found and not found.startswith(_GUESS) else None

    def _imported_result(self, expr: cst.BaseExpression, at: cst.CSTNode) -> bool:
        """``expr`` is a name assigned what an imported function returned."""
        if not isinstance(expr, cst.Name):
            return False
        binding = self.feed_binding(expr.value, at)
        return binding is not None and binding.how == "assign" and isinstance(binding.value, cst.Call) \
            and self._imported_call(binding.value)

    def _param_binding(self, name: cst.Name, at: cst.CSTNode) -> bool:
        """``name`` is a parameter of the function reading it that no local caller binds."""
        binding = self.feed_binding(name.value, at)
        if binding is None or binding.how != "param" or binding.node is None:
            return False
        func = self.enclosing_function(binding.node)
        return func is not None and not self.callers_of(func)

    def _loader_of_param(self, binding: Binding, name: str, depth: int) -> Optional[str]:
        """A parameter: what the local callers (or the constructor calls of its class) pass."""
        func = self.enclosing_function(binding.node) if binding.node is not None else None
        if func is None:
            return None
        annotated = self._annotated_loader(binding.node)
        if annotated:  # def run_epoch(model, train_loader: DataLoader), with PyG's DataLoader
            return annotated
        for caller in self.callers_of(func):
            value = self.arg_for_param(func, caller, name)
            found = self._loader_or_guess(value, caller, depth + 1) if value is not None else None
            if found:
                return found
        if func.name == "__init__" and func.cls is not None:
            for call in self.all_calls():
                if self.local_callee(call) is func.cls:
                    value = self.arg_for_param(func, call, name)
                    found = self._loader_or_guess(value, call, depth + 1) if value is not None else None
                    if found:
                        return found
        if not self.callers_of(func) and func.name != "__init__" and _LOADER_NAME.fullmatch(name):
            return _GUESS + name  # def train(model, train_loader): called from another file
        return None

    def _mark_dynamic_calls(self) -> dict[cst.Call, set[str]]:
        """Each ``torch._dynamo.mark_dynamic(...)`` call and what it marks, by
        the last part of its first argument (``batch.x`` -> ``x``)."""
        cached = getattr(self, "_feed_mark_calls", None)
        if cached is None:
            cached = {}
            for call in self.all_calls():
                resolved = self.resolve(call.func) or ""
                if resolved.startswith("torch") and resolved.split(".")[-1] in ("mark_dynamic", "maybe_mark_dynamic") \
                        and call.args:
                    first = call.args[0].value
                    keys = {self.last_part(first) or self.module.code_for_node(first)}
                    if isinstance(first, cst.Subscript):
                        keys.add(self.last_part(first.value) or "")
                    cached[call] = keys
            self._feed_mark_calls = cached
        return cached

    def mark_dynamic_keys(self) -> set[str]:
        """What ``torch._dynamo.mark_dynamic(...)`` marks anywhere in this file."""
        return set().union(*self._mark_dynamic_calls().values())

    def _marks_in_loop(self, loop: cst.CSTNode, func: Optional[FuncInfo]) -> set[str]:
        """What the body of ``loop`` marks dynamic: directly, or through the
        local functions it calls (``batch = mark_batch_dynamic(batch)``)."""
        marks = self._mark_dynamic_calls()
        keys: set[str] = set()
        todo = [c for c in (func.calls if func is not None else self.module_calls) if self.in_loop_body(c, loop)]
        seen: set = set()
        while todo:
            call = todo.pop()
            if call in marks:
                keys |= marks[call]
                continue
            callee = self.local_callee(call)
            if isinstance(callee, FuncInfo) and callee not in seen and len(seen) < 20:
                seen.add(callee)
                todo += [c for c in callee.calls if self.enclosing_function(c) is callee]
        return keys

    def _loop_mark_keys(self, loop: cst.CSTNode, func: Optional[FuncInfo]) -> set[str]:
        """The marks that apply to the batches of a loop over a loader: its
        own; none when the file's marks all belong to other such loops (a
        per-batch helper the training loop calls does not mark the eval
        loop's batches); else every mark in the file (marked somewhere we
        cannot place: a collate function, the caller)."""
        own = self._marks_in_loop(loop, func)
        if own or not self._mark_dynamic_calls():
            return own
        taken: set[str] = set()
        for other in self.loops:
            if other is loop or not isinstance(other, cst.For) or not self.variable_size_loader(other.iter, other):
                continue
            taken |= self._marks_in_loop(other, self.enclosing_function(other))
        return set() if taken >= self.mark_dynamic_keys() else self.mark_dynamic_keys()

    def _unmarked_args(self, call: cst.Call, marked: Optional[set[str]] = None) -> list[str]:
        """Tensor-like arguments of a call whose dims ``mark_dynamic`` does not cover."""
        marked = self.mark_dynamic_keys() if marked is None else marked
        out = []
        for arg in call.args:
            value = arg.value
            if self.kind(value) == SCALAR:
                continue
            last = self.last_part(value) or ""
            if last in ("batch_size", "num_graphs", "num_nodes", "num_edges") or last.startswith("num_"):
                continue
            keys = {last, self.module.code_for_node(value)}
            if isinstance(value, cst.Name):
                binding = self.feed_binding(value.value, value)
                if binding is not None and binding.how == "assign":
                    keys.add(self.last_part(binding.value) or "")
            if self.kind(value) == BATCH and marked:
                continue  # the whole batch: trust the marks on its fields
            if not keys & marked:
                out.append(self.module.code_for_node(value))
        return out

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

    def _batch_source(self, call: cst.Call, depth: int = 0) -> Optional["LoaderFeed"]:
        """The variable-size loader whose batches reach ``call``'s arguments."""
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
                guessed = loader.startswith(_GUESS)
                if guessed:  # named like a loader: only with graph batches
                    if not self._graph_batches(loop, tainted, call):
                        continue
                    loader = loader[len(_GUESS):]
                padded = self.pipeline_padded() or (isinstance(loop, cst.For)
                                                    and self._pads_in_loop(loop, tainted, func))
                text = self._iter_text(iterable, loop, loader)
                marks = self._loop_mark_keys(loop, func) if isinstance(loop, cst.For) else self.mark_dynamic_keys()
                via = f"`for ... in {text}`" + (", graph batches of a loader built elsewhere" if guessed else "")
                fixed, drop_last = self.fixed_size_batches(iterable, loop)
                return LoaderFeed(loader, call, via, padded,
                                  tuple(self._unmarked_args(call, marks)), bool(marks), fixed, drop_last)
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
            feed = self._batch_source(caller, depth + 1)
            if feed is not None:
                return LoaderFeed(feed.loader, call, feed.via, feed.padded, tuple(self._unmarked_args(call)),
                                  feed.marked_any, feed.fixed, feed.drop_last)
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
        cache[site_node] = feeds
        return feeds

    def _feeds_from_refs(self, refs: list[tuple]) -> list["LoaderFeed"]:
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
                feed = self._batch_source(call)
                if feed is not None:
                    feeds.append(feed)
            if depth >= 3:
                continue
            for how, new, call in self.ref_passes(ref):
                if how == "ref":
                    todo.append((new, depth + 1))
                    continue
                feed = self._batch_source(call)
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
                    feed = self.fed_by_callee(call, ref)  # its loop in another file (fed_args.py)
                    if feed is not None:
                        feeds.append(feed)
        return feeds
