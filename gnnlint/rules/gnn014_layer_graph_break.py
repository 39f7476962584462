from __future__ import annotations

from typing import Optional

import libcst as cst

from gnnlint import pyg_layers
from gnnlint.context import arg_of, has_star_args
from gnnlint.rules.base import Invalid, Rule, Valid
from gnnlint.versions import measured

_MEASURED = "torch 2.13 + PyG 2.8.1"


class LayerGraphBreak(Rule):
    """
    ## What it does
    Flags PyG layers, models and utilities whose defaults break the
    `torch.compile` graph, when they run in compiled code:

    - **layers built with breaking defaults** in a module whose forward is
      compiled (the finding points at the constructor): `GCNConv`, `APPNP`,
      `GCN2Conv` without `add_self_loops=False` / `normalize=False`;
      `GATConv`, `GATv2Conv`, `PointNetConv`, `SGConv` without
      `add_self_loops=False`; `ChebConv`, `MFConv`, `HGTConv`, `RGCNConv`,
      `TopKPooling`, `SAGPooling`, `EdgePooling`, `Set2Set`,
      `SortAggregation`; `SAGEConv(aggr="lstm")`, `JumpingKnowledge("lstm")`;
    - **PyG's `BasicGNN` models** compiled or used in a compiled module:
      `GCN` / `GAT` without `add_self_loops=False` (or `normalize=False` for
      `GCN`), `GraphSAGE(aggr="lstm")`, any of them with `jk="lstm"`;
    - **utilities called in compiled code**: `dropout_edge` / `dropout_node`
      (unless `training=False`), `remove_self_loops`,
      `add_remaining_self_loops`, `to_undirected`, `coalesce`, `subgraph`,
      `k_hop_subgraph`, `is_undirected`, `contains_self_loops`,
      `negative_sampling`.

    The list, with the line of PyG's source that breaks, the options that
    avoid it and whether `fullgraph=True` works, is `gnnlint/pyg_layers.py`;
    a test checks it against the installed PyG's signatures.

    The finding is an **error** when the break happens inside a Python loop
    of the compiled function — the `for conv in self.convs:` idiom, PyG's
    own `BasicGNN` models (`basic_gnn.py:178`), or a `HeteroConv` (which
    loops over edge types) — and a **warning** otherwise. Nothing is reported
    when every compile site that compiles the class — in this file, or in
    another file of the project (`train.py` compiling `models.Net`) — passes
    `fullgraph=True` and the layer compiles under it (for code whose compile
    site is unknown, such as library mode: when every compile site of the
    file does), or when the file turns on the dynamo switch that
    captures the op (`capture_dynamic_output_shape_ops` for `nonzero`,
    `capture_scalar_outputs` for `.item()`).

    ## Why is this bad?
    Self-loop handling (`add_remaining_self_loops`, `remove_self_loops`),
    degree buckets, data-dependent sorting checks and LSTMs cannot be traced:
    each call ends the graph, runs the op eagerly and starts a new graph
    (measured on torch 2.13.0 + torch_geometric 2.8.1, CPU: `GCNConv` 1 break
    site, `utils/loop.py:650`, "Dynamic shape operator"; 3 sites with an
    edge weight). Worse, **dynamo cannot resume after a break inside a
    loop**: the whole frame is skipped and runs eagerly. With two `GCNConv`
    (or `GATConv`, or `dropout_edge` calls) in a `for` loop,
    **0 of 20 calls ran compiled** (E11h, E15c); the same layers unrolled:
    20 of 20. PyG's `models.GCN` / `models.GAT` run their convs in such a
    loop, so their forward is skipped too (E06c, E11e). Breaks also multiply
    compiles: 8 default `GCNConv` widths plus train/eval toggling hit
    `recompile_limit` (E11a).

    On torch 2.13 `fullgraph=True` turns on `capture_dynamic_output_shape_ops`
    and `capture_scalar_outputs`, and the layers marked so in the table then
    compile as **one graph with outputs equal to eager** (E06f, E15; GCN
    training with inductor too, E12; on NeighborLoader batches a default GCN
    needs 1 recompile instead of 12, E07). `RGCNConv`, `SAGEConv(aggr="lstm")`,
    `Set2Set`, `SortAggregation`, `EdgePooling`, `JumpingKnowledge("lstm")`,
    `to_undirected`, `coalesce`, `is_undirected` and `negative_sampling`
    raise under `fullgraph=True`; for them the message names the option,
    transform or layer that measured 0 breaks.

    Evidence: `shared/evidence/torch-2.13-pyg-2.8.1/` (`e06a_convs.py`,
    `e06c_pool_norm.py`, `e06d_utils.py`, `e06f_fullgraph.py`,
    `e11f_break_in_loop.py`, `e11h_fallback_proof.py`) and
    `bench/evidence/e15_layers_more.py` (APPNP/SGConv/GCN2Conv options,
    `models.GCN`/`GAT` options, utilities under fullgraph, a utility in a
    loop). Only torch 2.13.0 + PyG 2.8.1 were measured; the breaks exist
    wherever these PyG code paths run under dynamo (torch >= 2.0), while
    the `fullgraph=True` capture is measured only on 2.13.

    ## Example
    ```python
    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.convs = torch.nn.ModuleList([GCNConv(16, 16) for _ in range(3)])

        def forward(self, x, edge_index):
            for conv in self.convs:
                x = conv(x, edge_index).relu()
            return x

    model = torch.compile(Net())
    ```

    ## Use instead
    ```python
    model = torch.compile(Net(), fullgraph=True)   # one graph on torch 2.13
    ```
    or precompute the normalisation once:
    ```python
    transform = T.Compose([T.GCNNorm()])           # adds self-loops, edge weights
    self.convs = torch.nn.ModuleList([GCNConv(16, 16, normalize=False) for _ in range(3)])
    ```

    ## Fix safety
    No automatic fix: `add_self_loops=False` changes the model unless the
    data pipeline adds the self-loops, and `fullgraph=True` turns any other
    break in the model into an error.

    ## References
    - [PyG: compiled GNNs](https://pytorch-geometric.readthedocs.io/en/latest/advanced/compile.html)
    - [torch.compile: graph breaks](https://pytorch.org/docs/stable/torch.compiler_troubleshooting.html)
    - Evidence: `shared/evidence/torch-2.13-pyg-2.8.1/report.md` (section B) and
      `bench/evidence/out/e15_layers_more.txt`
    """

    code = "GNN014"
    name = "layer-graph-break"
    summary = "PyG layer, model or utility whose defaults break the compiled graph (the whole forward in a layer loop)"
    region = "compiled"
    severity = "warning"  # one break per call; error when the break skips the whole frame
    torch_versions = ">=2.0"
    pyg_versions = ">=2.3"
    triggers = tuple(sorted({name.encode() for name in pyg_layers.names()}))

    VALID = (
        # cached=True: the normalisation is computed on the first call only; later calls are one graph (E18)
        Valid("""
import torch
from torch_geometric.nn import SGConv
class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = SGConv(16, 7, K=2, cached=True)
    def forward(self, x, edge_index):
        return self.conv(x, edge_index)
model = torch.compile(Net())
"""),
        Valid("""
import torch
from torch_geometric.nn import GCNConv, GATConv
class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.convs = torch.nn.ModuleList([GCNConv(16, 16, normalize=False) for _ in range(3)])
        self.att = GATConv(16, 16, add_self_loops=False)
    def forward(self, x, edge_index, edge_weight):
        for conv in self.convs:
            x = conv(x, edge_index, edge_weight).relu()
        return self.att(x, edge_index)
model = torch.compile(Net())
"""),
        # fullgraph=True captures the nonzero (torch 2.13)
        Valid("""
import torch
from torch_geometric.nn import GCN
model = torch.compile(GCN(16, 32, num_layers=3), fullgraph=True)
"""),
        # eager model, and the utility in eager preprocessing
        Valid("""
import torch
from torch_geometric.nn import GCNConv
from torch_geometric.utils import to_undirected
edge_index = to_undirected(edge_index)
class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = GCNConv(16, 16)
    def forward(self, x, edge_index):
        return self.conv(x, edge_index)
model = Net()
"""),
        Valid("""
import torch
from torch_geometric.utils import dropout_edge
@torch.compile
def step(x, edge_index):
    edge_index, _ = dropout_edge(edge_index, p=0.2, training=False)
    return x
"""),
    )
    INVALID = (
        # the layer loop: the whole forward runs eagerly
        Invalid("""
import torch
from torch_geometric.nn import GCNConv
class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.convs = torch.nn.ModuleList()
        for _ in range(3):
            self.convs.append(GCNConv(16, 16))
    def forward(self, x, edge_index):
        for conv in self.convs:
            x = conv(x, edge_index).relu()
        return x
model = torch.compile(Net())
""", lines=(9,)),
        # unrolled layers, and a utility in forward
        Invalid("""
import torch
import torch_geometric.nn as gnn
from torch_geometric.utils import dropout_edge
class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = gnn.GATConv(16, 8, heads=2)
        self.conv2 = gnn.SAGEConv(16, 16, aggr="lstm")
        self.conv3 = gnn.SAGEConv(16, 16)
    def forward(self, x, edge_index):
        edge_index, _ = dropout_edge(edge_index, p=0.2, training=self.training)
        x = self.conv1(x, edge_index)
        return self.conv3(self.conv2(x, edge_index), edge_index)
model = torch.compile(Net(), dynamic=True)
""", lines=(8, 9, 12)),
        # PyG's BasicGNN compiled directly
        Invalid("""
import torch
from torch_geometric.nn.models import GCN, GAT
model = GCN(16, 32, num_layers=3).to("cpu")
model = torch.compile(model)
other = torch.compile(GAT(16, 32, 2, add_self_loops=False, jk="lstm"))
""", lines=(4, 6)),
        # a HeteroConv loops over edge types
        Invalid("""
import torch
from torch_geometric.nn import HeteroConv, GCNConv, SAGEConv
class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = HeteroConv({
            ("paper", "cites", "paper"): GCNConv(-1, 16),
            ("author", "writes", "paper"): SAGEConv((-1, -1), 16),
        })
    def forward(self, x_dict, edge_index_dict):
        return self.conv(x_dict, edge_index_dict)
model = torch.compile(Net())
""", lines=(8,)),
        # fullgraph=True is the compile site's own: Deep's loop is captured, Plain's is not
        Invalid("""
import torch
from torch_geometric.nn import GCNConv
class Deep(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.convs = torch.nn.ModuleList([GCNConv(16, 16) for _ in range(3)])
    def forward(self, x, edge_index):
        for conv in self.convs:
            x = conv(x, edge_index)
        return x
class Plain(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.convs = torch.nn.ModuleList([GCNConv(16, 16) for _ in range(3)])
    def forward(self, x, edge_index):
        for conv in self.convs:
            x = conv(x, edge_index)
        return x
deep = torch.compile(Deep(), fullgraph=True)
plain = torch.compile(Plain())
""", lines=(15,)),
        # a helper loop over edge dropouts in a compiled function
        Invalid("""
import torch
from torch_geometric.utils import subgraph
@torch.compile
def sample(x, edge_index, subsets):
    out = []
    for subset in subsets:
        out.append(subgraph(subset, edge_index, num_nodes=x.size(0))[0])
    return out
""", lines=(8,)),
    )

    def visit_Call(self, node: cst.Call) -> None:
        ctx = self.context
        resolved = ctx.resolve(node.func) or ""
        if not resolved.startswith("torch_geometric."):
            return
        functions = pyg_layers.lookup(resolved, ("function",))
        if functions:
            self._utility(node, functions)
            return
        entries = pyg_layers.lookup(resolved, ("layer", "model"))
        if entries:
            self._constructor(node, entries)

    # ------------------------------------------------------------------ utilities
    def _utility(self, node: cst.Call, entries) -> None:
        ctx = self.context
        region = ctx.compiled_region(node)
        if region is None:
            return
        entry = self._breaking(node, entries, self._fullgraph(ctx.enclosing_class(node)))
        if entry is None:
            return
        callee = ctx.module.code_for_node(node.func)
        loop = ctx.loop_around(node)
        if loop is not None:
            func = ctx.enclosing_function(node)
            name = func.qualname if func else "the function"
            self.report(node, f"`{callee}(...)` breaks the graph inside `{_loop_header(ctx, loop)}`, so all of "
                              f"`{name}` runs eagerly. {self._evidence(entry, _IN_LOOP)}{self._fix(entry)}",
                        severity="error")
        else:
            self.report(node, f"`{callee}(...)` breaks the graph on every call in the {region}. "
                              f"{self._evidence(entry)}{self._fix(entry)}")

    # ------------------------------------------------------------------ layers
    def _constructor(self, node: cst.Call, entries) -> None:
        ctx = self.context
        callee = ctx.module.code_for_node(node.func)
        stored = ctx.stored_attr(node)
        if stored is not None:
            cls, attr = stored
            if cls.name not in ctx.compiled_classes:
                return
            uses = ctx.attr_uses(cls, attr)
            if not uses:
                return
            entry = self._breaking(node, entries, self._fullgraph(cls))
            if entry is None:
                return
            looped = [u for u in uses if u.loop is not None]
            hetero = _inside(ctx, node, "HeteroConv")
            where = f"the compiled forward of `{cls.name}`"
            if entry.kind == "model" and entry.in_loop:
                self._report_model(node, callee, entry, f"`self.{attr}` in {where}")
            elif looped:
                use = looped[0]
                self.report(node, f"`{callee}(...)` {_default(entry)} breaks the graph inside "
                                  f"`{_loop_header(ctx, use.loop)}`, so all of `{use.func.qualname}` runs eagerly. "
                                  f"{self._evidence(entry, _IN_LOOP)}{self._fix(entry)}", severity="error")
            elif hetero is not None:
                self.report(node, f"`{callee}(...)` {_default(entry)} breaks the graph inside `HeteroConv`, so "
                                  f"its whole forward runs eagerly. {self._evidence(entry, _HETERO)}"
                                  f"{self._fix(entry)}", severity="error")
            else:
                self.report(node, f"`{callee}(...)` {_default(entry)} breaks the graph on every call of "
                                  f"`self.{attr}` in {where}. {self._evidence(entry)}{self._fix(entry)}")
            return
        for ctor, site_node in ctx.compiled_constructors():
            if ctor is not node:
                continue
            site = ctx.compile_site(site_node)
            entry = self._breaking(node, entries, bool(site and site.fullgraph))
            if entry is None:
                return
            if entry.kind == "model" and entry.in_loop:
                self._report_model(node, callee, entry, "the compiled model")
            else:
                self.report(node, f"`{callee}(...)` {_default(entry)} breaks the graph on every call of the "
                                  f"compiled layer. {self._evidence(entry)}{self._fix(entry)}")
            return

    def _fullgraph(self, cls) -> bool:
        """Whether the compile sites that compile ``cls`` (in this file or,
        through the project index, in another) all pass ``fullgraph=True``;
        when none is known, whether every compile site of this file does."""
        ctx = self.context
        known = ctx.class_fullgraph(cls) if cls is not None else None
        return ctx.fullgraph_everywhere() if known is None else known

    def _report_model(self, node: cst.Call, callee: str, entry, where: str) -> None:
        self.report(node, f"`{callee}(...)` {_default(entry)} breaks the graph inside its own layer loop, so the "
                          f"whole forward of `{entry.name}` ({where}) runs eagerly. "
                          f"{self._evidence(entry)}{self._fix(entry)}", severity="error")

    # ------------------------------------------------------------------ message parts
    def _measured(self) -> bool:
        """The target is the measured torch + PyG (or unknown): the message may
        cite the measurements, PyG 2.8.1's source lines and `fullgraph=True`."""
        return measured(self.context.options.torch_version, self.context.options.pyg_version)

    def _evidence(self, entry, why: str = "") -> str:
        """Why the break costs what the first sentence says, and where PyG breaks
        (measured on torch 2.13 + PyG 2.8.1: cited only for that target)."""
        if not self._measured():
            return f"{why}. " if why else ""
        numbers = "measured: 0 of 20 calls compiled" if why == _IN_LOOP else "measured"
        where = f"PyG breaks at {entry.where} ({numbers}, {_MEASURED})"
        return f"{why}; {where}. " if why else f"{where}. "

    def _fix(self, entry) -> str:
        text = entry.fix[:1].upper() + entry.fix[1:]
        if entry.fullgraph and self._measured():
            return f"Compile with `fullgraph=True` (one graph on torch 2.13, same outputs), or {entry.fix}."
        return f"{text}."

    def _breaking(self, node: cst.Call, entries, fullgraph: bool) -> Optional[pyg_layers.LayerBreak]:
        """The first entry whose break this call keeps, or None."""
        if has_star_args(node):
            return None  # options hidden in **kwargs: cannot tell
        captured = self.context.captured_reasons()
        for entry in entries:
            if entry.when is not None and not _has_literal(node, entry.when):
                continue
            if any(_has_literal(node, option) for option in entry.avoid):
                continue
            if entry.once is not None and _has_literal(node, entry.once):
                continue  # cached=True: only the first call breaks (E18)
            if any(_unknown(node, option) for option in entry.avoid):
                continue  # e.g. add_self_loops=args.self_loops: cannot tell
            if fullgraph and entry.fullgraph:
                continue
            if entry.reasons <= captured:
                continue
            return entry
        return None


