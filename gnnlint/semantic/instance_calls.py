"""What calling an instance runs: "which methods of this class does ``obj(...)`` run?"

A step loop calls objects, not only functions and methods::

    # train.py                                  # metrics.py
    metric = RMSE()                             class RMSE(torchmetrics.Metric):
    for x, y in loader:                             def update(self, pred, target): ...
        out = model(x)                              def compute(self):
        ...                                             return (self.err / self.n).item()
        value = metric(out, y)    # per step

``metric(out, y)`` runs what the instance's ``__call__`` runs: a class's own
``__call__``, or -- a torchmetrics ``Metric`` -- the library's ``Metric.forward``, which runs the subclass's
``update`` and then its ``compute`` on every call (torchmetrics computes the
batch value each time; only ``metric.update(...)`` leaves ``compute`` to the
epoch end).

- ``called_instance(ctx, call, import_ref)``: ``obj(...)`` / ``self.obj(...)``
  on an instance of a class another project file defines (not the compiled
  model, not a library class): ``Class.__call__`` there, the key steps.py tells
  as a ``stepped`` fact (step_targets.py asks it).
- ``call_methods(ctx, cls)``: the methods of this file's class that such a call
  runs (hot_loops.py ``stepped_functions`` reads the ``__call__`` key with it).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from gnnlint.semantic.callback_hooks import local_subclasses
from gnnlint.semantic.typed_items import isinstance_class

if TYPE_CHECKING:
    from gnnlint.context import FileContext
    from gnnlint.semantic.model import ClassInfo, FuncInfo

CALL_KEY = "__call__"
# a library's libraries: their classes' calls run no project code
_LIBRARIES = ("torch", "torch_geometric", "torchvision", "numpy", "lightning", "pytorch_lightning", "hydra",
              "transformers", "dgl", "e3nn", "torch_scatter", "torch_sparse", "torchmetrics", "sklearn")


def called_instance(ctx: "FileContext", call: cst.Call, import_ref):
    """``ImportRef(module, "Class.__call__")`` when ``call`` calls an instance of
    a class another project file defines (``metric(out, y)`` with ``metric = RMSE()``,
    ``self.loss_fn(out, batch)`` with ``self.loss_fn = Loss()`` in ``__init__``)."""
    func = call.func
    if isinstance(func, cst.Name):
        if func.value in ctx.imports or func.value in ctx.classes or func.value in ctx.functions \
                or func.value == "self":
            return None  # a construction or a function, not an instance
    elif isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self":
        cls = ctx.enclosing_class(call)
        if cls is None or ctx.method_of(cls, func.attr.value) is not None:
            return None  # `self.method(...)`
    elif not isinstance(func, cst.Subscript):  # `self.metrics[subset][k](pred, target)`
        return None
    owner = (ctx.class_of(func, call) if not isinstance(func, cst.Subscript) else None) \
        or isinstance_class(ctx, func, call)  # under `if isinstance(self.metrics[s][k], AtomsMetric):`
    if not (isinstance(owner, import_ref) and owner.name[:1].isupper() and "." not in owner.name
            and (owner.level or (owner.module or "").split(".")[0] not in _LIBRARIES)):
        return None
    if ctx.compiled_value(func, call):
        return None  # the compiled model: its forward is compiled code, not an eager per-step helper
    return import_ref(owner.module, f"{owner.name}.{CALL_KEY}", owner.level)


def call_methods(ctx: "FileContext", cls: "ClassInfo") -> list["FuncInfo"]:
    """The methods of ``cls`` (or its local bases) that calling an instance runs: its own
    ``__call__``, a Metric's ``update`` and ``compute``. Not an ``nn.Module``'s ``forward``
    (``loss, terms = self.loss_fn(batch, out)``), though it runs every step: the argument
    values now reach it and its helpers (step_args.py reads ``Class.__call__`` facts for a
    forward), but a loss forward branches on keys of the step's batch (``if "positive_triples"
    in batch:``) that no project code may ever produce, and nothing tells that yet (s15steps:
    2 labelled-false lines in heldout17 against 3 true)."""
    method = ctx.method_of(cls, CALL_KEY)
    if method is not None:
        return [method]
    return metric_methods(ctx, cls)


def metric_methods(ctx: "FileContext", cls: "ClassInfo") -> list["FuncInfo"]:
    """A torchmetrics ``Metric`` with no ``forward`` of its own: its ``update`` and ``compute``
    (the library's ``forward`` runs both on every call); else nothing."""
    if ctx.method_of(cls, "forward") is not None or not _is_metric(ctx, cls):
        return []
    return _own_or_overrides(ctx, cls, "update") + _own_or_overrides(ctx, cls, "compute")


def _own_or_overrides(ctx: "FileContext", cls: "ClassInfo", name: str) -> list["FuncInfo"]:
    """``cls``'s method ``name``; when it has none (an abstract base: the instance is a
    subclass), the overrides of its local subclasses."""
    method = ctx.method_of(cls, name)
    if method is not None:
        return [method]
    return [sub.methods[name] for sub in local_subclasses(ctx).get(cls.name, ()) if name in sub.methods]


def _is_metric(ctx: "FileContext", cls: "ClassInfo") -> bool:
    """A torchmetrics ``Metric`` (through this file's bases): ``Metric.forward`` runs update and compute."""
    for current in ctx.local_lineage(cls):
        for base in current.bases:
            if base.split(".")[-1] in ctx.classes:
                continue
            resolved = ctx.resolve_dotted(base) or base
            if resolved.split(".")[0] == "torchmetrics" and resolved.split(".")[-1] == "Metric":
                return True
    return False


def instance_callers(ctx: "FileContext", func: "FuncInfo") -> list[cst.Call]:
    """The calls of this file that run the ``update`` / ``compute`` of a local
    torchmetrics ``Metric`` by calling an instance (``metric(out, y)``): steps.py's callers."""
    cls = func.cls
    if cls is None or func.name not in ("update", "compute") or func not in metric_methods(ctx, cls):
        return []
    memo = ctx.__dict__.setdefault("_instance_callers", {})
    if cls.name not in memo:
        memo[cls.name] = [call for call in ctx.all_calls() if isinstance(call.func, (cst.Name, cst.Attribute))
                          and not (isinstance(call.func, cst.Name) and call.func.value in ctx.classes)
                          and ctx.class_of(call.func, call) is cls]
    return memo[cls.name]
