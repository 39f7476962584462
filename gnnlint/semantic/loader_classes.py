"""Which variable-size loader does this expression yield batches of?

``variable_size_loader(expr)`` names the loader class (``NeighborLoader``, a PyG
``DataLoader``, DGL's / PyTorch Frame's loaders, a ``torch.utils.data.DataLoader``
whose ``collate_fn`` batches graphs) that ``expr`` -- a call, a name, ``self.attr``,
an element, a wrapper such as ``tqdm`` / ``enumerate``, what a local function or a
data module's ``train_dataloader()`` returns, a parameter its callers bind -- yields
batches of. ``_loader_or_guess`` also answers with a guess (``"?" + name``) for a
loader built in another file and named like one; feeds.py accepts a guess only when
the batches are used as graphs.
"""
from __future__ import annotations

import re
from typing import Optional

import libcst as cst

from gnnlint.semantic import graph_collates, padded_batches
from gnnlint.semantic.model import Binding, ClassInfo, FuncInfo

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
# its batches are used as graph batches (feeds.py: one of its _GRAPH_BATCH_ATTRS).
_LOADER_NAME = re.compile(r"(?:\w+_)?(?:data)?loader|(?:\w+_)?dl|(?:\w+_)?dataloader", re.IGNORECASE)
# the Lightning DataModule protocol: what `dm.train_dataloader()` returns is the data module's loader
_DATAMODULE_LOADERS = frozenset({"train_dataloader", "val_dataloader", "test_dataloader", "predict_dataloader"})
_GUESS = "?"  # prefix of a guessed loader (the variable's name): see _graph_batches


class LoaderClasses:
    """The loader class behind an expression. Mixed into FileContext (through Feeds); reads the SemanticModel."""

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
