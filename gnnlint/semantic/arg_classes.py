"""Which project class does a parameter hold, told by the file that calls with a compiled model?

A script builds the objects and hands them, with the compiled model, to another file's training
function; that function (or a local helper it passes them on to) calls methods on them every step::

    # main.py
    from dataset import Dataset
    from train_loops import get_train_fn
    dataset = Dataset(name=args.dataset, device=args.device)
    model = get_model(args, dataset)                       # compiled there
    train_fn = get_train_fn(args.regime)
    train_fn(model=model, dataset=dataset, args=args)

    # train_loops.py (imports no Dataset)
    def evaluate(model, dataset):
        preds = model(dataset.graph, dataset.features)
        return dataset.compute_metrics(preds)              # Dataset.compute_metrics, every step

``export_arg_classes`` (asked by handoffs.py for the calls it tells ``compiled_args`` of) tells the
callee's file the project class of each other argument (``arg_classes`` facts: an absolute import, so
the class resolves the same from the callee's file). ``told_param_class`` answers for a parameter of
such a function, or of a local function every local caller passes it on to (steps.py's per-step
method calls, step_targets.py).
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from gnnlint.facts import ImportRef
from gnnlint.semantic.model import FuncInfo, arg_specs

_LIBRARIES = ("torch", "torch_geometric", "numpy", "lightning", "pytorch_lightning", "dgl")
_MAX_DEPTH = 3


def export_arg_classes(ctx, call: cst.Call, targets: list, skip: set) -> None:
    """For ``call`` (handing a compiled object to each of ``targets``), tell each target the
    project class of every other argument an absolute import names (``skip``: the specs passing
    the compiled object)."""
    for spec, arg in arg_specs(call):
        if spec in skip:
            continue
        owner = ctx.class_of(arg.value, call)
        if not isinstance(owner, ImportRef) or owner.level or not owner.name[:1].isupper() \
                or "." in owner.name or (owner.module or "").split(".")[0] in _LIBRARIES:
            continue
        for target in targets:
            ctx.exported.arg_classes.append(
                (ImportRef(target.module, f"{target.name}:{spec}", target.level), f"{owner.module}|{owner.name}"))


def told_param_class(ctx, expr: cst.BaseExpression, at: cst.CSTNode, depth: int = 0) -> Optional[ImportRef]:
    """``dataset`` a parameter of a top-level function another file calls with a compiled model and a
    ``Dataset`` for it (``arg_classes`` fact), or of a local function every local caller hands such a
    parameter to: that class (an absolute ImportRef)."""
    if not ctx.project.arg_classes or depth > _MAX_DEPTH:
        return None
    if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self":
        # `self.dataset.compute_metrics(...)` in a class another file builds with the compiled model
        # and the dataset (`Trainer(model, dataset)`): what its `__init__` stored there
        cls = ctx.enclosing_class(at)
        values = ctx.class_attr_values(cls, expr.attr.value) if cls is not None else []
        owners = {told_param_class(ctx, v, v, depth + 1) for v in values}
        return owners.pop() if len(owners) == 1 else None
    if not isinstance(expr, cst.Name):
        return None
    binding, func = ctx.lookup(expr.value, at)
    if binding is None or binding.how != "param" or not isinstance(func, FuncInfo) \
            or not isinstance(binding.node, cst.Param):
        return None
    name = expr.value
    params = [p.name.value for p in func.node.params.params]
    owner = None
    if func.parent is None and func.name in ctx.functions:
        owner = func.name
    elif func.name == "__init__" and params[:1] == ["self"]:
        cls = ctx.enclosing_class(func.node)
        if cls is not None and ctx.classes.get(cls.name) is cls:
            owner, params = cls.name, params[1:]  # `Trainer(model, dataset)`: positions after self
    if owner is not None:
        keys = [f"{owner}:{name}"] + ([f"{owner}:{params.index(name)}"] if name in params else [])
        for key in keys:
            told = ctx.project.arg_classes.get(key)
            if told:
                module, _, cls = told.split(",")[0].split(", from ")[0].partition("|")
                if module and cls.isidentifier():
                    return ImportRef(module, cls, 0)
    found: Optional[ImportRef] = None
    callers = ctx.callers_of(func)
    for call in callers:
        arg = ctx.arg_for_param(func, call, name)
        owner = told_param_class(ctx, arg, call, depth + 1) if arg is not None else None
        if owner is None or found is not None and owner != found:
            return None
        found = owner
    return found
