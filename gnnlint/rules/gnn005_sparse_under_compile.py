from __future__ import annotations

from typing import Optional

import libcst as cst

from gnnlint.context import SCALAR
from gnnlint.rules.base import Invalid, Rule, Valid

# Constructors of a sparse adjacency (resolved names).
_SPARSE_TENSOR_CLASSES = ("torch_sparse.SparseTensor", "torch_sparse.tensor.SparseTensor",
                          "torch_geometric.typing.SparseTensor")
# (``SparseTensor.from_torch_sparse_*_tensor`` converts a value that is already
# sparse: the adjacency was created elsewhere.)
_SPARSE_CLASSMETHODS = ("from_edge_index", "from_dense", "from_scipy", "eye")
_DENSE_RESULTS = ("to_dense", "values", "indices", "crow_indices", "col_indices", "ccol_indices",
                  "row_indices", "sum", "size", "nnz", "numel", "dim", "storage", "coo", "csr", "csc",
                  "to_torch_sparse_coo_tensor", "to_torch_sparse_csr_tensor", "to_torch_sparse_csc_tensor")
_TORCH_SPARSE_FUNCS = ("torch.sparse_coo_tensor", "torch.sparse_csr_tensor", "torch.sparse_csc_tensor",
                       "torch.sparse_bsr_tensor", "torch.sparse_bsc_tensor", "torch.sparse_compressed_tensor")
# Libraries re-export torch's constructors under the same names (torchdrug's
# ``utils.sparse_coo_tensor``); the legacy ``torch.sparse.FloatTensor(i, v, size)``.
_SPARSE_CTOR_NAMES = frozenset(f.rpartition(".")[2] for f in _TORCH_SPARSE_FUNCS)
_LEGACY_SPARSE = ("torch.sparse.FloatTensor", "torch.sparse.DoubleTensor", "torch.sparse.LongTensor",
                  "torch.cuda.sparse.FloatTensor", "torch.cuda.sparse.DoubleTensor")
_PYG_SPARSE_FUNCS = ("to_torch_csr_tensor", "to_torch_coo_tensor", "to_torch_csc_tensor",
                     "to_torch_sparse_tensor")
_TO_SPARSE_METHODS = ("to_sparse", "to_sparse_csr", "to_sparse_coo", "to_sparse_csc", "to_sparse_bsr",
                      "to_sparse_bsc")
_TRANSFORM = "ToSparseTensor"
_ADJ_ATTRS = ("adj_t", "adj_t_dict")


