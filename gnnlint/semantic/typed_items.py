"""What class are the items of a typed container parameter? What class does an ``isinstance`` test say?

A trainer stores the objects it is handed and calls them every step; only the annotation says what
they are::

    class LitNNP(pl.LightningModule):
        def __init__(self, model, outputs: List[ModelOutput], callbacks: Sequence[Callback] = ()):
            self.outputs = nn.ModuleList(outputs)
            self.callbacks = list(callbacks)

        def training_step(self, batch, idx):
            for output in self.outputs:               # a ModelOutput
                output.calculate_metrics(pred, batch, "train")

and a helper narrows what it calls with ``isinstance``::

    if isinstance(self.metrics[subset][k], AtomsMetric):
        metric = self.metrics[subset][k](pred, target)   # an AtomsMetric (or a subclass)

- ``item_class(ctx, expr)``: the one project class (local ``ClassInfo`` or imported ``ImportRef``) the
  items of ``expr`` are annotated as -- ``expr`` a parameter annotated ``List[C]`` / ``list[C]`` /
  ``Sequence[C]`` / ``Iterable[C]`` / ``tuple[C, ...]`` (also under ``Optional[...]``), or a call wrapping
  one (``nn.ModuleList(outputs)``, ``list(callbacks)``), or a local name built with one class's
  instances (``trackers = {k: Tracker(fn) for ...}`` iterated as ``trackers.values()``, ``[Loss(), Loss()]``);
  classes.py asks it for ``for x in self.<attr>`` and loop names.
- ``annotated_local_class(ctx, expr, at)``: the local class a parameter (or ``self.<attr>`` holding only
  one) is annotated as; hot_loops.py asks it for a per-step call of an abstract base's method.
- ``isinstance_class(ctx, expr, at)``: ``C`` of an enclosing ``if isinstance(<expr>, C):`` whose first
  argument is written as ``expr`` is (the same code).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import libcst as cst

from gnnlint.facts import ImportRef

if TYPE_CHECKING:
    from gnnlint.context import FileContext

_SEQUENCES = frozenset(("List", "list", "Sequence", "Iterable", "Collection", "MutableSequence", "Tuple", "tuple"))
_WRAPPERS = frozenset(("ModuleList", "list", "tuple", "Sequential"))
_LIBRARIES = ("torch", "torch_geometric", "lightning", "pytorch_lightning", "typing", "collections")


def item_class(ctx: "FileContext", expr: cst.BaseExpression, at: cst.CSTNode, depth: int = 0,
               index: Optional[int] = None):
    """The project class the items of ``expr`` are annotated as (see the module doc), or None. With
    ``index``, the class at that position of the items unpacked in a loop (``for code, stage in
    stages`` over ``list[tuple[int, Stage]]``; ``for name, m in mods.items()`` over ``dict[str, M]``)."""
    if index is not None and isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) \
            and expr.func.attr.value == "items" and not expr.args:
        return mapping_value_class(ctx, expr.func.value, at, depth) if index == 1 else None
    if isinstance(expr, cst.Call) and (ctx.last_part(expr.func) or "") in _WRAPPERS and len(expr.args) == 1 \
            and not expr.args[0].keyword and not expr.args[0].star:
        expr = expr.args[0].value  # `nn.ModuleList(outputs)`, `list(callbacks)`
    if isinstance(expr, cst.BooleanOperation) and isinstance(expr.operator, cst.Or):
        expr = expr.left  # `callbacks or []`
    if index is None and isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) \
            and expr.func.attr.value == "values" and not expr.args:
        expr = expr.func.value  # `for tracker in trackers.values():`
    if not isinstance(expr, cst.Name):
        return None
    binding, _func = ctx.lookup(expr.value, at)
    if binding is not None and binding.how == "assign" and isinstance(binding.value, cst.Call) and depth == 0:
        return item_class(ctx, binding.value, binding.value, 1, index)  # `hooks = list(callbacks)`
    if index is None and binding is not None and binding.how == "assign" and depth == 0:
        built = _built_items(ctx, binding.value)
        if built is not None:
            return built
    ann = _param_annotation(binding)
    if ann is None:
        return None
    item = _sequence_item(ctx, ann, want_node=index is not None)
    return item if index is None else _tuple_element(ctx, item, index)


def _param_annotation(binding) -> Optional[cst.BaseExpression]:
    param = binding.node if binding is not None and binding.how == "param" else None
    if not isinstance(param, cst.Param) or param.annotation is None:
        return None
    return _parsed(param.annotation.annotation)


def _built_items(ctx: "FileContext", value: cst.BaseExpression):
    """The one project class a container is built with: ``{k: Tracker(fn) for k, fn in fns.items()}``,
    ``[Scorer(m) for m in metrics]``, ``[LossA(), LossA(w=2)]`` (the values of a dict, the items of a list)."""
    if isinstance(value, cst.DictComp):
        items = [value.value]
    elif isinstance(value, (cst.ListComp, cst.SetComp, cst.GeneratorExp)):
        items = [value.elt]
    elif isinstance(value, (cst.List, cst.Tuple, cst.Set)):
        items = [e.value for e in value.elements]
    elif isinstance(value, cst.Dict):
        items = [e.value for e in value.elements]
    else:
        return None
    if not items or any(isinstance(e, (cst.StarredElement, cst.StarredDictElement)) for e in items):
        return None
    found = {_project_class(ctx, e.func) if isinstance(e, cst.Call) else None for e in items}
    return found.pop() if len(found) == 1 else None


def _parsed(ann: cst.BaseExpression) -> Optional[cst.BaseExpression]:
    if isinstance(ann, cst.SimpleString):  # `"List[Callback]"`
        try:
            return cst.parse_expression(ann.raw_value)
        except Exception:  # noqa: BLE001 - not an expression
            return None
    return ann


def _subscript(ctx: "FileContext", ann) -> tuple[str, list]:
    """``(head, items)`` of ``head[items]``, through ``Optional[...]`` and ``X | None``."""
    for _ in range(3):
        ann = _parsed(ann)
        if isinstance(ann, cst.BinaryOperation) and isinstance(ann.operator, cst.BitOr):
            parts = [p for p in (ann.left, ann.right) if not (isinstance(p, cst.Name) and p.value == "None")]
            if len(parts) != 1:
                return "", []
            ann = parts[0]
            continue
        if not isinstance(ann, cst.Subscript):
            return "", []
        head = ctx.last_part(ann.value) or ""
        items = [e.slice.value for e in ann.slice if isinstance(e.slice, cst.Index)]
        if head == "Optional" and len(items) == 1:
            ann = items[0]
            continue
        return head, items
    return "", []


def _sequence_item(ctx: "FileContext", ann: cst.BaseExpression, depth: int = 0, want_node: bool = False):
    ann = _parsed(ann)
    if not isinstance(ann, cst.Subscript) or depth > 2:
        return None
    head = ctx.last_part(ann.value) or ""
    items = [e.slice.value for e in ann.slice if isinstance(e.slice, cst.Index)]
    if head == "Optional" and len(items) == 1:
        return _sequence_item(ctx, items[0], depth + 1, want_node)
    if head not in _SEQUENCES or not items:
        return None
    if head in ("Tuple", "tuple") and not (len(items) == 2 and isinstance(items[1], cst.Ellipsis)):
        return None  # `tuple[A, B]`: two kinds of item
    return items[0] if want_node else _project_class(ctx, items[0])


def _tuple_element(ctx: "FileContext", item, index: int):
    """The class at ``index`` of a ``tuple[int, Stage]`` item annotation (a fixed-length tuple)."""
    head, items = _subscript(ctx, item) if item is not None else ("", [])
    if head not in ("Tuple", "tuple") or any(isinstance(i, cst.Ellipsis) for i in items) \
            or not 0 <= index < len(items):
        return None
    return _project_class(ctx, items[index])


_MAPPINGS = frozenset(("Dict", "dict", "Mapping", "MutableMapping", "OrderedDict", "ModuleDict"))


def mapping_value_class(ctx: "FileContext", expr: cst.BaseExpression, at: cst.CSTNode, depth: int = 0):
    """The value class of a parameter annotated ``dict[str, M]`` / ``Mapping[str, M]``."""
    if not isinstance(expr, cst.Name) or depth > 1:
        return None
    binding, _func = ctx.lookup(expr.value, at)
    ann = _param_annotation(binding)
    head, items = _subscript(ctx, ann) if ann is not None else ("", [])
    return _project_class(ctx, items[1]) if head in _MAPPINGS and len(items) == 2 else None


def _project_class(ctx: "FileContext", expr: cst.BaseExpression):
    """A local class or an imported project class named by ``expr``."""
    if isinstance(expr, cst.SimpleString) and expr.raw_value.isidentifier():
        expr = cst.Name(expr.raw_value)
    if not isinstance(expr, cst.Name) or not expr.value[:1].isupper():
        return None
    if expr.value in ctx.classes:
        return ctx.classes[expr.value]
    ref = ctx.imports.get(expr.value)
    if isinstance(ref, ImportRef) and ref.name[:1].isupper() and "." not in ref.name \
            and (ref.level or (ref.module or "").split(".")[0] not in _LIBRARIES):
        return ref
    return None


def annotated_local_class(ctx: "FileContext", expr: cst.BaseExpression, at: cst.CSTNode):
    """The local class a receiver is annotated as: a parameter ``loss_fn: LossFunction``, or
    ``self.loss_fn`` only ever assigned such a parameter (``self.loss_fn = loss_fn`` in ``__init__``)."""
    if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self":
        cls = ctx.enclosing_class(at)
        values = ctx.class_attr_values(cls, expr.attr.value) if cls is not None else []
        found = {annotated_local_class(ctx, v, v) if isinstance(v, cst.Name) else None for v in values}
        return found.pop() if len(found) == 1 else None
    if not isinstance(expr, cst.Name):
        return None
    binding, _func = ctx.lookup(expr.value, at)
    param = binding.node if binding is not None and binding.how == "param" else None
    if not isinstance(param, cst.Param) or param.annotation is None:
        return None
    found = _project_class(ctx, param.annotation.annotation)
    return found if found is not None and not isinstance(found, ImportRef) else None


def isinstance_class(ctx: "FileContext", expr: cst.BaseExpression, at: cst.CSTNode):
    """``C`` when ``at`` sits in the body of ``if isinstance(<expr>, C):`` (the same code as ``expr``)."""
    code = None
    child = at
    for anc in ctx.ancestors(at):
        if isinstance(anc, (cst.FunctionDef, cst.ClassDef)):
            return None
        if isinstance(anc, cst.If) and child is anc.body:
            test = anc.test
            if isinstance(test, cst.Call) and isinstance(test.func, cst.Name) and test.func.value == "isinstance" \
                    and len(test.args) == 2:
                code = code or ctx.module.code_for_node(expr)
                if ctx.module.code_for_node(test.args[0].value) == code:
                    return _project_class(ctx, test.args[1].value)
        child = anc
    return None

