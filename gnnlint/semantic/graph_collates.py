"""Does this ``collate_fn`` of another project file batch graphs?

A ``torch.utils.data.DataLoader`` yields batches of varying size when its
``collate_fn`` assembles PyG / DGL graphs (feeds.py asks, GNN007 / GNN006)::

    # helpers/graphs.py
    def collate_sequences(items):
        return [Batch.from_data_list(list(step)) for step in zip(*items)]

    # train.py
    from helpers.graphs import collate_sequences
    loader = DataLoader(ds, batch_size=32, collate_fn=collate_sequences)

Within one file feeds.py reads the local function's calls; across files it
cannot. ``export_graph_collates`` tells the files importing a top-level
function that it calls ``Batch.from_data_list`` / ``Collater`` / ``dgl.batch``
(the exact, cheap precondition: the file names one of them);
``imported_graph_collate`` answers for a ``collate_fn=`` value here.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from gnnlint.facts import ImportRef

if TYPE_CHECKING:
    from gnnlint.context import FileContext

def batches_graphs(ctx: "FileContext", node: cst.BaseExpression) -> bool:
    """``Batch.from_data_list(...)`` / ``Collater(...)`` of PyG, ``dgl.batch(...)``."""
    resolved = ctx.resolve(node.func if isinstance(node, cst.Call) else node) or ""
    return resolved.endswith(("Batch.from_data_list", ".Collater")) and resolved.startswith("torch_geometric") \
        or resolved == "dgl.batch"


def export_graph_collates(ctx: "FileContext") -> None:
    if not _names_batching(ctx):
        return
    for name, func in ctx.functions.items():
        if func.cls is not None or func.parent is not None or func.is_async:
            continue
        if any(batches_graphs(ctx, call) for call in func.calls):
            ctx.exported.graph_collates.append((ImportRef("", name), f"`{name}` batches graphs"))


def _names_batching(ctx: "FileContext") -> bool:
    """The file imports PyG or DGL (an exact precondition of ``batches_graphs``)."""
    return any(dotted.split(".")[0] in ("torch_geometric", "dgl") for dotted in ctx.aliases.values())


def imported_graph_collate(ctx: "FileContext", collate: cst.BaseExpression, at: cst.Call) -> bool:
    """``collate`` (the ``collate_fn=`` of ``at``) is a function of another project file that batches graphs."""
    facts = ctx.project.graph_collates
    return bool(facts) and ctx.imported_function_key(at, collate) in facts