class SparseUnderCompile(Rule):
    """
    ## What it does
    Flags a sparse adjacency — `torch_sparse.SparseTensor(...)` /
    `torch_geometric.typing.SparseTensor(...)`, `T.ToSparseTensor()`,
    `to_torch_csr_tensor` / `to_torch_coo_tensor` / `to_torch_csc_tensor`,
    `torch.sparse_csr_tensor` / `torch.sparse_coo_tensor`, `.to_sparse*()` —
    that reaches a compiled model: the value (possibly returned by a helper
    function, moved with `.to(device)` or transposed with `.t()`) is passed
    to a call of a `torch.compile`d model or function, or it is built inside
    the compiled region itself (there every op making a sparse tensor is
    reported, a `.to_sparse_csr()` conversion too; outside it a conversion of
    an adjacency built above is the same adjacency). Library re-exports of
    torch's constructors (`utils.sparse_coo_tensor`) and the legacy
    `torch.sparse.FloatTensor(...)` count. `T.ToSparseTensor()` counts when a
    compiled model is called with an `adj_t` attribute in the same file, or
    when another file feeds a compiled model the `adj_t` of what a function
    here returns (`data, n = get_dataset(...)`, then `NeighborLoader(data, ...)`
    and `batch.adj_t`): the finding is where the adjacency is made, in the
    function that builds the transform or one it calls, never at the feed.

    ## Why is this bad?
    TorchDynamo cannot trace sparse tensors: every compiled call that receives
    one stops with `Attempted to wrap sparse Tensor` (confirmed on torch 2.13),
    so the model falls back to eager for that frame — a graph break on every
    call, or an error with `fullgraph=True`. PyG's own compiled layers are
    tested with `edge_index` / `EdgeIndex` inputs only; a compiled `GCNConv`
    fed a CSR adjacency crashes.

    What it deliberately does not catch: a sparse adjacency in a program that
    never compiles (sparse matmuls are fine in eager mode), a sparse tensor
    handed to the compiled model through a container or a dictionary, an
    `adj_t` whose maker cannot be followed back to a project function (no
    finding at the feed), and layers that merely *accept* a `SparseTensor` argument --
    including code under `if is_torch_sparse_tensor(edge_index):` /
    `if isinstance(adj_t, SparseTensor):` (a parameter) that re-wraps the
    caller's own sparse input (`set_sparse_value(edge_index, value)`,
    `SparseTensor.from_edge_index(adj_t.coo()...)`, `edge_index.to_sparse_csr()`):
    that branch runs only when the caller already passes a sparse adjacency,
    which is reported where the caller builds it.

    ## Example
    ```python
    dataset = Planetoid(root, "Cora", transform=T.ToSparseTensor())
    data = dataset[0]
    model = torch.compile(GCN(dataset.num_features, 16, dataset.num_classes))
    out = model(data.x, data.adj_t)
    ```

    ## Use instead
    ```python
    dataset = Planetoid(root, "Cora")
    data = dataset[0]
    model = torch.compile(GCN(dataset.num_features, 16, dataset.num_classes))
    out = model(data.x, data.edge_index)  # or an EdgeIndex, which carries CSR/CSC caches
    ```

    ## Fix safety
    No automatic fix: switching from a sparse adjacency to `edge_index`
    changes the data pipeline and sometimes the layer (`adj_t` is the
    transposed adjacency).

    ## References
    - [torch.compile: sparse tensors are not supported (`Attempted to wrap sparse Tensor`)](https://pytorch.org/docs/stable/torch.compiler_troubleshooting.html)
    - [PyG: compiled GNNs](https://pytorch-geometric.readthedocs.io/en/latest/advanced/compile.html)
    - [PyG: `EdgeIndex`](https://pytorch-geometric.readthedocs.io/en/latest/generated/torch_geometric.EdgeIndex.html)
    """

    code = "GNN005"
    name = "sparse-under-compile"
    summary = "A sparse adjacency (`SparseTensor`, `T.ToSparseTensor()`, CSR/COO) fed to a compiled model"
    region = "compiled"
    triggers = (b"SparseTensor", b"sparse", b"adj_t", b"to_torch_c")

    VALID = (
        # an `adj_t` made in another file: reported there, at its `T.ToSparseTensor()` (this file
        # tells the file defining the function that returned the data), not at the feed
        Valid("""
import torch
from pkg.data import get_dataset
def train(model, loader):
    for batch in loader:
        out = model(batch.x, batch.adj_t)

data = get_dataset("Reddit")
model = torch.compile(GCN(16, 32, 7), dynamic=True)
train(model, NeighborLoader(data, num_neighbors=[10]))
"""),
        # an eager conversion of an adjacency built above is the same adjacency
        Valid("""
import torch
adj = torch.sparse_coo_tensor(edge_index, weight).to_sparse_csr()
deg = torch.sparse.sum(adj, dim=1)
model = torch.compile(GCN(16, 32, 7), dynamic=True)
out = model(x, edge_index)
"""),
        # accepts vs builds (issue 10 item 4): re-wrapping the caller's own sparse input
        Valid("""
import torch
from torch_geometric.typing import SparseTensor
from torch_geometric.utils import is_torch_sparse_tensor
def norm(edge_index, value):
    if isinstance(edge_index, SparseTensor):
        row, col, _ = edge_index.coo()
        return SparseTensor.from_edge_index(torch.stack([row, col]), value)
    if is_torch_sparse_tensor(edge_index):
        return edge_index.to_sparse_csr()
    return edge_index
class Net(torch.nn.Module):
    def forward(self, x, edge_index):
        return norm(edge_index, x[:, 0])
model = torch.compile(Net())
"""),
        # built only after `if is_compiling(): return`: an eager-only fallback
        Valid("""
import torch
class Net(torch.nn.Module):
    def forward(self, x, edge_index):
        if torch.compiler.is_compiling():
            return x
        adj = torch.sparse_coo_tensor(edge_index, torch.ones(edge_index.size(1)))
        return adj @ x
model = torch.compile(Net())
"""),
        Valid("""
import torch
import torch_geometric.transforms as T
from torch_geometric.datasets import Planetoid
dataset = Planetoid("/tmp", "Cora", transform=T.ToSparseTensor())
data = dataset[0]
out = model(data.x, data.adj_t)  # nothing is compiled
"""),
        Valid("""
import torch
from torch_geometric.utils import to_torch_csr_tensor
model = torch.compile(GCN(16, 32, 7), dynamic=True)
adj = to_torch_csr_tensor(edge_index)
deg = torch.sparse.sum(adj, dim=1)  # eager use only
out = model(x, edge_index)
"""),
        Valid("""
import torch
from torch_geometric.typing import SparseTensor
def build(edge_index, n):
    return SparseTensor(row=edge_index[0], col=edge_index[1], sparse_sizes=(n, n))
adj = build(edge_index, n)
out = GCN(16, 32, 7)(x, adj.t())
"""),
    )
    INVALID = (
        # the guard is on a value the function built itself, not on its input: it builds one
        # (and converts it, in compiled code: a second break)
        Invalid("""
import torch
from torch_geometric.utils import is_torch_sparse_tensor, to_torch_csr_tensor
def norm(edge_index, value, n):
    adj = to_torch_csr_tensor(edge_index, value, (n, n))
    if is_torch_sparse_tensor(adj):
        adj = adj.to_sparse_coo()
    return adj
class Net(torch.nn.Module):
    def forward(self, x, edge_index):
        return norm(edge_index, x[:, 0], x.size(0)) @ x
model = torch.compile(Net())
""", lines=(5, 7)),
        # two transforms applied by hand: only the one whose data reaches the compiled model
        Invalid("""
import torch
import torch_geometric.transforms as T
tf = T.Compose([T.NormalizeFeatures(), T.ToSparseTensor()])
data = tf(base.clone()).to(device)
model = torch.compile(GCN())
out = model(data.x, data.adj_t)
lp_data = T.ToSparseTensor(layout=torch.sparse_csr)(base.clone())
lp_out = LabelPropagation(3, 0.9)(lp_data.y, lp_data.adj_t)
""", lines=(4,)),
        Invalid("""
import torch
import torch_geometric.transforms as T
from torch_geometric.datasets import Planetoid
dataset = Planetoid("/tmp", "Cora", transform=T.Compose([T.NormalizeFeatures(), T.ToSparseTensor()]))
data = dataset[0]
model = torch.compile(GCN(dataset.num_features, 16, dataset.num_classes))
for epoch in range(10):
    out = model(data.x, data.adj_t)
""", lines=(5,)),
        Invalid("""
import torch
def csr(edge_index, n):
    crow = torch.zeros(n + 1, dtype=torch.long)
    return torch.sparse_csr_tensor(crow, edge_index[1], torch.ones(edge_index.size(1)), (n, n))

def main():
    adj = csr(edge_index, n).to(device)
    model = torch.compile(Net(), dynamic=True)
    for epoch in range(10):
        loss = model(x, adj).sum()
""", lines=(5,)),
        Invalid("""
import torch
from torch_geometric.typing import SparseTensor
model = GCN(16, 32, 7)
model.compile()
adj = SparseTensor(row=row, col=col, sparse_sizes=(n, n))
out = model(x, adj.t())
""", lines=(6,)),
        # in compiled code every op making a sparse tensor breaks the graph, a conversion too
        Invalid("""
import torch
class Conv(torch.nn.Module):
    def forward(self, x, edge_index, weight):
        adj = torch.sparse_coo_tensor(edge_index, weight, (x.size(0), x.size(0)))
        adj = adj.t().to_sparse_csr()
        return adj @ x
model = torch.compile(Conv())
""", lines=(5, 6)),
    )

    def __init__(self, context) -> None:
        super().__init__(context)
        self._transforms: list[cst.Call] = []

    # creation sites -------------------------------------------------------------
    def visit_Call(self, node: cst.Call) -> None:
        what = self._creation(node)
        if what is None:
            return
        if what == "transform":
            self._transforms.append(node)
            return
        ctx = self.context
        if ctx.sparse_input_guard(node):
            return  # re-wraps the caller's own sparse input: the caller builds (and is told about) it
        region = ctx.compiled_region(node)
        text = _short(ctx.module.code_for_node(node), 40)
        kind = _kind_of(what, node, ctx)
        if region is not None:
            self.report(node, f"Sparse adjacency `{text}` is built inside the {region}: a graph break on every "
                              f"call. {_cap(_WHY[kind])}; with `fullgraph=True` it is an error. "
                              f"Build `edge_index`/`EdgeIndex` inputs instead.")
            return
        sink = ctx.compiled_sink(node)
        if sink is not None:
            call, why = sink
            self.report(node, _message(f"Sparse adjacency `{text}` reaches", call, why, ctx, kind=kind))

    def leave_Module(self, original_node: cst.Module) -> None:
        ctx = self.context
        reported: set = set()
        fed_here = ctx.sparse_fed_functions()
        for transform in self._transforms if fed_here else ():
            why = next((fed_here[f] for f in _enclosing_functions(ctx, transform) if f in fed_here), None)
            if why is not None:
                reported.add(transform)
                subject = f"`{_short(ctx.module.code_for_node(transform), 40)}` makes the sparse `adj_t` that"
                self.report(transform, f"{subject} another file feeds to a compiled model ({_first_origin(why)}): "
                                       f"a graph break on every call. "
                                       f"{_cap(_WHY[_kind_of('transform', transform, ctx)])}; with "
                                       f"`fullgraph=True` it is an error. Load `edge_index` (or an `EdgeIndex`) "
                                       f"instead of `adj_t`.")
        adj_sinks = ctx.adj_sinks()
        if not adj_sinks:
            return
        # An adj_t from outside this file is reported where it is made: this file tells the file
        # defining the function that returned it (semantic/sparse_feeds.py), not the feed here.
        for transform in self._transforms:
            if transform in reported:
                continue
            applied = self._applied_to(transform)
            # applied by hand to one object: only that object's adj_t counts
            fed = [(c, w, attr) for c, w, obj, attr in adj_sinks
                   if applied is None or (isinstance(obj, cst.Name) and obj.value in applied)]
            if fed:
                name = fed[0][2]
                made = (f"`{name}`, a dict of sparse adjacencies," if name.endswith("_dict")
                        else f"a sparse `{name}`")
                subject = f"`{_short(ctx.module.code_for_node(transform), 40)}` makes {made} that reaches"
                self.report(transform, _message(subject, fed[0][0], fed[0][1], ctx,
                                                kind=_kind_of("transform", transform, ctx)))

    def _applied_to(self, transform: cst.Call) -> Optional[set[str]]:
        """Names bound to what a transform is applied to by hand --
        ``lp = T.ToSparseTensor()(data).to(device)``, or through
        ``tf = T.Compose([..., T.ToSparseTensor()])`` and ``d = tf(data)`` --
        or None when it is handed over (``transform=`` of a dataset or loader)."""
        ctx = self.context
        node: cst.CSTNode = transform
        parent = ctx.parent.get(node)
        while isinstance(parent, (cst.Element, cst.List, cst.Tuple, cst.Arg)) or (
                isinstance(parent, cst.Call) and parent.func is not node
                and (ctx.last_part(parent.func) or "") == "Compose"):
            if isinstance(parent, cst.Arg) and parent.keyword is not None:
                return None
            node, parent = parent, ctx.parent.get(parent)
        if isinstance(parent, cst.Call) and parent.func is node:
            applications = [parent]
        elif isinstance(parent, cst.Assign) and len(parent.targets) == 1 \
                and isinstance(parent.targets[0].target, cst.Name):
            name = parent.targets[0].target.value
            applications = [c for c in ctx.all_calls() if isinstance(c.func, cst.Name) and c.func.value == name]
            if not applications:
                return None
        else:
            return None
        names: set[str] = set()
        for call in applications:
            outer: cst.CSTNode = call
            up = ctx.parent.get(outer)
            while isinstance(up, (cst.Attribute, cst.Call)) and (
                    isinstance(up, cst.Call) or up.attr.value in ("to", "cuda", "cpu", "pin_memory")):
                outer, up = up, ctx.parent.get(up)
            if not (isinstance(up, cst.Assign) and len(up.targets) == 1 and isinstance(up.targets[0].target, cst.Name)):
                return None  # used some other way: cannot tell
            names.add(up.targets[0].target.value)
        return names

    # ----------------------------------------------------------------------------
    def _creation(self, node: cst.Call) -> Optional[str]:
        ctx = self.context
        resolved = ctx.resolve(node.func) or ""
        last = resolved.split(".")[-1]
        if resolved in _SPARSE_TENSOR_CLASSES or resolved.endswith(".SparseTensor") and (
                resolved.startswith(("torch_sparse", "torch_geometric"))):
            return "SparseTensor"
        head, _, method = resolved.rpartition(".")
        if method in _SPARSE_CLASSMETHODS and head in _SPARSE_TENSOR_CLASSES:
            return "SparseTensor"
        if _torch_sparse_ctor(resolved):
            return "torch.sparse"
        if resolved.startswith("torch_geometric") and last in _PYG_SPARSE_FUNCS:
            return "pyg"
        if resolved.startswith("torch_geometric") and last == _TRANSFORM:
            return "transform"
        if isinstance(node.func, cst.Attribute) and node.func.attr.value in _TO_SPARSE_METHODS:
            receiver = node.func.value
            if ctx.kind(receiver) == SCALAR:
                return None
            if _is_sparse_source(ctx, receiver) and ctx.compiled_region(node) is None:
                return None  # an eager conversion of an adjacency built (and reported) above
            # (in compiled code every op making a sparse tensor is a graph break of its own)
            if isinstance(receiver, cst.Name) and receiver.value in ctx.aliases:
                return None  # a module attribute, not a tensor
            return "to_sparse"
        return None


