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
    recompiles); with the size argument 0.

    PyG's `BasicGNN` models (`GCN`, `GraphSAGE`, `GIN`, `GAT`, `PNA`,
    `EdgeCNN`) built with a graph-level norm (`norm="graph_norm"`,
    `"layer_norm"`, `"instance_norm"`, `"pair_norm"`,
    `"mean_subtraction_norm"`) pass the call's `batch` and `batch_size` on to
    every norm, inside their layer loop. Called with `batch` but without
    `batch_size=` — in compiled code, or on the compiled model — the norm
    infers the size there, dynamo cannot resume inside the loop, and **the
    model's whole forward (`basic_gnn.py:178`) runs eagerly** (E11e,
    `GraphSAGE(norm="graph_norm")` / `"layer_norm"`; `gnnlint verify`: 0 of 3
    calls ran compiled). The finding is at that call, with error severity;
    `batch_size=` or `fullgraph=True` give 1 graph and 0 breaks (E11e, E12
    with inductor). The size is almost always
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
    triggers = tuple(sorted({e.name.encode() for e in pyg_sizes.TABLE}
                            | {name.encode() for name in pyg_sizes.BASIC_GNN_MODELS}))

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
        # batch_size passed, a node-level or batch norm, the eager model, fullgraph=True
        Valid("""
import torch
from torch_geometric.nn.models import GCN, GIN, GraphSAGE
class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.gnn = GIN(16, 32, 3, norm="graph_norm")
        self.bn = GIN(16, 32, 3, norm="batch_norm")
        self.node = GCN(16, 32, 2, norm="layer_norm", norm_kwargs={"mode": "node"})
    def forward(self, x, edge_index, batch, num_graphs: int):
        h = self.gnn(x, edge_index, batch=batch, batch_size=num_graphs)
        return h + self.bn(x, edge_index, batch=batch) + self.node(x, edge_index, batch=batch)
net = torch.compile(Net())
eager = GraphSAGE(16, 32, 2, norm="graph_norm")
compiled = torch.compile(eager, fullgraph=True)
for data in loader:
    out = eager(data.x, data.edge_index, batch=data.batch)
    out = compiled(data.x, data.edge_index, batch=data.batch)
"""),
        # models chosen at run time: a class that no choice reaches stays eager
        Valid("""
import torch
from torch_geometric.nn import global_mean_pool
class GCN(torch.nn.Module):
    def forward(self, x, batch):
        return global_mean_pool(x, batch, size=1)
class Baseline(torch.nn.Module):
    def forward(self, x, batch):
        return global_mean_pool(x, batch)
MODELS = {"gcn": GCN}
def main(args):
    model = torch.compile(MODELS[args.model]())
    baseline = Baseline()
"""),
    )
    INVALID = (
        # the readout a factory picks by name: `self.readout` holds a PyG pool
        Invalid("""
import torch
from torch_geometric.nn import global_max_pool, global_mean_pool
def get_aggregation(name):
    if name == "max":
        return global_max_pool
    return global_mean_pool
class Net(torch.nn.Module):
    def __init__(self, readout):
        super().__init__()
        self.readout = get_aggregation(readout)
    def forward(self, x, batch):
        return self.readout(x, batch)
model = torch.compile(Net("max"))
""", lines=(13,)),
        # the model runs inside a compiled train step: step = torch.compile(fn)
        # and @functools.partial(torch.compile, ...) bodies are compiled regions,
        # and so is the forward of the model their callers pass in
        Invalid("""
import functools
import torch
from torch_geometric.nn import global_add_pool, global_mean_pool
class GIN(torch.nn.Module):
    def forward(self, x, edge_index, batch):
        return global_mean_pool(x, batch)
def train_step(model, data):
    return model(data.x, data.edge_index, data.batch).sum()
@functools.partial(torch.compile, dynamic=True)
def readout(h, batch):
    return global_add_pool(h, batch)
step = torch.compile(train_step, dynamic=True)
for data in loader:
    step(GIN(), data).backward()
""", lines=(7, 12)),
        # models chosen at run time: a dict of classes indexed by a name
        Invalid("""
import torch
from torch_geometric.nn import global_mean_pool, global_add_pool
class GCN(torch.nn.Module):
    def forward(self, x, batch):
        return global_mean_pool(x, batch)
class GIN(torch.nn.Module):
    def forward(self, x, batch):
        return global_add_pool(x, batch)
MODELS = {"gcn": GCN, "gin": GIN}
def main(args):
    Model = MODELS[args.model]
    model = torch.compile(Model())
""", lines=(6, 9)),
        # both branches of an if, and a conditional expression
        Invalid("""
import torch
from torch_geometric.nn import global_mean_pool
class A(torch.nn.Module):
    def forward(self, x, batch):
        return global_mean_pool(x, batch)
class B(torch.nn.Module):
    def forward(self, x, batch):
        return global_mean_pool(x, batch)
class C(torch.nn.Module):
    def forward(self, x, batch):
        return global_mean_pool(x, batch)
def main(args):
    if args.model == "a":
        model = A()
    else:
        model = B() if args.b else C()
    model = torch.compile(model)
""", lines=(6, 9, 12)),
        # getattr over this module's classes, a factory with one return per model
        Invalid("""
import sys
import torch
from torch_geometric.nn import global_mean_pool
class A(torch.nn.Module):
    def forward(self, x, batch):
        return global_mean_pool(x, batch)
class B(torch.nn.Module):
    def forward(self, x, batch):
        return global_mean_pool(x, batch)
def build(name):
    if name == "a":
        return A()
    return B()
def main(name):
    first = torch.compile(getattr(sys.modules[__name__], name)())
    second = torch.compile(build(name))
""", lines=(7, 10)),
        # a submodule chosen by a config: every class the dict may give
        Invalid("""
import torch
from torch_geometric.nn import global_mean_pool
class AtomEncoder(torch.nn.Module):
    def forward(self, x, batch):
        return global_mean_pool(x, batch)
ENCODERS = {"atom": AtomEncoder}
class Net(torch.nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.enc = ENCODERS[cfg.encoder]()
    def forward(self, x, batch):
        return self.enc(x, batch)
model = torch.compile(Net(cfg))
""", lines=(6,)),
        # a function that compiles its parameter: the classes its callers pass
        Invalid("""
import torch
from torch_geometric.nn import global_mean_pool
class PointNet(torch.nn.Module):
    def forward(self, x, batch):
        return global_mean_pool(x, batch)
def run(model, use_compile):
    if use_compile:
        model = torch.compile(model)
    return model
run(PointNet(), True)
""", lines=(6,)),
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
        # PyG's BasicGNN with a graph-level norm, called with batch but no batch_size
        Invalid("""
import torch
from torch_geometric.nn.models import GIN, GraphSAGE
class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.gnn = GIN(16, 32, 3, norm="graph_norm")
    def forward(self, x, edge_index, batch):
        return self.gnn(x, edge_index, batch=batch)
net = torch.compile(Net())
model = torch.compile(GraphSAGE(16, 32, 2, norm="layer_norm"))
for data in loader:
    out = model(data.x, data.edge_index, None, None, data.batch)
""", lines=(9, 13)),
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
        # every aggregation module runs Aggregation.__call__, which counts the groups (lesion-gnn's DRGNet)
        Invalid("""
import torch
from torch_geometric.nn.aggr import SortAggregation
class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.sort_pool = SortAggregation(30)
    def forward(self, x, batch, num_graphs):
        known = self.sort_pool(x, batch, dim_size=num_graphs)
        return self.sort_pool(x, batch) + known
model = torch.compile(Net())
""", lines=(10,)),
        # index2ptr(batch) counts the examples from the data (DynamicEdgeConv, XConv); with size it does not
        Invalid("""
import torch
from torch_geometric.index import index2ptr
class Knn(torch.nn.Module):
    def forward(self, x, batch, num_graphs):
        ptr = index2ptr(batch)
        known = index2ptr(batch, num_graphs)
        return ptr, known
model = torch.compile(Knn())
""", lines=(6,)),
    )

    def visit_Call(self, node: cst.Call) -> None:
        ctx = self.context
        self._held = ""
        entry = self._entry(node)
        if entry is None:
            self._basic_gnn_norm(node)
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
        shown = f"`{callee}(...)`" + (f" ({self._held})" if self._held else "")  # what `self.readout` holds
        self.report(node, f"{shown} without {names} syncs the device and breaks the graph in the "
                          f"{region}. It computes the {entry.what} from the data (`int(index.max()) + 1`); "
                          f"pass the size you already know.")

    # ------------------------------------------------------------ BasicGNN(norm=...)
    def _basic_gnn_norm(self, node: cst.Call) -> None:
        """``model(x, edge_index, batch=batch)`` of a PyG ``BasicGNN`` built
        with a graph-level norm, without ``batch_size=``, where the call runs
        the model compiled: in compiled code, or on the compiled object."""
        ctx = self.context
        if has_star_args(node) or not passed(node, pyg_sizes.BASIC_GNN_BATCH.keyword, pyg_sizes.BASIC_GNN_BATCH.position) \
                or passed(node, pyg_sizes.BASIC_GNN_BATCH_SIZE.keyword, pyg_sizes.BASIC_GNN_BATCH_SIZE.position):
            return
        found = self._basic_gnn_ctor(node)
        if found is None:
            return
        ctor, norm, fullgraph = found
        if fullgraph:
            return  # fullgraph=True captures the `.item()` (E11e, E12: 1 graph)
        model = ctx.last_part(ctor.func)
        callee = ctx.module.code_for_node(node.func)
        option = ctx.module.code_for_node(arg_of(ctor, pyg_sizes.BASIC_GNN_NORM.keyword,
                                                 pyg_sizes.BASIC_GNN_NORM.position).value)
        self.report(node, f"`{callee}(...)` passes `batch` without `batch_size=`: the `{norm}` layers of "
                          f"`{model}(norm={option})` then count the graphs from the data (`int(batch.max()) + 1`) "
                          f"inside the model's layer loop, where dynamo cannot resume after the break, so the "
                          f"whole forward of `{model}` runs eagerly; pass `batch_size=` (the number of graphs, "
                          f"e.g. `data.num_graphs`) or compile with `fullgraph=True`", severity="error")

    def _basic_gnn_ctor(self, node: cst.Call) -> Optional[tuple[cst.Call, str, bool]]:
        """(constructor, norm class, compiled with fullgraph=True) of the
        BasicGNN model ``node`` calls compiled, or None."""
        ctx = self.context
        func = node.func
        ctors: list[cst.Call] = []
        fullgraph = False
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self":
            cls = ctx.enclosing_class(node)
            values = cls.attrs.get(func.attr.value, []) if cls is not None else []
            if ctx.compiled_region(node) is None or not values or not all(isinstance(v, cst.Call) for v in values):
                return None
            ctors = list(values)
            fullgraph = ctx.fullgraph_everywhere()
        elif isinstance(func, cst.Name):
            ctor = ctx.constructor_of(func, node)
            if ctor is None:
                return None
            sites = [site for c, site in ctx.compiled_constructors() if c is ctor]
            if not sites and ctx.compiled_region(node) is None:
                return None
            if sites and ctx.compiled_value(func, node) is None and ctx.compiled_region(node) is None:
                return None  # the eager model the compiled one was made from
            ctors = [ctor]
            fullgraph = bool(sites) and all((s := ctx.compile_site(site)) is not None and s.fullgraph
                                            for site in sites)
        norms = {self._graph_norm(ctor) for ctor in ctors}
        if len(norms) != 1 or None in norms:
            return None
        return ctors[0], norms.pop(), fullgraph  # type: ignore[return-value]

    def _graph_norm(self, ctor: cst.Call) -> Optional[str]:
        ctx = self.context
        if has_star_args(ctor):
            return None
        norm = arg_of(ctor, pyg_sizes.BASIC_GNN_NORM.keyword, pyg_sizes.BASIC_GNN_NORM.position)
        if norm is None or not isinstance(norm.value, cst.SimpleString):
            return None
        name = pyg_sizes.basic_gnn_norm(ctx.resolve(ctor.func) or "", str(norm.value.evaluated_value))
        kwargs = arg_of(ctor, pyg_sizes.BASIC_GNN_NORM_KWARGS.keyword, pyg_sizes.BASIC_GNN_NORM_KWARGS.position)
        if name == "LayerNorm" and kwargs is not None:
            return None  # mode="node" normalises per node; any norm_kwargs: cannot tell
        return name

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

    def _narrowed_to_class(self, func: cst.BaseExpression, node: cst.Call) -> bool:
        """``node`` is in the body of ``if isinstance(<func>, ...):`` (also one operand of an ``and``)."""
        ctx = self.context
        text = ctx.module.code_for_node(func)
        child = node
        for anc in ctx.ancestors(node):
            if isinstance(anc, cst.FunctionDef):
                return False
            if isinstance(anc, cst.If) and child is anc.body:
                tests = [anc.test]
                while tests:
                    test = tests.pop()
                    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
                        tests += [test.left, test.right]
                    elif isinstance(test, cst.Call) and ctx.resolve(test.func) in ("isinstance", "builtins.isinstance") \
                            and test.args and ctx.module.code_for_node(test.args[0].value) == text:
                        return True
            child = anc
        return False

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
            entry = pyg_sizes.lookup(cls, module=True) if cls else None
            if entry is not None:
                return entry
        # else the functions it may hold (`self.pool = global_max_pool` or `GlobalAttention(...)` by config),
        # unless an `if isinstance(self.pool, (AttentivePooling, ...)):` around the call says it is a module
        targets = [] if self._narrowed_to_class(func, node) else ctx.callable_targets(func, node)
        for dotted in targets:
            instance = dotted.endswith("()")  # an instance, `POOLS[name]` holding `MeanAggregation()`
            entry = pyg_sizes.lookup(dotted[:-2] if instance else dotted, module=instance)
            if entry is not None:
                self._held = " / ".join(f"`{d.split('.')[-1]}`" for d in sorted(set(targets)))
                return entry
        return self._factory_module_entry(func, node)

    def _factory_module_entry(self, func: cst.BaseExpression, node: cst.Call) -> Optional[pyg_sizes.SizeInference]:
        """``self.norm(f, batch)`` with ``self.norm = build_norm(kind, dim)``, a local factory returning
        ``GraphNorm(dim)`` or ``nn.LayerNorm(dim)``: the PyG module among the classes it may build (a torch
        norm takes no batch vector, so a call passing one runs the PyG one; ``entry.needs`` checks it)."""
        ctx = self.context
        names = ctx.factory_module_classes(func, node) if ctx.compiled_region(node) is not None else []
        entries = [(name, entry) for name in names if (entry := pyg_sizes.lookup(name, module=True)) is not None]
        if not entries:
            return None
        self._held = " / ".join(f"`{name.split('.')[-1]}`" for name, _entry in entries)
        return entries[0][1]
