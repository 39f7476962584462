"""Does this module consume mini-batches of several graphs?

A model whose own code reads the per-graph structure of a graph batch is fed
mini-batches of several graphs, whoever feeds it (a Lightning / Hydra trainer
out of sight): each batch holds another number of nodes and edges. The
evidence is in the module's ``forward`` (or a LightningModule's step hooks),
on what it is handed -- not on ``self``:

- a read of the batch vector of a PyG ``Batch``: ``data.batch``,
  ``batch.ptr``, ``batch.num_graphs`` (also ``batch["ligand"].batch``, and
  ``x, edge_index, batch = data.x, data.edge_index, data.batch``), or a method
  only a batch of several graphs has (``batch.to_data_list()``, DGL's
  ``g.batch_num_nodes()``);
- a per-graph pool of PyG: ``global_mean_pool(x, batch)`` (``global_add_pool``,
  ``global_max_pool``, ...) given a batch vector, not ``None``.

A full-batch model on one graph (``GCN(data.x, data.edge_index)``) reads
none of these: it stays static. A padded, fixed-size feed is the feeds'
question (``LoaderFeed.padded``), not this one.

- ``graph_batch_read(ctx, func)``: the text of the first such read in
  ``func``, or None.
- ``batch_methods(ctx, cls)``: the methods handed the batch (``forward``, the
  step hooks, the helpers they hand it: ``self.model_step(batch)``).
- ``batched_graphs_why(ctx, cls)``: why ``cls`` consumes graph mini-batches
  (``"`Net.forward` reads `data.batch`"``), or None.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Iterator, Optional

import libcst as cst

from gnnlint.semantic.vocab import LIGHTNING_STEP_HOOKS

if TYPE_CHECKING:
    from gnnlint.context import FileContext
    from gnnlint.semantic.model import ClassInfo, FuncInfo

# the fields a PyG `Batch` has and a single `Data` graph does not (`num_graphs` of a Data is 1), and
# the methods only a batch of several graphs has: PyG's `to_data_list()` / `get_example(i)`, DGL's
# `batch_num_nodes()` / `batch_num_edges()` of a `dgl.batch`ed graph
_BATCH_FIELDS = frozenset(("batch", "ptr", "num_graphs", "to_data_list", "get_example", "batch_num_nodes",
                           "batch_num_edges"))
_POOLS = frozenset(("global_add_pool", "global_mean_pool", "global_max_pool", "global_sum_pool",
                    "global_sort_pool"))
# parameters that hold settings, not data: `cfg.batch` is a number
_SETTINGS = frozenset(("self", "cls", "cfg", "config", "args", "opt", "opts", "hparams", "params"))


def _walk(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    todo = [node]
    while todo:
        current = todo.pop()
        yield current
        if isinstance(current, (cst.FunctionDef, cst.ClassDef, cst.Lambda)) and current is not node:
            continue  # a nested function runs on its own arguments
        todo.extend(reversed(current.children))


def _root(expr: cst.BaseExpression) -> Optional[str]:
    while isinstance(expr, (cst.Attribute, cst.Subscript)):
        expr = expr.value
    return expr.value if isinstance(expr, cst.Name) else None


def graph_batch_read(ctx: FileContext, func: FuncInfo) -> Optional[str]:
    """The first read in ``func`` of the per-graph structure of a graph batch it
    is handed (``data.batch``, ``batch.num_graphs``, ``global_mean_pool(x, batch)``)."""
    params = {name for name in func.params if name not in _SETTINGS}
    if not params:
        return None
    for node in _walk(func.node.body):
        if isinstance(node, cst.Attribute) and node.attr.value in _BATCH_FIELDS and _root(node.value) in params:
            return ctx.module.code_for_node(node)
        if isinstance(node, cst.Call) and len(node.args) >= 2:
            dotted = ctx.resolve(node.func) or ""
            if dotted.startswith("torch_geometric.") and dotted.rsplit(".", 1)[-1] in _POOLS:
                second = node.args[1].value
                if not (isinstance(second, cst.Name) and second.value == "None"):
                    text = ctx.module.code_for_node(node)
                    return text if len(text) <= 60 and "\n" not in text else f"{ctx.module.code_for_node(node.func)}(...)"
    return None


def batch_methods(ctx: FileContext, cls: ClassInfo) -> list[tuple[str, FuncInfo]]:
    """``[(name, method), ...]``: the methods of ``cls`` handed its batch -- ``forward``, the Lightning
    step hooks, and the helpers a hook hands its batch parameter first (``self.model_step(batch)``,
    ``self.shared_step(batch, "train")``: one level)."""
    out: list[tuple[str, FuncInfo]] = []
    seen: set = set()
    for hook in ("forward",) + LIGHTNING_STEP_HOOKS:
        method = ctx.method_of(cls, hook)
        if method is None or id(method) in seen:
            continue
        seen.add(id(method))
        out.append((hook, method))
        params = [name for name in method.params if name not in ("self", "cls")]
        if not params or hook == "forward":
            continue
        for call in method.calls:
            func = call.func
            if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self" \
                    and call.args and call.args[0].keyword is None \
                    and isinstance(call.args[0].value, cst.Name) and call.args[0].value.value == params[0]:
                helper = ctx.method_of(cls, func.attr.value)
                if helper is not None and id(helper) not in seen:
                    seen.add(id(helper))
                    out.append((func.attr.value, helper))
    return out


def batched_graphs_why(ctx: FileContext, cls: ClassInfo) -> Optional[str]:
    """Why module ``cls`` consumes mini-batches of several graphs, or None: a method
    handed its batch (``batch_methods``) reads the batch's per-graph structure."""
    for name, method in batch_methods(ctx, cls):
        read = graph_batch_read(ctx, method)
        if read is not None:
            return f"`{cls.name}.{name}` reads `{read}` (a batch of several graphs)"
    return None