def _is_sparse_source(ctx, expr: cst.BaseExpression) -> bool:
    """The receiver is itself a sparse value we already anchor on."""
    if isinstance(expr, cst.Call):
        resolved = ctx.resolve(expr.func) or ""
        if resolved.endswith("SparseTensor") or _torch_sparse_ctor(resolved) or \
                resolved.split(".")[-1] in _PYG_SPARSE_FUNCS:
            return True
        if isinstance(expr.func, cst.Attribute) and expr.func.attr.value not in _DENSE_RESULTS:
            return _is_sparse_source(ctx, expr.func.value)
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.MatrixMultiply):
        return _is_sparse_source(ctx, expr.left) or _is_sparse_source(ctx, expr.right)
    if isinstance(expr, cst.Attribute) and expr.attr.value in _ADJ_ATTRS:
        return True
    if isinstance(expr, cst.Name):
        binding, _ = ctx.lookup(expr.value, expr)
        if binding is not None and binding.how == "assign" and binding.value is not None \
                and binding.value is not expr:
            return _is_sparse_source(ctx, binding.value)
    return False


def _torch_sparse_ctor(resolved: str) -> bool:
    """``torch.sparse_coo_tensor`` and the like, also as another library re-exports it."""
    return resolved in _TORCH_SPARSE_FUNCS or resolved in _LEGACY_SPARSE or (
        "." in resolved and resolved.rpartition(".")[2] in _SPARSE_CTOR_NAMES)


