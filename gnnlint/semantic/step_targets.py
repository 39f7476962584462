"""Which imported function or method a per-step call names (GNN013's cross-file step facts).

``StepAnalysis`` (steps.py) tells the file defining a function that another file calls it every step
of a loop driving compiled code; this module answers which function that is: an imported name, a
module attribute, a method of an imported class (the receiver's class, its annotation, a base class),
a ``functools.partial`` held on ``self``, a helper handed in as a parameter (``loss_fn``).
"""
from __future__ import annotations

import libcst as cst

from gnnlint.semantic.arg_classes import told_param_class
from gnnlint.semantic.instance_calls import called_instance
from gnnlint.semantic.passed_functions import passed_function
from gnnlint.semantic.step_handoffs import compiled_class, hands_compiled_to_step

_LIBRARIES = ("torch", "torch_geometric", "torchvision", "numpy", "lightning", "pytorch_lightning", "hydra",
              "transformers", "dgl", "e3nn", "torch_scatter", "torch_sparse")


def imported_target(ctx, call: cst.Call, import_ref, alongside=()):
    """The function or method another file of the project defines that
    ``call`` runs: ``helper(x)`` (``from .m import helper``), ``ops.helper(x)``
    (``from . import ops``), ``obj.method(x)`` on an instance of an imported class
    (on the compiled wrapper only when the same step also calls the wrapper itself,
    among ``alongside``: ``pred = model(batch)`` then ``loss = model.loss(pred, ...)``)."""
    func = call.func
    held = _held_function(ctx, call)  # `self.prep(data)` with `self.prep = partial(helper, cfg=cfg)`
    if held is not None:
        return held
    if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self":
        made = _factory_result(ctx, call, import_ref)  # `self.augment(batch)`, `self.augment = build_aug(cfg)`
        if made is not None:
            return made
        instance = called_instance(ctx, call, import_ref)  # `self.loss_fn(out, batch)`: what calling it runs
        if instance is not None:
            return instance
    inherited = _inherited_target(ctx, call, import_ref)
    if inherited is not None:
        return inherited
    if isinstance(func, cst.Subscript):
        return called_instance(ctx, call, import_ref)  # `self.metrics[subset][k](pred, y)`, narrowed by isinstance
    if isinstance(func, cst.Name):
        ref = ctx.imports.get(func.value)
        if ref is not None and ref.name[:1].islower() and "." not in ref.name:
            return ref
        return passed_function(ctx, call) or _factory_result(ctx, call, import_ref) \
            or called_instance(ctx, call, import_ref)  # `loss_fn(pred, y)`, handed the imported helper (passed_functions.py); `metric(out, y)`
    if not isinstance(func, cst.Attribute) or len(func.attr.value) < 2 or func.attr.value.startswith("__"):
        return None
    if isinstance(func.value, cst.Name) and func.value.value in ctx.imports:
        ref = ctx.imports[func.value.value]
        if ref.name and ref.name[:1].islower() and "." not in ref.name:  # a module
            module = f"{ref.module}.{ref.name}" if ref.module else ref.name
            return import_ref(module, func.attr.value, ref.level)
        return None
    if isinstance(func.value, cst.Name) and func.value.value in ctx.aliases:
        return ctx._imported_function(call)  # `import utils` then `utils.gradient_clipping(model, q)`
    if isinstance(func.value, (cst.Name, cst.Attribute)):
        if ctx.compiled_value(func.value, call):
            if not hands_compiled_to_step(ctx, call) and not _wrapper_called(ctx, func.value, alongside):
                return None  # `model.encode(x)` on the compiled wrapper runs eagerly, outside what is compiled
            owner = compiled_class(ctx, func.value, call)  # `model.train_step(model, ...)`: the model's class
        else:
            owner = ctx.class_of(func.value, call) or _annotated_import(ctx, func.value, call, import_ref) \
                or told_param_class(ctx, func.value, call)  # handed in by the file calling with the model
        if isinstance(owner, import_ref) and owner.name[:1].isupper() and "." not in owner.name:
            return import_ref(owner.module, f"{owner.name}.{func.attr.value}", owner.level)
    return None


def _annotated_import(ctx, expr: cst.BaseExpression, at: cst.CSTNode, import_ref):
    """``trainer`` of ``def on_train_batch(self, trainer: "Trainer", ...)`` with ``Trainer``
    imported from a project module (also under ``if TYPE_CHECKING:``): that class."""
    if not isinstance(expr, cst.Name):
        return None
    binding, _func = ctx.lookup(expr.value, at)
    param = binding.node if binding is not None and binding.how == "param" else None
    if not isinstance(param, cst.Param) or param.annotation is None:
        return None
    ann = param.annotation.annotation
    name = ann.value if isinstance(ann, cst.Name) else \
        ann.raw_value if isinstance(ann, cst.SimpleString) and ann.raw_value.isidentifier() else None
    ref = ctx.imports.get(name) if name else None
    if not isinstance(ref, import_ref) or not ref.name[:1].isupper() or (
            not ref.level and ref.module.split(".")[0] in ("torch", "torch_geometric", "lightning", "pytorch_lightning")):
        return None
    return ref


