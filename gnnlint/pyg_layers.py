"""PyG layers, models and utilities that break the torch.compile graph with
their defaults. One table, read by GNN014; every entry was measured on
torch 2.13.0 + torch_geometric 2.8.1 (CPU, backend eager, output checked
against eager) by the programs named in ``evidence``:
``shared/evidence/torch-2.13-pyg-2.8.1/eNN_*.py`` (``E06a``...) and this
repository's ``bench/evidence/e15_layers_more.py`` (``E15``).
``tests/test_rules_layers.py`` checks every entry's class or function and
every parameter name and position against the installed PyG.

Fields:
- ``name``: the public class (layer, model) or function name.
- ``kind``: "layer" (a module whose *constructor* decides: flagged where it
  is built), "model" (a ``BasicGNN`` model: its forward runs the convs in a
  Python loop, so a break loses the whole model forward), "function" (a
  utility: flagged where it is called in compiled code).
- ``where``: the line of PyG's source that breaks and dynamo's reason.
- ``avoid``: options that each avoid the break (``add_self_loops=False``);
  empty when no option does.
- ``when``: the break needs this option (``SAGEConv(aggr="lstm")``);
- ``once``: with this option the break happens on the first call only
  (``cached=True``: the normalisation is cached, later calls are one graph;
  E18), so the layer does not break "on every call";
  None when the default breaks.
- ``fullgraph``: True when ``torch.compile(..., fullgraph=True)`` compiles it
  as one graph (on torch 2.13 fullgraph turns on
  ``capture_dynamic_output_shape_ops`` and ``capture_scalar_outputs``),
  False when fullgraph raises, None when not measured.
- ``reasons``: dynamo's reason keys (report.md): NZ (nonzero: dynamic output
  shape), ITEM (``.item()``), DDB (data-dependent branch), DDO
  (data-dependent operator), RNN, SKIPFN (a function dynamo skips).
- ``fix``: what to do instead when fullgraph does not help, in the user's words.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional


@dataclass(frozen=True)
class Option:
    """A constructor or call argument: ``keyword`` (at ``position`` among the
    parameters, -1 when it can only be given by keyword, e.g. passed through
    ``**kwargs``) with the literal ``value``."""

    keyword: str
    position: int
    value: object


@dataclass(frozen=True)
class LayerBreak:
    name: str
    kind: str
    where: str
    fix: str
    evidence: str
    avoid: tuple[Option, ...] = ()
    when: Optional[Option] = None
    once: Optional[Option] = None
    fullgraph: Optional[bool] = None
    reasons: frozenset = frozenset({"NZ"})
    # model entries: the break happens inside BasicGNN's layer loop, so the
    # whole model forward is skipped (False: after the loop, e.g. jk="lstm")
    in_loop: bool = True


def _o(keyword: str, position: int, value: object = False) -> Option:
    return Option(keyword, position, value)


_SELF_LOOPS = "`utils/loop.py:650` (`add_remaining_self_loops` in `gcn_norm`), `nonzero`"
_GCN_FIX = ("pass `add_self_loops=False` and add the self-loops once in the data pipeline "
            "(`T.AddSelfLoops()`), or `normalize=False` with `T.GCNNorm()` as a transform")
_LOOP_FIX = "pass `add_self_loops=False` and add the self-loops once in the data pipeline (`T.AddSelfLoops()`)"

TABLE: tuple[LayerBreak, ...] = (
    # --- layers (constructor options decide)
    LayerBreak("GCNConv", "layer", _SELF_LOOPS, _GCN_FIX, "E06a, E06f, E11f, E11h, E18",
               avoid=(_o("add_self_loops", 4), _o("normalize", 5)), once=_o("cached", 3, True), fullgraph=True),
    LayerBreak("GATConv", "layer", "`utils/loop.py:113` (`remove_self_loops`), `nonzero`", _LOOP_FIX,
               "E06a, E06f, E15c", avoid=(_o("add_self_loops", 6),), fullgraph=True),
    LayerBreak("GATv2Conv", "layer", "`utils/loop.py:113` (`remove_self_loops`), `nonzero`", _LOOP_FIX,
               "E06a, E11e", avoid=(_o("add_self_loops", 6),), fullgraph=True),
    LayerBreak("PointNetConv", "layer", "`utils/loop.py:113` (`remove_self_loops`), `nonzero`", _LOOP_FIX,
               "E06a, E06f", avoid=(_o("add_self_loops", 2),), fullgraph=True),
    LayerBreak("APPNP", "layer", _SELF_LOOPS, _GCN_FIX, "E06a, E15, E18",
               avoid=(_o("add_self_loops", 4), _o("normalize", 5)), once=_o("cached", 3, True), fullgraph=True),
    LayerBreak("SGConv", "layer", _SELF_LOOPS, _LOOP_FIX, "E06a, E15, E18",
               avoid=(_o("add_self_loops", 4),), once=_o("cached", 3, True), fullgraph=True),
    LayerBreak("GCN2Conv", "layer", _SELF_LOOPS, _GCN_FIX, "E06a, E15",
               avoid=(_o("add_self_loops", 6), _o("normalize", 7)), fullgraph=True),
    LayerBreak("ChebConv", "layer", "`utils/laplacian.py:60` and `cheb_conv.py:138`, `nonzero`",
               "no option avoids it; use `fullgraph=True`", "E06a, E06f", fullgraph=True),
    LayerBreak("MFConv", "layer", "`mf_conv.py:105` (degree buckets), `nonzero`; the layer's own frame is skipped",
               "no option avoids it; use `fullgraph=True`", "E06a, E06f", fullgraph=True),
    LayerBreak("HGTConv", "layer", "`nn/dense/linear.py:251` (`HeteroLinear`), `.item()`; the frame is skipped",
               "no option avoids it; use `fullgraph=True`", "E06b, E06f", fullgraph=True,
               reasons=frozenset({"ITEM"})),
    LayerBreak("RGCNConv", "layer", "`rgcn_conv.py:235`, `backend.py:55` (`.item()`) and `rgcn_conv.py:25` "
               "(`nonzero`); the frame is skipped",
               "use `FastRGCNConv` (measured: 0 breaks); `fullgraph=True` raises here", "E06a, E06f",
               fullgraph=False, reasons=frozenset({"NZ", "ITEM"})),
    LayerBreak("SAGEConv", "layer", "`aggr/base.py:154` (sorted-index check), `aggr/lstm.py:57` (LSTM); "
               "the frame is skipped",
               "use another aggregation (`aggr=\"mean\"`/`\"max\"`); `fullgraph=True` raises here",
               "E06a, E06f", when=_o("aggr", 2, "lstm"), fullgraph=False,
               reasons=frozenset({"DDB", "ITEM", "RNN"})),
    LayerBreak("Set2Set", "layer", "`aggr/set2set.py:50` (LSTM); the frame is skipped",
               "set `torch._dynamo.config.allow_rnn = True` and pass `dim_size` (measured: 0 breaks); "
               "`fullgraph=True` raises here", "E06c, E06f", fullgraph=False, reasons=frozenset({"RNN"})),
    LayerBreak("SortAggregation", "layer", "`aggr/base.py:154` (sorted-index check), `_to_dense_batch.py:113`; "
               "the frame is skipped",
               "use another readout (`global_*_pool`, `AttentionalAggregation(dim_size=)`); "
               "`fullgraph=True` raises here", "E06c, E06f", fullgraph=False,
               reasons=frozenset({"DDB", "ITEM"})),
    LayerBreak("TopKPooling", "layer", "`select/topk.py:29/45` (`.item()`, `nonzero`), "
               "`connect/filter_edges.py:31` (`nonzero`)", "no option avoids it; use `fullgraph=True`",
               "E06c, E06f", fullgraph=True, reasons=frozenset({"NZ", "ITEM"})),
    LayerBreak("SAGPooling", "layer", "`select/topk.py:29/45` (`.item()`, `nonzero`), "
               "`connect/filter_edges.py:31` (`nonzero`)", "no option avoids it; use `fullgraph=True`",
               "E06c, E06f", fullgraph=True, reasons=frozenset({"NZ", "ITEM"})),
    LayerBreak("EdgePooling", "layer", "`edge_pool.py:149/159`, `_coalesce.py:166/174`; the frame is skipped",
               "pool with another operator (`TopKPooling`, `global_*_pool`); `fullgraph=True` raises here",
               "E06c, E06f", fullgraph=False, reasons=frozenset({"NZ", "ITEM", "DDB", "DDO"})),
    LayerBreak("JumpingKnowledge", "layer", "`jumping_knowledge.py:89` (LSTM); the frame is skipped",
               "use `mode=\"cat\"` or `\"max\"`; `fullgraph=True` raises here", "E06c, E15",
               when=_o("mode", 0, "lstm"), fullgraph=False, reasons=frozenset({"RNN"})),
    # --- BasicGNN models: the convs run in `for i in range(self.num_layers)` (basic_gnn.py:178)
    LayerBreak("GCN", "model", "`GCNConv` inside the layer loop of `BasicGNN.forward` (basic_gnn.py:178): "
               + _SELF_LOOPS, "pass `add_self_loops=False` (forwarded to every `GCNConv`) and add the self-loops "
               "once in the data pipeline (`T.AddSelfLoops()`), or `normalize=False` with `T.GCNNorm()`",
               "E06c, E11e, E15", avoid=(_o("add_self_loops", -1), _o("normalize", -1)), fullgraph=True),
    LayerBreak("GAT", "model", "`GATConv` inside the layer loop of `BasicGNN.forward` (basic_gnn.py:178): "
               "`utils/loop.py:113`, `nonzero`", "pass `add_self_loops=False` (forwarded to every `GATConv`) and "
               "add the self-loops once in the data pipeline (`T.AddSelfLoops()`)",
               "E06c, E11e, E15", avoid=(_o("add_self_loops", -1),), fullgraph=True),
    LayerBreak("GraphSAGE", "model", "`SAGEConv(aggr=\"lstm\")` inside the layer loop of `BasicGNN.forward`",
               "use another aggregation; `fullgraph=True` raises here", "E06a, E06f",
               when=_o("aggr", -1, "lstm"), fullgraph=False, reasons=frozenset({"DDB", "ITEM", "RNN"})),
) + tuple(
    LayerBreak(model, "model", "`JumpingKnowledge(\"lstm\")` after the layer loop (`jumping_knowledge.py:89`, LSTM)",
               "use `jk=\"cat\"` or `\"max\"`; `fullgraph=True` raises here", "E06c, E15",
               when=_o("jk", 10, "lstm"), fullgraph=False, reasons=frozenset({"RNN"}), in_loop=False)
    for model in ("GCN", "GAT", "GraphSAGE", "GIN", "PNA", "EdgeCNN")
) + (
    # --- utilities called in compiled code
    LayerBreak("dropout_edge", "function", "`utils/dropout.py:212`, `nonzero`",
               "keep the edges and drop by weight (`edge_weight * (torch.rand(E) >= p)`), or drop edges in the "
               "data pipeline", "E06d, E06f, E15c", avoid=(_o("training", 3),), fullgraph=True),
    LayerBreak("dropout_node", "function", "`_subgraph.py:141/144`, `nonzero`",
               "drop nodes in the data pipeline, or mask features instead", "E06d, E15",
               avoid=(_o("training", 3),), fullgraph=True),
    LayerBreak("remove_self_loops", "function", "`utils/loop.py:113`, `nonzero`",
               "remove self-loops once in the data pipeline (`T.RemoveSelfLoops()`)", "E06d, E06f",
               fullgraph=True),
    LayerBreak("add_remaining_self_loops", "function", "`utils/loop.py:650`, `nonzero`",
               "add self-loops once in the data pipeline (`T.AddRemainingSelfLoops()`)", "E06d, E15",
               fullgraph=True),
    LayerBreak("to_undirected", "function", "`_coalesce.py:166/174` (data-dependent branch, `nonzero`)",
               "make the graph undirected once in the data pipeline (`T.ToUndirected()`); "
               "`fullgraph=True` raises here", "E06d, E06f", fullgraph=False,
               reasons=frozenset({"NZ", "DDB", "ITEM"})),
    LayerBreak("coalesce", "function", "`_coalesce.py:166/174` (data-dependent branch, `nonzero`)",
               "coalesce once in the data pipeline; `fullgraph=True` raises here", "E06d, E15",
               fullgraph=False, reasons=frozenset({"NZ", "DDB"})),
    LayerBreak("subgraph", "function", "`_subgraph.py:144`, `nonzero`",
               "take subgraphs in the data pipeline or the loader", "E06d, E06f", fullgraph=True),
    LayerBreak("k_hop_subgraph", "function", "`_subgraph.py:355`, `nonzero`; the frame is skipped",
               "take subgraphs in the data pipeline or the loader", "E06d, E06f", fullgraph=True),
    LayerBreak("is_undirected", "function", "`undirected.py:89` (`aten.equal`, data-dependent)",
               "check it once on the data, outside the model; `fullgraph=True` raises here", "E06d, E15",
               fullgraph=False, reasons=frozenset({"DDO"})),
    LayerBreak("contains_self_loops", "function", "`utils/loop.py:44`, `.item()`",
               "check it once on the data, outside the model", "E06d, E15", fullgraph=True,
               reasons=frozenset({"ITEM"})),
    LayerBreak("negative_sampling", "function", "`_negative_sampling.py:365/366/401` (`nonzero`) and 329 "
               "(`random.sample`); the frame is skipped",
               "sample negatives in the loader (`LinkNeighborLoader(neg_sampling=...)`, "
               "`T.RandomLinkSplit`); `fullgraph=True` raises here", "E06d, E06f", fullgraph=False,
               reasons=frozenset({"NZ", "SKIPFN"})),
)

_BY_NAME: dict[str, tuple[LayerBreak, ...]] = {}
for _entry in TABLE:
    _BY_NAME[_entry.name] = _BY_NAME.get(_entry.name, ()) + (_entry,)


def lookup(dotted: str, kinds: tuple[str, ...]) -> tuple[LayerBreak, ...]:
    """The entries for a resolved dotted name (``torch_geometric.nn.GCNConv``,
    ``torch_geometric.utils.dropout_edge``) of one of ``kinds``."""
    if not dotted:
        return ()
    parts = dotted.split(".")
    if parts[0] != "torch_geometric" or len(parts) < 3:
        return ()
    return tuple(e for e in _BY_NAME.get(parts[-1], ()) if e.kind in kinds)


def names() -> list[str]:
    return sorted(_BY_NAME)