def _enclosing_functions(ctx, node: cst.CSTNode) -> list:
    """The functions ``node`` sits in, innermost first."""
    out, func = [], ctx.enclosing_function(node)
    while func is not None:
        out.append(func)
        func = func.parent
    return out


def _first_origin(why: str) -> str:
    """What the feeding file told, without the files it was handed on through."""
    parts = why.split(", from ")
    return ", from ".join(parts[:2])


def _short(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


# Why dynamo cannot take the value, by what it is: torch_sparse's `SparseTensor`
# is a Python class over dense tensors whose operations are torch_sparse's
# custom C++ ops; `torch.sparse` COO/CSR/CSC are tensors with a sparse layout.
_WHY = {
    "torch_sparse": "dynamo cannot trace torch_sparse's custom ops, which a `SparseTensor` runs",
    "layout": "dynamo cannot wrap a tensor with a sparse layout (COO/CSR/CSC)",
    "unknown": "dynamo traces neither torch_sparse's `SparseTensor` ops nor sparse-layout tensors",
}


def _kind_of(what: str, node: cst.Call, ctx) -> str:
    """"torch_sparse" (a `SparseTensor`) or "layout" (a `torch.sparse` tensor)
    for a creation site: `T.ToSparseTensor(layout=...)` builds a torch.sparse
    tensor, without `layout` a `SparseTensor` (when torch_sparse is installed)."""
    if what == "SparseTensor":
        return "torch_sparse"
    if what == "transform":
        layout = next((a for a in node.args if a.keyword is not None and a.keyword.value == "layout"), None)
        if layout is None or ctx.module.code_for_node(layout.value) == "None":
            return "torch_sparse"
        return "layout"
    return "layout"


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _message(subject: str, call: cst.Call, why: str, ctx, kind: str = "unknown") -> str:
    call_text = _short(ctx.module.code_for_node(call))
    return (f"{subject} {why}: a graph break on every call. "
            f"{_cap(_WHY[kind])}; with `fullgraph=True` it is an error. "
            f"Feed `edge_index` or an `EdgeIndex` to the compiled model (`{call_text}`).")