def _arg(node: cst.Call, option: pyg_layers.Option) -> Optional[cst.Arg]:
    if option.position < 0:
        return next((a for a in node.args if a.keyword is not None and a.keyword.value == option.keyword), None)
    return arg_of(node, option.keyword, option.position)


def _literal(expr: cst.BaseExpression) -> object:
    if isinstance(expr, cst.Name) and expr.value in ("True", "False", "None"):
        return {"True": True, "False": False, "None": None}[expr.value]
    if isinstance(expr, cst.SimpleString):
        return expr.evaluated_value
    return _UNKNOWN


_UNKNOWN = object()


def _has_literal(node: cst.Call, option: pyg_layers.Option) -> bool:
    arg = _arg(node, option)
    return arg is not None and _literal(arg.value) == option.value


def _unknown(node: cst.Call, option: pyg_layers.Option) -> bool:
    """The option is passed, but not as a literal (``training=self.training`` is
    known to break: it is True while training)."""
    arg = _arg(node, option)
    if arg is None or _literal(arg.value) is not _UNKNOWN:
        return False
    text = arg.value
    if option.keyword == "training" and isinstance(text, cst.Attribute) and text.attr.value == "training":
        return False
    return True


def _default(entry) -> str:
    if entry.when is not None:
        return f"with `{entry.when.keyword}={entry.when.value!r}`".replace("'", '"')
    if entry.avoid:
        return "without " + " or ".join(f"`{o.keyword}=False`" for o in entry.avoid)
    return "with any options"


_IN_LOOP = "Dynamo cannot resume a break inside a loop"
_HETERO = "Its forward loops over the edge types, and dynamo cannot resume a break inside a loop"


def _loop_header(ctx, loop: cst.CSTNode) -> str:
    if isinstance(loop, cst.For):
        return f"for {ctx.module.code_for_node(loop.target)} in {ctx.module.code_for_node(loop.iter)}"
    return f"while {ctx.module.code_for_node(loop.test)}"  # type: ignore[attr-defined]


def _inside(ctx, node: cst.CSTNode, container: str) -> Optional[cst.Call]:
    for anc in ctx.ancestors(node):
        if isinstance(anc, (cst.SimpleStatementLine, cst.FunctionDef)):
            return None
        if isinstance(anc, cst.Call) and ctx.last_part(anc.func) == container:
            return anc
    return None
