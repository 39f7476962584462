from __future__ import annotations

from typing import Optional

import libcst as cst

from gnnlint import pyg_sizes
from gnnlint.context import arg_of, has_star_args, passed
from gnnlint.rules.base import Invalid, Rule, Valid


class PygSizeInference(Rule):
    """
    ## What it does
    Flags calls of PyG functions that compute a size from the data when it is
    not passed — `global_{add,mean,max}_pool(x, batch)` without `size`,
    `scatter` without `dim_size`, `softmax(src, index)` without `num_nodes`,
    `to_dense_batch` without `batch_size`/`max_num_nodes`, `to_dense_adj`,
    `degree`, `add_self_loops`, `one_hot`, `subgraph`-style helpers without
    `num_nodes`, aggregation modules (`SumAggregation()(x, index)`,
    `AttentionalAggregation`, ...) without `dim_size`, the norms `GraphNorm`
    / `InstanceNorm` / `LayerNorm` / `PairNorm` called with `batch` but no
    `batch_size` and `MeanSubtractionNorm` without `dim_size`, and the
    `torch_scatter` functions without `dim_size` — inside a compiled region.
    The full list, with the line of PyG's source that infers each size, is
    `gnnlint/pyg_sizes.py`. Utilities that break even with a size
    (`add_remaining_self_loops`, `coalesce`, `to_undirected`, `dropout_node`,
    `negative_sampling`) are GNN014's.

    ## Why is this bad?
    When the size is `None`, PyG computes it as `int(index.max()) + 1` (or
    `maybe_num_nodes`, which does the same): a device-to-host copy. Under
    `torch.compile` this is a **graph break** ("Unsupported Tensor.item()
    call") on every call, and on a GPU a sync that stalls the pipeline. PyG's
    compile guide names the pooling case first. Measured on torch 2.13 + PyG
    2.8.1 (`shared/evidence/torch-2.13-pyg-2.8.1/e06c_pool_norm.py`,
    `e06d_utils.py`, `bench/evidence/e15_layers_more.py`): 1–2 breaks per
    call for each norm, aggregation and utility (`PairNorm` also 2
    recompiles); inside `BasicGNN(norm="graph_norm")` the break skips the
    whole model forward; with the size argument 0. The size is almost always
    known where the call is made: `batch_size` / `num_graphs` from the loader,
    `x.size(0)` for the number of nodes.

    Calls in eager code are not flagged (the sync is cheap once per call
    there), nor calls whose size argument is passed (even as a variable), nor
    `softmax(src, ptr=ptr)` / aggregations called with `ptr`, whose size is
    `ptr.numel() - 1`. `**kwargs` hide the arguments: such calls are not
    flagged.

    ## Example
    ```python
    class Net(torch.nn.Module):
        def forward(self, x, edge_index, batch):
            x = self.conv(x, edge_index).relu()
            return global_mean_pool(x, batch)

    model = torch.compile(Net())
    ```

    ## Use instead
    ```python
    class Net(torch.nn.Module):
        def forward(self, x, edge_index, batch, num_graphs: int):
            x = self.conv(x, edge_index).relu()
            return global_mean_pool(x, batch, size=num_graphs)

    model = torch.compile(Net())
    out = model(data.x, data.edge_index, data.batch, data.num_graphs)
    ```

    ## Fix safety
    No automatic fix: the right size (number of graphs, of nodes, of classes)
    has to come from the caller.

    ## References
    - [PyG: compiled GNNs — pooling without `size` performs a device synchronization](https://pytorch-geometric.readthedocs.io/en/latest/advanced/compile.html)
    - PyG source (2.8.1): `torch_geometric/utils/_scatter.py` (`dim_size = int(index.max()) + 1`),
      `torch_geometric/utils/num_nodes.py` (`maybe_num_nodes`)
    """

    code = "GNN009"
    name = "pyg-size-inference"
    summary = "PyG call that infers a size from data (`global_*_pool` without `size`…) in a compiled region"
    region = "compiled"
    triggers = tuple(sorted({e.name.encode() for e in pyg_sizes.TABLE}))

    VALID = (
        Valid("""
import torch
from torch_geometric.nn import global_mean_pool
class Net(torch.nn.Module):
    def forward(self, x, batch, num_graphs: int):
        return global_mean_pool(x, batch, size=num_graphs)
model = torch.compile(Net())
"""),
        Valid("""
import torch
from torch_geometric.utils import degree, softmax
deg = degree(edge_index[0])  # eager preprocessing
class Net(torch.nn.Module):
    def forward(self, x, index, ptr):
        return softmax(x, ptr=ptr) + global_add_pool(x, None)
model = torch.compile(Net())
"""),
    )
    INVALID = (
        # the compiled model comes from a local factory function
        Invalid("""
import torch
from torch_geometric.utils import degree
class DegreeAugmented(torch.nn.Module):
    def forward(self, x, edge_index):
        deg = degree(edge_index[0], dtype=x.dtype)
        return torch.cat([x, deg.unsqueeze(-1)], dim=-1)
def build():
    return DegreeAugmented()
model = build()
compiled = torch.compile(model, dynamic=True)
""", lines=(6,)),
        # knn_graph over a batch of point clouds without batch_size
        Invalid("""
import torch
from torch_geometric.nn import knn_graph
class PointNet(torch.nn.Module):
    def forward(self, pos, batch):
        edge_index = knn_graph(pos, k=16, batch=batch, loop=True)
        return edge_index
model = torch.compile(PointNet())
""", lines=(6,)),
        Invalid("""
import torch
from torch_geometric.nn import global_mean_pool
from torch_geometric.utils import scatter, softmax, to_dense_batch
class Net(torch.nn.Module):
    def forward(self, x, batch):
        a = global_mean_pool(x, batch)
        b = scatter(x, batch, dim=0, reduce="sum")
        c = softmax(x, batch)
        d, mask = to_dense_batch(x, batch, batch_size=a.size(0))
        return a + b + c
model = torch.compile(Net())
""", lines=(7, 8, 9, 10)),
        Invalid("""
import torch
import torch_geometric.nn as gnn
class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.node_norm = gnn.LayerNorm(16, mode="node")
        self.graph_norm = gnn.LayerNorm(16)
        self.pair = gnn.PairNorm()
    def forward(self, x, batch):
        x = self.node_norm(x, batch)
        x = self.graph_norm(x, batch)
        return self.pair(x, batch)
model = torch.compile(Net())
""", lines=(12, 13)),
        Invalid("""
import torch
import torch_geometric.nn as gnn
from torch_geometric.nn.aggr import SumAggregation
class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = SumAggregation()
        self.norm = gnn.GraphNorm(16)
    def forward(self, x, batch):
        x = self.norm(x, batch)
        return self.pool(x, batch)
model = torch.compile(Net())
""", lines=(11, 12)),
    )

    def visit_Call(self, node: cst.Call) -> None:
        ctx = self.context
        entry = self._entry(node)
        if entry is None:
            return
        if has_star_args(node):
            return
        if entry.needs is not None and not passed(node, entry.needs.keyword, entry.needs.position):
            return
        if entry.unless is not None and passed(node, entry.unless.keyword, entry.unless.position):
            return
        if entry.exempt is not None and self._built_with(node, entry.exempt):
            return
        missing = [s.keyword for s in entry.sizes if not passed(node, s.keyword, s.position)]
        if not missing:
            return
        region = ctx.compiled_region(node)
        if region is None:
            return
        callee = ctx.module.code_for_node(node.func)
        names = " / ".join(f"`{m}=`" for m in missing)
        self.report(node, f"`{callee}(...)` without {names} syncs the device and breaks the graph in the "
                          f"{region}. It computes the {entry.what} from the data (`int(index.max()) + 1`); "
                          f"pass the size you already know.")

    def _built_with(self, node: cst.Call, option: tuple[str, int, str]) -> bool:
        """``self.norm(...)`` where every ``self.norm = ...`` in the class passes the option."""
        ctx = self.context
        func = node.func
        if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self"):
            return False
        cls = ctx.enclosing_class(node)
        values = cls.attrs.get(func.attr.value, []) if cls is not None else []
        keyword, position, literal = option
        built = [v for v in values if isinstance(v, cst.Call)]
        return bool(built) and len(built) == len(values) and all(
            (arg := arg_of(v, keyword, position)) is not None
            and isinstance(arg.value, cst.SimpleString) and arg.value.evaluated_value == literal for v in built)

    def _entry(self, node: cst.Call) -> Optional[pyg_sizes.SizeInference]:
        ctx = self.context
        func = node.func
        resolved = ctx.resolve(func) or ""
        entry = pyg_sizes.lookup(resolved)
        if entry is not None:
            return entry
        if isinstance(func, (cst.Name, cst.Attribute)):
            cls = ctx.class_name(func, node)
            if cls and "." not in cls:
                cls = ctx.resolve_dotted(cls)
            if cls:
                return pyg_sizes.lookup(cls, module=True)
        return None