def _wrapper_called(ctx, wrapper: cst.BaseExpression, calls) -> bool:
    """One of ``calls`` runs the compiled wrapper itself (``model(batch)`` next to ``model.loss(...)``):
    the step runs compiled code, and the wrapper's eager methods run once per step with it."""
    if not isinstance(wrapper, cst.Name):
        return False
    return any(isinstance(c.func, cst.Name) and c.func.value == wrapper.value
               and ctx.lookup(wrapper.value, c)[0] is ctx.lookup(wrapper.value, wrapper)[0] for c in calls)


def _held_function(ctx, call: cst.Call):
    """``self.prep(data)`` where the class stores an imported project function in
    ``self.prep`` (``partial(helper, cfg=cfg)`` or ``helper`` itself): that function."""
    func = call.func
    if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self"):
        return None
    cls = ctx.enclosing_class(call)
    if cls is None or ctx.method_of(cls, func.attr.value) is not None:
        return None
    for value in ctx.class_attr_values(cls, func.attr.value):
        if isinstance(value, cst.Call) and ctx.resolve(value.func) == "functools.partial" and value.args:
            value = value.args[0].value
        ref = ctx.imports.get(value.value) if isinstance(value, cst.Name) else None
        if ref is not None and ref.name[:1].islower() and "." not in ref.name:
            return ref
    return None


def _factory_result(ctx, call: cst.Call, import_ref):
    """``transform(batch)`` with ``transform = get_augmentation(cfg)`` (or ``self.augment``
    stored so) and ``get_augmentation`` an imported project function: what it returns is
    called, told as ``ImportRef(module, "get_augmentation()")`` (returned_callables.py)."""
    func = call.func
    if isinstance(func, cst.Name):
        binding, _scope = ctx.lookup(func.value, call)
        values = [binding.value] if binding is not None and binding.how == "assign" else []
    else:
        cls = ctx.enclosing_class(call)
        if cls is None or ctx.method_of(cls, func.attr.value) is not None:
            return None
        values = list(ctx.class_attr_values(cls, func.attr.value))
    for value in values:
        if not isinstance(value, cst.Call):
            continue
        maker = value.func
        if isinstance(maker, cst.Name):
            ref = ctx.imports.get(maker.value)
            if ref is not None and ref.name[:1].islower() and "." not in ref.name and ref.name.isidentifier() \
                    and (ref.level or (ref.module or "").split(".")[0] not in _LIBRARIES):
                return import_ref(ref.module, f"{ref.name}()", ref.level)
        elif isinstance(maker, cst.Attribute) and isinstance(maker.value, cst.Name) \
                and maker.value.value in ctx.imports and maker.attr.value[:1].islower():
            ref = ctx.imports[maker.value.value]  # `augment.get_augmentation(cfg)` of a project module
            module = f"{ref.module}.{ref.name}" if ref.module else ref.name
            if ref.name and ref.name[:1].islower() and "." not in ref.name \
                    and (ref.level or module.split(".")[0] not in _LIBRARIES):
                return import_ref(module, f"{maker.attr.value}()", ref.level)
    return None


def _inherited_target(ctx, call: cst.Call, import_ref):
    """``self._backward(loss)`` in a class that does not define ``_backward``
    (nor do its local bases): the method of its base class imported from
    another file of the project (``Base._backward`` there)."""
    func = call.func
    if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self"):
        return None
    cls = ctx.enclosing_class(call)
    if cls is None or ctx.method_of(cls, func.attr.value) is not None or func.attr.value.startswith("__"):
        return None
    for base in cls.bases:
        ref = ctx.imports.get(base.split(".")[0])
        if ref is not None and "." not in base and ref.name[:1].isupper() and (
                ref.level or ref.module.split(".")[0] not in ("torch", "torch_geometric", "lightning", "pytorch_lightning")):
            return import_ref(ref.module, f"{ref.name}.{func.attr.value}", ref.level)
    return None


def ref_text(ref: tuple, fallback: str) -> str:
    if ref[0] == "name":
        return ref[1]
    if ref[0] == "self":
        owner = getattr(ref[2], "name", None) if len(ref) > 2 else None
        # a loop outside the class runs it through a method (`trainer.train(graph)`)
        return f"self.{ref[1]}` of `{owner}" if owner else f"self.{ref[1]}"
    if ref[0] == "func":
        return ref[1].name
    return fallback


