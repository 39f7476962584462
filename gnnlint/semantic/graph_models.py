"""Does the object compiled here consume mini-batches of several graphs, wherever its class lives?

A loader gnnlint cannot trace (``dm.test_dataloader()`` of a data module a Hydra
config builds, ``self.train_dataloader`` of a trainer another file constructs)
counts as variable-size only when its batches are used as graph batches. The
loop may hand them on untouched (``preds = [model(x) for model in models]``);
the compiled model itself then tells: its ``forward`` reads the per-graph
structure of what it is handed (``data.batch``, ``global_add_pool(x, batch)``:
batched_graphs.py). That is the same evidence, one call further in.

- ``export(ctx)``: the local ``nn.Module`` classes another file compiles whose ``forward`` reads graph
  batches, as ``graph_steps`` facts keyed ``"<Class>" + FORWARD`` (pulled by the
  files naming the class in an import line; a Hydra config naming it is joined
  by fact_joins.join_config_graph_steps under ``CONFIG_GROUP + group + FORWARD``).
  LightningModules keep their own ``"<Class>"`` key (lightning_feeds.py).
- ``site_graph_batches(ctx, site_node)``: why the object compiled at
  ``site_node`` reads graph batches (its class here, an imported class, the
  classes a config group builds), or None.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import libcst as cst

from gnnlint.config_targets import CONFIG_GROUP, is_group_ref
from gnnlint.facts import ImportRef
from gnnlint.semantic.batched_graphs import batched_graphs_why, graph_batch_read
from gnnlint.semantic.model import ClassInfo

if TYPE_CHECKING:
    from gnnlint.context import FileContext

FORWARD = ".forward"  # the key suffix of a plain module's forward (not a Lightning step)


def forward_why(ctx: FileContext, cls: ClassInfo) -> Optional[str]:
    """Why the ``forward`` of module class ``cls`` reads batches of several graphs, or None."""
    method = ctx.method_of(cls, "forward")
    if method is None:
        return None
    read = graph_batch_read(ctx, method)
    return f"`{cls.name}.forward` reads `{read}` (a batch of several graphs)" if read is not None else None


def export(ctx: FileContext) -> None:
    """Tell the files importing a local module class another file compiles that its forward reads
    graph batches (only compiled classes: the fact re-lints their importers)."""
    if not ctx.project.compiled:
        return
    for cls in ctx.class_info.values():
        if cls.name not in ctx.project.compiled or "forward" not in cls.methods or not ctx.is_module_class(cls):
            continue  # exact, cheap preconditions before the walk of forward's body
        why = forward_why(ctx, cls)
        if why is not None:
            ctx.exported.graph_steps.append((ImportRef("", cls.name + FORWARD), why))


def site_graph_batches(ctx: FileContext, site_node: cst.CSTNode) -> Optional[str]:
    """Why the object compiled at ``site_node`` consumes graph mini-batches, or None."""
    cls = ctx.compile_targets.get(site_node)
    if isinstance(cls, ClassInfo):
        return batched_graphs_why(ctx, cls)
    steps = ctx.project.graph_steps
    if not steps:
        return None
    if isinstance(cls, ImportRef):
        return steps.get(cls.name + FORWARD) or steps.get(cls.name)
    if isinstance(site_node, cst.Call) and site_node.args:  # `torch.compile(instantiate(cfg.model))`
        for choice, _when in ctx.model_choices(site_node.args[0].value, site_node):
            if isinstance(choice, ImportRef) and is_group_ref(choice):
                why = steps.get(CONFIG_GROUP + choice.name + FORWARD) or steps.get(CONFIG_GROUP + choice.name)
            elif isinstance(choice, ImportRef):
                why = steps.get(choice.name + FORWARD) or steps.get(choice.name)
            else:
                why = batched_graphs_why(ctx, choice) if isinstance(choice, ClassInfo) else None
            if why:
                return why
    return None
