"""Fixed-size examples: "do this loader's batches all have one size?"

A PyG ``DataLoader`` over a dataset whose every example has the same number
of nodes -- point clouds sampled by ``T.SamplePoints(n)`` or ``T.FixedPoints(n)``
as the dataset's ``transform``/``pre_transform`` -- yields batches of one size,
except the last partial batch of an epoch (none with ``drop_last=True``). The
loader feeds (``feeds.py``) carry the answer: GNN006/GNN007 say nothing about
such batches with ``drop_last=True``, and without it GNN007 suggests
``drop_last=True`` rather than ``dynamic=True``. (Padding, ``T.Pad``/``T.ToDense``,
is ``pipeline_padded``.)

``fixed_size_batches(iterable, at)`` -> (how each example is sized, e.g.
"`T.SamplePoints(1024)`", or None; whether the loader drops the last batch).
Followed in this file: names, unpacking a local function's returned tuple,
``dataset[:n]`` / ``dataset.shuffle()``, parameters every local caller binds,
``T.Compose([...])``. PyTorch Frame's ``DataLoader`` batches rows of a ``TensorFrame``:
fixed-size examples too.
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from gnnlint.semantic.model import FuncInfo

_GRAPH_LOADERS = ("DataLoader", "DataListLoader")
_ROW_LOADERS = ("torch_frame.data.",)  # PyTorch Frame's DataLoader: batches of table rows, all one size
_ITER_WRAPPERS = ("enumerate", "tqdm", "iter", "islice", "track")
_SIZING = ("SamplePoints", "FixedPoints")
_KEEPS_EXAMPLES = ("shuffle", "copy", "index_select", "to")


class FixedSize:
    """``fixed_size_batches``. Mixed into FileContext; reads the SemanticModel."""

    def fixed_size_batches(self, iterable: cst.BaseExpression, at: cst.CSTNode,
                           depth: int = 0) -> tuple[Optional[str], bool]:
        passed = self._loader_param(iterable, at)
        if passed is not None and depth < 3:  # `def train(model, loader)`: what every local caller passes
            func, name = passed
            callers = self.callers_of(func)
            found = {self.fixed_size_batches(value, call, depth + 1) for call in callers
                     if (value := self.arg_for_param(func, call, name)) is not None}
            return found.pop() if callers and len(found) == 1 else (None, False)
        loader = self._graph_loader_call(iterable, at, 0)
        if loader is None:
            return None, False
        drop_last = any(a.keyword is not None and a.keyword.value == "drop_last"
                        and self.literal_value(a.value, a.value) is True for a in loader.args)
        dataset = next((a.value for a in loader.args if a.keyword is not None and a.keyword.value == "dataset"),
                       loader.args[0].value if loader.args and loader.args[0].keyword is None else None)
        if (self.resolve(loader.func) or "").startswith(_ROW_LOADERS):
            return "rows of a `TensorFrame`", drop_last  # every example is one table row
        sized = self._fixed_examples(dataset, loader, 0) if dataset is not None else None
        return sized, drop_last

    def _loader_param(self, expr: cst.BaseExpression, at: cst.CSTNode):
        """(function, parameter) when ``expr`` (through ``tqdm(...)`` / ``enumerate(...)``) is a parameter."""
        while isinstance(expr, cst.Call) and expr.args and (self.last_part(expr.func) or "") in _ITER_WRAPPERS:
            expr = expr.args[0].value
        if not isinstance(expr, cst.Name):
            return None
        binding = self.feed_binding(expr.value, at)
        if binding is None or binding.how != "param" or binding.node is None:
            return None
        func = self.enclosing_function(binding.node)
        return (func, expr.value) if func is not None else None

    def _graph_loader_call(self, expr: cst.BaseExpression, at: cst.CSTNode, depth: int) -> Optional[cst.Call]:
        if depth > 5:
            return None
        if isinstance(expr, cst.Call):
            resolved = self.resolve(expr.func) or ""
            last = resolved.split(".")[-1]
            if resolved.startswith(("torch_geometric.loader", "torch_geometric.data")) and last in _GRAPH_LOADERS \
                    or resolved.startswith(_ROW_LOADERS) and last == "DataLoader":
                return expr
            if last in _ITER_WRAPPERS and expr.args:
                return self._graph_loader_call(expr.args[0].value, at, depth + 1)
            return None
        if isinstance(expr, cst.Name):
            binding = self.feed_binding(expr.value, at)
            if binding is not None and binding.how == "assign" and binding.value is not None:
                return self._graph_loader_call(binding.value, binding.value, depth + 1)
        return None

    def _fixed_examples(self, expr: cst.BaseExpression, at: cst.CSTNode, depth: int) -> Optional[str]:
        """How every example of the dataset ``expr`` gets one size, or None."""
        if depth > 6:
            return None
        if isinstance(expr, cst.Subscript):
            return self._fixed_examples(expr.value, at, depth + 1)
        if isinstance(expr, cst.Name):
            return self._fixed_name(expr, at, depth)
        if not isinstance(expr, cst.Call):
            return None
        if isinstance(expr.func, cst.Attribute) and expr.func.attr.value in _KEEPS_EXAMPLES:
            return self._fixed_examples(expr.func.value, at, depth + 1)
        transforms = [a.value for a in expr.args if a.keyword is not None
                      and a.keyword.value in ("transform", "pre_transform")]
        for transform in transforms:
            found = self._sizing_transform(transform, depth)
            if found:
                return found
        local = self.local_callee(expr)
        if isinstance(local, FuncInfo):
            found = {self._fixed_examples(ret.value, ret, depth + 1) for ret in local.returns if ret.value}
            return found.pop() if len(found) == 1 else None
        return None

    def _fixed_name(self, name: cst.Name, at: cst.CSTNode, depth: int) -> Optional[str]:
        binding = self.feed_binding(name.value, at)
        if binding is None:
            return None
        if binding.how == "assign" and binding.value is not None:
            return self._fixed_examples(binding.value, binding.value, depth + 1)
        if binding.how == "unpack" and isinstance(binding.value, cst.Call) and binding.index >= 0:
            local = self.local_callee(binding.value)
            if not isinstance(local, FuncInfo):
                return None
            found = set()
            for ret in local.returns:
                if not (isinstance(ret.value, cst.Tuple) and binding.index < len(ret.value.elements)):
                    return None
                found.add(self._fixed_examples(ret.value.elements[binding.index].value, ret, depth + 1))
            return found.pop() if len(found) == 1 else None
        if binding.how == "param" and binding.node is not None:
            func = self.enclosing_function(binding.node)
            callers = self.callers_of(func) if func is not None else []
            found = {self._fixed_examples(value, call, depth + 1) for call in callers
                     if (value := self.arg_for_param(func, call, name.value)) is not None}
            return found.pop() if callers and len(found) == 1 else None
        return None

    def _sizing_transform(self, expr: cst.BaseExpression, depth: int) -> Optional[str]:
        if depth > 8:
            return None
        if isinstance(expr, cst.Name):
            binding = self.feed_binding(expr.value, expr)
            if binding is not None and binding.how == "assign" and binding.value is not None:
                return self._sizing_transform(binding.value, depth + 1)
            return None
        if not isinstance(expr, cst.Call):
            return None
        resolved = self.resolve(expr.func) or ""
        last = resolved.split(".")[-1]
        if not resolved.startswith("torch_geometric.transforms"):
            return None
        if last in _SIZING:
            # FixedPoints(n, replace=False, allow_duplicates=False) keeps fewer points in a small cloud
            keywords = {a.keyword.value: self.literal_value(a.value, a.value) for a in expr.args if a.keyword}
            if last == "FixedPoints" and keywords.get("replace") is False \
                    and keywords.get("allow_duplicates") is not True:
                return None
            return f"`{' '.join(self.module.code_for_node(expr).split())}`"
        if last == "Compose" and expr.args and isinstance(expr.args[0].value, (cst.List, cst.Tuple)):
            for element in expr.args[0].value.elements:
                found = self._sizing_transform(element.value, depth + 1)
                if found:
                    return found
        return None
