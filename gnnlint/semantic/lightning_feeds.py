"""What does a Lightning Trainer feed a compiled LightningModule?

``trainer.fit(model, datamodule=dm)`` (``validate`` / ``test`` / ``predict``
too) runs the module's step methods on the batches of the data module's
loaders; Lightning compiles the step methods of a compiled module with its
``forward`` (``bench/evidence/e20_lightning_compiled_hooks.py``). When those
steps take PyG graph batches -- the batch parameter of a step method (or of
``forward``) annotated with PyG's ``Batch`` / ``Data`` / ``HeteroData``, also
inside ``Union[...]`` / ``Optional[...]`` -- every batch holds another number
of nodes and edges: the compiled module is fed variable-size batches (GNN007),
also when the data module comes from a config and its loaders are not known
in the file that compiles and fits.

- ``graph_steps_why(ctx, cls)``: why the step methods of a local
  LightningModule class take graph batches, or None. Exported as
  ``graph_steps`` facts ("Class" -> why), pulled by the files whose import
  lines name the class (the engine, as ``compiled_instances``).
- ``trainer_feed(ctx, site_node)``: ``(call, how)`` when the object compiled
  at ``site_node`` is such a module (local, or imported with a ``graph_steps``
  fact) and a ``.fit(...)`` / ``.validate(...)`` / ``.test(...)`` /
  ``.predict(...)`` call receives it.
- ``step_feed(ctx, site_node)``: ``(call, how)`` when such a module compiles
  its own method or submodule (``self.encode = torch.compile(self.encode)`` in
  ``setup``) and calls it: the steps run it on each batch's data.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import libcst as cst

from gnnlint.config_targets import CONFIG_GROUP, is_group_ref
from gnnlint.facts import ImportRef
from gnnlint.semantic.batched_graphs import batch_methods, batched_graphs_why
from gnnlint.semantic.model import ClassInfo

if TYPE_CHECKING:
    from gnnlint.context import FileContext

_LIGHTNING = ("lightning", "pytorch_lightning")
_GRAPH_BATCHES = {"torch_geometric.data.Batch", "torch_geometric.data.Data", "torch_geometric.data.HeteroData",
                  "torch_geometric.data.batch.Batch", "torch_geometric.data.data.Data",
                  "torch_geometric.data.hetero_data.HeteroData"}
_TRAINER_CALLS = ("fit", "validate", "test", "predict")


def graph_steps_why(ctx: FileContext, cls: ClassInfo) -> Optional[str]:
    """Why the step methods of LightningModule ``cls`` take PyG graph batches, or None."""
    if not ctx._derives_from(cls, _LIGHTNING, "LightningModule"):
        return None
    for hook, method in batch_methods(ctx, cls):  # the hooks, forward, `self.model_step(batch)`
        params = [p for name, p in method.params.items() if name not in ("self", "cls")]
        if not params or params[0].annotation is None:
            continue
        annotation = params[0].annotation.annotation
        if _names_graph_batch(ctx, annotation):
            text = ctx.module.code_for_node(annotation)
            return f"`{cls.name}.{hook}` takes `{text}` (PyG graph batches)"
    return batched_graphs_why(ctx, cls)  # unannotated: what the steps read of the batch


def _names_graph_batch(ctx: FileContext, annotation: cst.BaseExpression) -> bool:
    todo = [annotation]
    while todo:
        node = todo.pop()
        if isinstance(node, (cst.Name, cst.Attribute)) and (ctx.resolve(node) or "") in _GRAPH_BATCHES:
            return True
        if isinstance(node, cst.SimpleString):  # "Batch" as a forward reference
            try:
                node = cst.parse_expression(node.evaluated_value)
            except Exception:  # noqa: BLE001 -- not an expression: not a type
                continue
            if (ctx.resolve(node) or "") in _GRAPH_BATCHES:
                return True
            continue
        todo.extend(node.children)
    return False


def export(ctx: FileContext) -> None:
    """Tell the files importing a local LightningModule that its steps take graph batches."""
    for cls in ctx.class_info.values():
        why = graph_steps_why(ctx, cls)
        if why is not None:
            ctx.exported.graph_steps.append((ImportRef("", cls.name), why))


def trainer_feed(ctx: FileContext, site_node: cst.CSTNode) -> Optional[tuple[cst.Call, str]]:
    """The trainer call that feeds the LightningModule compiled at ``site_node``
    graph batches, and how (for messages); None when there is none."""
    cls = ctx.compile_targets.get(site_node)
    if isinstance(cls, ClassInfo):
        why = graph_steps_why(ctx, cls)
    elif isinstance(cls, ImportRef):
        why = ctx.project.graph_steps.get(cls.name)
    elif ctx.project.graph_steps and isinstance(site_node, cst.Call) and site_node.args:
        why = _config_graph_steps(ctx, site_node)  # `model = hydra.utils.instantiate(cfg.model)`
    else:
        return None
    if not why:
        return None
    names = {ref[1] for ref in ctx.compiled_refs(site_node) if ref[0] == "name"}
    for call in ctx.all_calls():
        func = call.func
        if not (isinstance(func, cst.Attribute) and func.attr.value in _TRAINER_CALLS):
            continue
        given = [a.value for a in call.args if a.keyword is None][:1] + \
            [a.value for a in call.args if a.keyword is not None and a.keyword.value == "model"]
        if any(isinstance(v, cst.Name) and v.value in names for v in given):
            return call, f"`{ctx.module.code_for_node(func)}(...)` runs the compiled steps; {why}"
    return None


def _config_graph_steps(ctx: FileContext, site: cst.Call) -> Optional[str]:
    """What the project says of the steps of the classes a Hydra config group builds for the compiled
    object (fact_joins.join_config_graph_steps), when it is built from one."""
    for choice, _when in ctx.model_choices(site.args[0].value, site):
        if is_group_ref(choice):
            why = ctx.project.graph_steps.get(CONFIG_GROUP + choice.name)
            if why:
                return why
    return None


def step_feed(ctx: FileContext, site_node: cst.CSTNode) -> Optional[tuple[cst.Call, str]]:
    """A LightningModule compiling its own method or submodule (``self.encode =
    torch.compile(self.encode)`` in ``setup`` / ``__init__``) when its steps take
    graph batches: whoever fits it, the compiled code runs on what the steps make
    of each batch. The first call of the compiled ``self.<attr>(...)`` in the
    class, and how (for messages); None when the class never calls it (a
    wrapper only reached through ``.encode(...)`` runs eagerly: e22)."""
    cls = ctx.enclosing_class(site_node)
    attrs, held = set(), set()
    for ref in ctx.compiled_refs(site_node) if cls is not None else ():
        if ref[0] == "self":
            attrs.add(ref[1])
        elif ref[0] == "method" and isinstance(ref[1], tuple) and ref[1][:1] == ("self",):
            held.add((ref[1][1], ref[2]))  # `self.model.encoder = torch.compile(self.model.encoder)`
    why = graph_steps_why(ctx, cls) if attrs or held else None
    if not why:
        return None
    for call in ctx.all_calls():
        func = call.func
        if not isinstance(func, cst.Attribute) or ctx.enclosing_class(call) is not cls:
            continue
        attr = _self_attr(func)
        if attr in attrs or (_self_attr(func.value), func.attr.value) in held \
                or any(attr == holder and _runs_submodule(ctx, func, call, sub) for holder, sub in held):
            return call, f"`{ctx.module.code_for_node(func)}(...)` runs in the steps Lightning feeds; {why}"
    return None


def _self_attr(expr: cst.BaseExpression) -> Optional[str]:
    """``attr`` of ``self.attr``."""
    if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self":
        return expr.attr.value
    return None


def _runs_submodule(ctx: FileContext, holder: cst.Attribute, call: cst.Call, sub: str) -> bool:
    """Calling ``self.model(...)`` runs its submodule ``self.model.encoder`` (its forward does);
    not a method of the holder's local class (``self.model.encode``), which runs only called by name."""
    cls = ctx.class_of(holder, call)
    return not (isinstance(cls, ClassInfo) and ctx.method_of(cls, sub) is not None)
