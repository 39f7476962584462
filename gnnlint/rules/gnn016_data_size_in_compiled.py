from __future__ import annotations

import libcst as cst

from gnnlint.context import BATCH
from gnnlint.rules.base import FixSpec, Invalid, NodeEdit, Rule, Valid
from gnnlint.versions import measured


class DataSizeInCompiled(Rule):
    """
    ## What it does
    Flags `data.num_nodes` and `data.size()` on a PyG `Data`, `Batch` or
    `HeteroData` object inside compiled code (a compiled forward or
    function, or what it calls). The object is recognised as gnnlint
    recognises batches everywhere: a parameter or variable named like one
    (`data`, `batch`, `graph`, `*_data`…) that is used as one
    (`data.x`, `batch.num_graphs`), or a value from a PyG loader.

    Not flagged: the store-level `data["paper"].num_nodes` (it compiles),
    `num_graphs`, `batch_size`, `ptr`, `num_edges` (measured: no break),
    and `data.num_nodes` in `__init__`, in the training loop or under
    `if not torch.compiler.is_compiling():`.

    ## Why is this bad?
    Dynamo mis-resolves the `num_nodes` property (`Data.num_nodes` returns
    `super().num_nodes`, data.py:616; dynamo sees a `property` object and
    raises "unsupported operand type(s) for /: 'Tensor' and 'property'"
    internally). It cannot recover, so it **skips the whole frame: the
    compiled forward runs eagerly on every call, silently** — measured on
    torch 2.13.0 + torch_geometric 2.8.1: **0 of 20 calls ran compiled**,
    against 20 of 20 with `data.x.size(0)`
    (`shared/evidence/torch-2.13-pyg-2.8.1/e11h_fallback_proof.py`; also
    `e05_data_objects.py`, `e05b_data_attrs.py` for `Batch`, `HeteroData` and
    `data.size()`). With `fullgraph=True` it is an error: "Failed to convert
    args/kwargs to proxy" (`e06f_fullgraph.py`). Only torch 2.13 + PyG 2.8.1
    were measured; the rule is declared for every version (the property has
    had this shape since PyG 2.0).

    ## Example
    ```python
    class Net(torch.nn.Module):
        def forward(self, data):
            h = self.conv(data.x, data.edge_index)
            return h.sum(0) / data.num_nodes

    model = torch.compile(Net())
    ```

    ## Use instead
    ```python
    class Net(torch.nn.Module):
        def forward(self, data):
            h = self.conv(data.x, data.edge_index)
            return h.sum(0) / data.x.size(0)
    ```
    or pass `num_nodes` in as an argument.

    ## Fix safety
    Safe, and only offered for `data.num_nodes` when the same function reads
    `data.x`: PyG's `x` holds one row per node, so `data.x.size(0)` is the
    number of nodes (for a `Batch`, of all its graphs). Without `x` at hand
    (`HeteroData`, position-only data) or for `data.size()` there is no fix.

    ## References
    - [PyG: compiled GNNs](https://pytorch-geometric.readthedocs.io/en/latest/advanced/compile.html)
    - Evidence: `shared/evidence/torch-2.13-pyg-2.8.1/report.md` (5c)
    """

    code = "GNN016"
    name = "data-size-in-compiled"
    summary = "`data.num_nodes` / `data.size()` of a PyG Data object in compiled code (the whole frame runs eagerly)"
    region = "compiled"
    severity = "error"  # silent eager: 0 of 20 calls ran compiled
    fix_applicability = "safe"
    triggers = (b"num_nodes", b"size(")

    VALID = (
        Valid("""
import torch
class Net(torch.nn.Module):
    def forward(self, data):
        h = self.conv(data.x, data.edge_index)
        return h.sum(0) / data.x.size(0) + data["paper"].num_nodes + data.num_graphs
model = torch.compile(Net())
for data in loader:
    print(data.num_nodes)  # eager
"""),
        Valid("""
import torch
class Net(torch.nn.Module):
    def forward(self, data):
        field = data["node_features"]
        return field[: field.size(0) // 2]
model = torch.compile(Net())
"""),
        Valid("""
import torch
class Net(torch.nn.Module):
    def __init__(self, data):
        super().__init__()
        self.emb = torch.nn.Embedding(data.num_nodes, 16)
    def forward(self, x, edge_index, batch):
        return x[: batch.size(0)]
model = torch.compile(Net(data))
"""),
    )
    INVALID = (
        Invalid("""
import torch
class Net(torch.nn.Module):
    def forward(self, data):
        h = self.conv(data.x, data.edge_index)
        return h.sum(0) / data.num_nodes
model = torch.compile(Net())
""", lines=(6,), expected_fix="""
import torch
class Net(torch.nn.Module):
    def forward(self, data):
        h = self.conv(data.x, data.edge_index)
        return h.sum(0) / data.x.size(0)
model = torch.compile(Net())
"""),
        Invalid("""
import torch
@torch.compile
def readout(batch, h):
    n = batch.num_nodes
    rows, cols = batch.size()
    return h.mean(0) * n + batch.num_graphs
""", lines=(5, 6)),
    )

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value != "num_nodes":
            return
        ctx = self.context
        parent = ctx.parent.get(node)
        if isinstance(parent, cst.AssignTarget) or \
                (isinstance(parent, (cst.AugAssign, cst.AnnAssign)) and parent.target is node):
            return
        if not self._is_data(node.value):
            return
        region = ctx.compiled_region(node)
        if region is None:
            return
        owner = ctx.module.code_for_node(node.value)
        fix = None
        if self._reads_x(node):
            fix = FixSpec("safe", f"Use `{owner}.x.size(0)`", (NodeEdit(node, f"{owner}.x.size(0)"),))
        instead = f"`{owner}.x.size(0)`" if fix else "the size of a node tensor (`x.size(0)`) or an argument"
        self.report(node, f"`{owner}.num_nodes` in the {region}: the whole frame silently runs eagerly. Dynamo "
                          f"mis-resolves the property{self._measured()}; use {instead}.", fix)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "size"):
            return
        if not self._is_data(func.value):
            return
        ctx = self.context
        region = ctx.compiled_region(node)
        if region is None:
            return
        owner = ctx.module.code_for_node(func.value)
        self.report(node, f"`{owner}.size()` of a PyG data object in the {region}: the whole frame silently runs "
                          f"eagerly. It reads `num_nodes`, which dynamo mis-resolves{self._measured()}; use the "
                          f"size of a tensor (`{owner}.x.size(0)`) or pass it in.")

    def _measured(self) -> str:
        """The measurement, cited only for the measured torch + PyG (or an unknown target)."""
        options = self.context.options
        if not measured(options.torch_version, options.pyg_version):
            return ""
        return " (measured: 0 of 20 calls compiled, torch 2.13 + PyG 2.8.1)"

    def _is_data(self, expr: cst.BaseExpression) -> bool:
        # data["paper"].num_nodes (a storage) compiles; only the object itself breaks
        if not isinstance(expr, (cst.Name, cst.Attribute)):
            return False
        if isinstance(expr, cst.Name) and expr.value == "self":
            return False
        if isinstance(expr, cst.Name):
            # x = data["field"]: an entry of a data object or a dict (a tensor, a storage)
            binding, _ = self.context.lookup(expr.value, expr)
            if binding is not None and isinstance(binding.value, cst.Subscript):
                return False
        return self.context.kind(expr) == BATCH

    def _reads_x(self, node: cst.Attribute) -> bool:
        """The enclosing function reads ``<owner>.x`` (the node features are at hand)."""
        ctx = self.context
        func = ctx.enclosing_function(node)
        owner = ctx.module.code_for_node(node.value)
        for attr in ctx.attribute_nodes("x"):
            if ctx.enclosing_function(attr) is func and ctx.module.code_for_node(attr.value) == owner \
                    and not isinstance(ctx.parent.get(attr), cst.AssignTarget):
                return True
        return False
