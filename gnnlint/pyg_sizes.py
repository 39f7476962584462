"""PyG functions and modules that compute a size from data when it is not given.

One table, read by GNN009. Each entry was taken from the installed
torch_geometric 2.8.1 source: when the size argument is ``None`` the function
runs ``int(index.max()) + 1`` (or ``maybe_num_nodes(...)``, which does the
same), a device-to-host sync and, under ``torch.compile``, a graph break
("Unsupported Tensor.item() call"). ``source`` names the file and the line
that infers the size; ``tests/test_rules_dataflow.py`` checks every entry's
parameter names and positions against the installed signatures.

Functions that break the graph even with their size argument
(``add_remaining_self_loops``, ``coalesce``, ``to_undirected``,
``dropout_node``, ``negative_sampling``: ``nonzero`` / data-dependent
branches) are GNN014's (``gnnlint/pyg_layers.py``), not listed here: passing
the size would not help.

Fields:
- ``name``: the public function (or module class) name.
- ``package``: ``torch_geometric`` (any submodule) or ``torch_scatter``.
- ``sizes``: the parameters, as (keyword, positional index), that each avoid
  an inference when given; all of them are needed to avoid every sync.
- ``needs``: a parameter that must be passed (not None) for the inference to
  happen at all (``batch`` of the global pools: without it there is nothing
  to count), or None.
- ``unless``: a parameter whose presence avoids the inference (``ptr`` of
  ``softmax``: the size is ``ptr.numel() - 1``), or None.
- ``what``: what the size is, in the user's words.
- ``exempt``: a constructor option under which the module needs no size
  (``LayerNorm(mode="node")``: E15 measured 0 breaks).
- ``module``: True for a module class whose *call* takes the size
  (``SumAggregation()(x, index, dim_size=...)``); positions then count the
  call's arguments.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional


@dataclass(frozen=True)
class SizeArg:
    keyword: str
    position: int


@dataclass(frozen=True)
class SizeInference:
    name: str
    sizes: tuple[SizeArg, ...]
    what: str
    source: str
    needs: Optional[SizeArg] = None
    unless: Optional[SizeArg] = None
    package: str = "torch_geometric"
    module: bool = False
    # a constructor option (keyword, position, literal) under which the module
    # infers nothing: ``LayerNorm(..., mode="node")`` normalises per node
    exempt: Optional[tuple[str, int, str]] = None


def _s(keyword: str, position: int) -> SizeArg:
    return SizeArg(keyword, position)


# aggregation modules besides those listed one by one (SortAggregation, SetTransformerAggregation
# also pad with to_dense_batch, which needs `max_num_elements` too)
_MORE_AGGREGATIONS = (
    "SortAggregation", "SetTransformerAggregation", "MedianAggregation", "QuantileAggregation", "VarAggregation",
    "StdAggregation", "PowerMeanAggregation", "MulAggregation", "LSTMAggregation", "GRUAggregation", "Set2Set",
    "DeepSetsAggregation", "GraphMultisetTransformer", "MLPAggregation", "LCMAggregation", "EquilibriumAggregation",
    "VariancePreservingAggregation", "DegreeScalerAggregation", "PatchTransformerAggregation")
_POOL = "nn/pool/glob.py -> utils/_scatter.py:48 `dim_size = int(index.max()) + 1`"
_MAYBE = "utils/num_nodes.py:32 `int(edge_index.max()) + 1`"
_BATCH_TO_PTR = "nn/pool/__init__.py:37 `int(batch.max()) + 1` (`_batch_to_ptr`)"

TABLE: tuple[SizeInference, ...] = (
    # global pooling: scatter(x, batch, dim_size=size)
    SizeInference("global_add_pool", (_s("size", 2),), "number of graphs", _POOL, needs=_s("batch", 1)),
    SizeInference("global_mean_pool", (_s("size", 2),), "number of graphs", _POOL, needs=_s("batch", 1)),
    SizeInference("global_max_pool", (_s("size", 2),), "number of graphs", _POOL, needs=_s("batch", 1)),
    SizeInference("max_pool_x", (_s("batch_size", 3),), "number of graphs",
                  "nn/pool/max_pool.py:50 `int(batch.max().item()) + 1`", needs=_s("batch", 2)),
    SizeInference("avg_pool_x", (_s("batch_size", 3),), "number of graphs",
                  "nn/pool/avg_pool.py:48 `int(batch.max().item()) + 1`", needs=_s("batch", 2)),
    # point-cloud graph construction and sampling: batch -> ptr
    SizeInference("knn_graph", (_s("batch_size", 7),), "number of examples", _BATCH_TO_PTR, needs=_s("batch", 2)),
    SizeInference("radius_graph", (_s("batch_size", 7),), "number of examples", _BATCH_TO_PTR,
                  needs=_s("batch", 2)),
    SizeInference("knn", (_s("batch_size", 7),), "number of examples", _BATCH_TO_PTR, needs=_s("batch_x", 3)),
    SizeInference("radius", (_s("batch_size", 7),), "number of examples", _BATCH_TO_PTR, needs=_s("batch_x", 3)),
    SizeInference("fps", (_s("batch_size", 4),), "number of examples", _BATCH_TO_PTR, needs=_s("batch", 1)),
    # utils
    SizeInference("scatter", (_s("dim_size", 3),), "output size along `dim`",
                  "utils/_scatter.py:48 `int(index.max()) + 1`"),
    SizeInference("softmax", (_s("num_nodes", 3),), "number of groups (nodes)",
                  "utils/_softmax.py:83 `maybe_num_nodes(index, num_nodes)`", needs=_s("index", 1),
                  unless=_s("ptr", 2)),
    SizeInference("degree", (_s("num_nodes", 1),), "number of nodes",
                  "utils/_degree.py:28 `maybe_num_nodes(index, num_nodes)`"),
    SizeInference("to_dense_batch", (_s("batch_size", 4), _s("max_num_nodes", 3)),
                  "number of graphs and largest graph size",
                  "utils/_to_dense_batch.py:106,113 `int(batch.max()) + 1`, `int(num_nodes.max())`",
                  needs=_s("batch", 1)),
    SizeInference("to_dense_adj", (_s("batch_size", 4), _s("max_num_nodes", 3)),
                  "number of graphs and largest graph size",
                  "utils/_to_dense_adj.py:68,79 `int(batch.max()) + 1`, `int(num_nodes.max())`"),
    SizeInference("add_self_loops", (_s("num_nodes", 3),), "number of nodes",
                  "utils/loop.py:459 `maybe_num_nodes(edge_index, num_nodes)`"),
    SizeInference("get_self_loop_attr", (_s("num_nodes", 2),), "number of nodes",
                  "utils/loop.py:702 `maybe_num_nodes(edge_index, num_nodes)`"),
    SizeInference("one_hot", (_s("num_classes", 1),), "number of classes",
                  "utils/_one_hot.py:34 `int(index.max()) + 1`"),
    SizeInference("index_to_mask", (_s("size", 1),), "mask length",
                  "utils/mask.py:58 `int(index.max()) + 1`"),
    SizeInference("sort_edge_index", (_s("num_nodes", 2),), "number of nodes",
                  "utils/_sort_edge_index.py:107 `maybe_num_nodes(edge_index, num_nodes)`"),
    SizeInference("get_laplacian", (_s("num_nodes", 4),), "number of nodes",
                  "utils/laplacian.py:66 `maybe_num_nodes(edge_index, num_nodes)`"),
    SizeInference("remove_isolated_nodes", (_s("num_nodes", 2),), "number of nodes",
                  "utils/isolated.py:70 `maybe_num_nodes(edge_index, num_nodes)`"),
    SizeInference("structured_negative_sampling", (_s("num_nodes", 1),), "number of nodes",
                  "utils/_negative_sampling.py:250 `maybe_num_nodes(edge_index, num_nodes)`"),
    SizeInference("to_nested_tensor", (_s("batch_size", 3),), "number of graphs",
                  "utils/nested.py -> scatter(..., dim_size=batch_size)", needs=_s("batch", 1),
                  unless=_s("ptr", 2)),
    SizeInference("index2ptr", (_s("size", 1),), "number of rows (examples)",
                  "index.py:34 `int(index.max()) + 1`"),
    SizeInference("group_argsort", (_s("num_groups", 3),), "number of groups",
                  "utils/_scatter.py group_argsort -> scatter(..., dim_size=num_groups)"),
    # modules whose call infers a size
    SizeInference("SumAggregation", (_s("dim_size", 3),), "number of groups",
                  "nn/aggr/base.py:128 `int(index.max()) + 1`", needs=_s("index", 1), unless=_s("ptr", 2),
                  module=True),
    SizeInference("MeanAggregation", (_s("dim_size", 3),), "number of groups",
                  "nn/aggr/base.py:128 `int(index.max()) + 1`", needs=_s("index", 1), unless=_s("ptr", 2),
                  module=True),
    SizeInference("MaxAggregation", (_s("dim_size", 3),), "number of groups",
                  "nn/aggr/base.py:128 `int(index.max()) + 1`", needs=_s("index", 1), unless=_s("ptr", 2),
                  module=True),
    SizeInference("MinAggregation", (_s("dim_size", 3),), "number of groups",
                  "nn/aggr/base.py:128 `int(index.max()) + 1`", needs=_s("index", 1), unless=_s("ptr", 2),
                  module=True),
    SizeInference("SoftmaxAggregation", (_s("dim_size", 3),), "number of groups",
                  "nn/aggr/base.py:128 `int(index.max()) + 1`", needs=_s("index", 1), unless=_s("ptr", 2),
                  module=True),
    SizeInference("AttentionalAggregation", (_s("dim_size", 3),), "number of groups",
                  "nn/aggr/base.py:128 `int(index.max()) + 1`", needs=_s("index", 1), unless=_s("ptr", 2),
                  module=True),
    SizeInference("MultiAggregation", (_s("dim_size", 3),), "number of groups",
                  "nn/aggr/base.py:128 `int(index.max()) + 1`", needs=_s("index", 1), unless=_s("ptr", 2),
                  module=True),
    # every other aggregation module: they all run `Aggregation.__call__` (the same line)
    *(SizeInference(name, (_s("dim_size", 3),), "number of groups",
                    "nn/aggr/base.py:128 `int(index.max()) + 1`", needs=_s("index", 1), unless=_s("ptr", 2),
                    module=True) for name in _MORE_AGGREGATIONS),
    SizeInference("GraphNorm", (_s("batch_size", 2),), "number of graphs",
                  "nn/norm/graph_norm.py:70 `int(batch.max()) + 1`", needs=_s("batch", 1), module=True),
    SizeInference("InstanceNorm", (_s("batch_size", 2),), "number of graphs",
                  "nn/norm/instance_norm.py:79 `int(batch.max()) + 1`", needs=_s("batch", 1), module=True),
    SizeInference("PairNorm", (_s("batch_size", 2),), "number of graphs",
                  "nn/norm/pair_norm.py:64 -> utils/_scatter.py:48 `int(index.max()) + 1` (E15: 1 break, 2 recompiles)",
                  needs=_s("batch", 1), module=True),
    SizeInference("MeanSubtractionNorm", (_s("dim_size", 2),), "number of graphs",
                  "nn/norm/mean_subtraction_norm.py:33 -> utils/_scatter.py:48 `int(index.max()) + 1` (E15)",
                  needs=_s("batch", 1), module=True),
    SizeInference("LayerNorm", (_s("batch_size", 2),), "number of graphs",
                  "nn/norm/layer_norm.py:89 `int(batch.max()) + 1` (mode='graph')", needs=_s("batch", 1),
                  module=True, exempt=("mode", 3, "node")),
    # torch_scatter (PyG's former backend): dim_size from index.max() + 1 unless `out` is given
    SizeInference("scatter", (_s("dim_size", 4),), "output size along `dim`",
                  "torch_scatter/scatter.py `index.max() + 1`", unless=_s("out", 3), package="torch_scatter"),
    SizeInference("scatter_add", (_s("dim_size", 4),), "output size along `dim`",
                  "torch_scatter/scatter.py `index.max() + 1`", unless=_s("out", 3), package="torch_scatter"),
    SizeInference("scatter_sum", (_s("dim_size", 4),), "output size along `dim`",
                  "torch_scatter/scatter.py `index.max() + 1`", unless=_s("out", 3), package="torch_scatter"),
    SizeInference("scatter_mean", (_s("dim_size", 4),), "output size along `dim`",
                  "torch_scatter/scatter.py `index.max() + 1`", unless=_s("out", 3), package="torch_scatter"),
    SizeInference("scatter_max", (_s("dim_size", 4),), "output size along `dim`",
                  "torch_scatter/scatter.py `index.max() + 1`", unless=_s("out", 3), package="torch_scatter"),
    SizeInference("scatter_min", (_s("dim_size", 4),), "output size along `dim`",
                  "torch_scatter/scatter.py `index.max() + 1`", unless=_s("out", 3), package="torch_scatter"),
)

_BY_NAME: dict[tuple[str, str], SizeInference] = {(e.package, e.name): e for e in TABLE}

# PyG's BasicGNN models hand `batch` and `batch_size` on to their norm layers
# (`models/basic_gnn.py:262` `x = norm(x, batch, batch_size)`, inside the
# `for i, (conv, norm) in enumerate(zip(self.convs, self.norms))` loop). A
# graph-level norm then infers the number of graphs inside that loop, and
# dynamo cannot resume there: the model's whole forward
# (`basic_gnn.py:178`) is skipped and runs eagerly (E11e: `GraphSAGE(...,
# norm="graph_norm")` / `norm="layer_norm"` called with `batch` and no
# `batch_size`; with `batch_size` or `fullgraph=True`: 0 breaks, 1 graph).
BASIC_GNN_MODELS = ("GCN", "GraphSAGE", "GIN", "GAT", "PNA", "EdgeCNN")
# the model's forward: (keyword, position among the call's arguments)
BASIC_GNN_BATCH = SizeArg("batch", 4)
BASIC_GNN_BATCH_SIZE = SizeArg("batch_size", 5)
# the constructor's `norm` option (a string PyG's `normalization_resolver`
# resolves) and its `norm_kwargs`
BASIC_GNN_NORM = SizeArg("norm", 8)
BASIC_GNN_NORM_KWARGS = SizeArg("norm_kwargs", 9)
# the norms of TABLE whose forward takes `batch` (BasicGNN passes it then)
BASIC_GNN_GRAPH_NORMS = ("GraphNorm", "InstanceNorm", "PairNorm", "MeanSubtractionNorm", "LayerNorm")


def basic_gnn_norm(model: str, norm: str) -> Optional[str]:
    """The graph-level norm class a ``BasicGNN`` model (resolved dotted name)
    builds for ``norm=<string>``, resolved as PyG does (case, ``_``, ``-`` and
    spaces ignored, the ``Norm`` suffix optional): ``"graph_norm"`` ->
    ``GraphNorm``; None for other models and norms (``batch_norm``...)."""
    parts = model.split(".")
    if parts[0] != "torch_geometric" or parts[-1] not in BASIC_GNN_MODELS:
        return None
    query = norm.lower().replace("-", "").replace("_", "").replace(" ", "")
    for name in BASIC_GNN_GRAPH_NORMS:
        full = name.lower()
        if query in (full, full[:-len("norm")]):
            return name
    return None


def lookup(dotted: str, module: bool = False) -> Optional[SizeInference]:
    """The entry for a resolved dotted name (``torch_geometric.nn.global_mean_pool``,
    ``torch_geometric.utils._scatter.scatter``, ``torch_scatter.scatter_add``)."""
    if not dotted:
        return None
    parts = dotted.split(".")
    package, name = parts[0], parts[-1]
    entry = _BY_NAME.get((package, name))
    if entry is None or entry.module != module:
        return None
    if package == "torch_geometric" and not entry.module and len(parts) < 3:
        return None  # torch_geometric.<name> is not one of these functions
    return entry
