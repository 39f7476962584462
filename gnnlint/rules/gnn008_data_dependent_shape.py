from __future__ import annotations

from typing import Optional

import libcst as cst

from gnnlint.context import BATCH, MODEL, SCALAR
from gnnlint.rules.base import Invalid, Rule, Valid

# torch.<name>(...) / tensor.<name>(...) whose output size depends on values.
_ALWAYS = {
    "nonzero": "`nonzero`",
    "argwhere": "`argwhere`",
    "unique": "`unique`",
    "unique_consecutive": "`unique_consecutive`",
    "masked_select": "`masked_select`",
}


class DataDependentShape(Rule):
    """
    ## What it does
    Flags operations whose output *shape* depends on tensor values, inside a
    compiled region: `torch.nonzero` / `.nonzero()` / `argwhere`, boolean-mask
    indexing `x[mask]` / `edge_index[:, mask]`, `torch.unique` /
    `unique_consecutive`, one-argument `torch.where(cond)`, `masked_select`,
    and `bincount` without `minlength`.

    A subscript counts as a boolean mask when its index is a comparison
    (`x[deg > 0]`), a logical combination (`~m`, `a & b`), `.bool()`,
    `torch.isnan(...)` and friends, a name bound to one of these, or a tensor
    whose name contains `mask` (`data.train_mask`). Integer index tensors
    (`h[batch]`, `x[idx]`, `z[edge_label_index[0]]`) gather a known number of
    rows and are not flagged; neither are masked *assignments* (`x[mask] = 0`,
    `head[mask] = out[:, :d]`), which keep the shape: 0 graph breaks on torch
    2.13 (`bench/evidence/e16_masked_assignment.py`; a mask *read* on the right,
    `x[mask] = y[mask]`, breaks there and is flagged as a read, and so is an
    augmented assignment `w[loop_mask] -= 1`, which reads `w[loop_mask]`
    first: 1 break, "Dynamic shape operator").

    ## Why is this bad?
    The compiler cannot know the output size before the data is on the
    device. Dynamo either breaks the graph at the op (`x[mask]` and
    `masked_select` do on torch 2.13: "Dynamic shape operator") or traces it
    with an unbacked symbolic size, which needs a device-to-host sync to size
    the output and stops many downstream optimisations; with `fullgraph=True`
    it is an error unless `capture_dynamic_output_shape_ops` is set.

    What it deliberately does not catch: these ops in eager code (training
    loops, preprocessing, evaluation) — they are fine there — and the same ops
    inside PyG functions that the compiled code calls (`remove_self_loops`,
    `subgraph`, `dropout_edge`…), which gnnlint cannot see.

    ## Example
    ```python
    class Net(torch.nn.Module):
        def forward(self, x, edge_index):
            keep = torch.rand(edge_index.size(1), device=x.device) >= self.p
            edge_index = edge_index[:, keep]
            ...
    model = torch.compile(Net())
    ```

    ## Use instead
    ```python
    class Net(torch.nn.Module):
        def forward(self, x, edge_index, edge_weight):
            keep = torch.rand(edge_index.size(1), device=x.device) >= self.p
            edge_weight = edge_weight * keep  # keep the shape, zero the dropped edges
            ...
    ```
    Or move the masking out of the compiled model (into the data pipeline)
    and pass sizes you already know (`num_nodes`, `batch_size`).

    ## Fix safety
    No automatic fix: replacing a mask by a multiplier or moving it out of the
    model changes the program.

    ## References
    - [torch.compile: dynamic shapes and data-dependent operators](https://pytorch.org/docs/stable/torch.compiler_dynamic_shapes.html)
    - [PyG: compiled GNNs (masking leads to device syncs)](https://pytorch-geometric.readthedocs.io/en/latest/advanced/compile.html)
    """

    code = "GNN008"
    name = "data-dependent-shape"
    summary = "Data-dependent output shape (`nonzero`, `x[mask]`, `unique`, 1-arg `where`…) in a compiled region"
    region = "compiled"
    triggers = (b"nonzero", b"argwhere", b"unique", b"where", b"masked_select", b"bincount", b"[")

    VALID = (
        # an integer index declared by its annotation (`Int[Tensor, "k"]`) is a gather, not a mask
        Valid("""
import torch
from jaxtyping import Int, Float
class Pick(torch.nn.Module):
    def forward(self, x: Float[torch.Tensor, "n d"], idx: Int[torch.Tensor, "k"]):
        return x[idx] + x[idx[:3]]
m = torch.compile(Pick())
"""),
        # a comparison cast to integers before indexing is an integer index (a gather), not a mask
        Valid("""
import torch
class Net(torch.nn.Module):
    def forward(self, x, counts):
        index = (counts.unsqueeze(-1) > self.arange).to(torch.long)
        return x[:, index.squeeze(0)]
model = torch.compile(Net())
"""),
        # after `if torch._dynamo.is_compiling(): return ...` the rest runs eagerly only
        Valid("""
import torch
class Net(torch.nn.Module):
    def forward(self, x):
        if torch._dynamo.is_compiling():
            return x
        return x[x > 0]
model = torch.compile(Net())
"""),
        Valid("""
import torch
class Net(torch.nn.Module):
    def forward(self, x, batch):
        g = x.sum(0)
        return x + g[batch]  # integer gather
model = torch.compile(Net())
for batch in loader:
    out = model(batch.x, batch.batch)
    loss = out[batch.train_mask].sum()  # eager: fine
"""),
        Valid("""
import torch
class Net(torch.nn.Module):
    def forward(self, x, mask):
        x = torch.where(mask, x, torch.zeros_like(x))
        x[x < 0] = 0.0
        return x.bincount(minlength=10)
model = torch.compile(Net())
"""),
        Valid("""
import torch
idx = data.train_mask.nonzero().view(-1)  # once, before training
model = torch.compile(GCN(16, 32, 7))
"""),
    )
    INVALID = (
        # a parameter declared boolean by its shape annotation (jaxtyping `Bool[Tensor, "n"]`), or a gather of one
        Invalid("""
import torch
from typing import Optional
from jaxtyping import Bool, Int
class Scalarize(torch.nn.Module):
    def forward(self, frames, edge_index, node_mask: Optional[Bool[torch.Tensor, "n"]] = None):
        row, col = edge_index[0], edge_index[1]
        edge_mask = node_mask[row] & node_mask[col]
        return frames[edge_mask]
m = torch.compile(Scalarize())
""", lines=(9,)),
        # a comparison reshaped (`.squeeze(0)`, `.view(-1)`, `.to(device)`) is still a boolean mask
        Invalid("""
import torch
class Net(torch.nn.Module):
    def forward(self, logits, counts):
        mask = counts.sum(1).unsqueeze(-1) > self.arange.to(logits.device)
        picked = logits[:, mask.squeeze(0)]
        return picked, logits[mask.view(-1).to(logits.device)]
model = torch.compile(Net())
""", lines=(6, 7)),
        # a registry filled by a decorator: every registered class may be compiled
        Invalid("""
import torch
MODELS = {}
def register(name):
    def deco(cls):
        MODELS[name] = cls
        return cls
    return deco
@register("a")
class A(torch.nn.Module):
    def forward(self, x):
        return x[x > 0]
class NotRegistered(torch.nn.Module):
    def forward(self, x):
        return x[x > 0]
model = torch.compile(MODELS[args.name]())
""", lines=(12,)),
        # the mask to_dense_batch returns
        Invalid("""
import torch
from torch_geometric.utils import to_dense_batch
class Select(torch.nn.Module):
    def forward(self, score, batch):
        dense, valid = to_dense_batch(score, batch, fill_value=0.0, max_num_nodes=32, batch_size=8)
        return dense[valid]
model = torch.compile(Select())
""", lines=(7,)),
        Invalid("""
import torch
def drop(edge_index, p):
    keep = torch.rand(edge_index.size(1)) >= p
    return edge_index[:, keep]

class Net(torch.nn.Module):
    def forward(self, x, edge_index):
        edge_index = drop(edge_index, 0.2)
        deg = x.new_zeros(x.size(0))
        (isolated,) = torch.where(deg == 0)
        n = torch.nonzero(deg == 0).size(0)
        u = torch.unique(edge_index[0])
        return x[deg > 0]

model = torch.compile(Net())
""", lines=(5, 11, 12, 13, 14)),
        Invalid("""
import torch
@torch.compile
def step(x, y, train_mask):
    counts = y.bincount()
    return x[train_mask].sum() + x.masked_select(x > 0).sum()
""", lines=(5, 6, 6)),
        # an augmented masked assignment reads the masked rows first (ChebConv.__norm__)
        Invalid("""
import torch
class Norm(torch.nn.Module):
    def forward(self, edge_index, edge_weight):
        loop_mask = edge_index[0] == edge_index[1]
        edge_weight[loop_mask] -= 1
        return edge_weight
model = torch.compile(Norm())
""", lines=(6,)),
    )

    def visit_Call(self, node: cst.Call) -> None:
        ctx = self.context
        what = self._call_hazard(node)
        if what is None:
            return
        region = ctx.compiled_region(node)
        if region is None:
            return
        self.report(node, f"{what} has a data-dependent output shape in the {region}: a graph break or a "
                          f"device sync. Dynamo either breaks at it or traces an unbacked size that syncs. Keep "
                          f"shapes static (masks as multipliers, sizes passed in) or move it out of the compiled "
                          f"code.")

    def visit_Subscript(self, node: cst.Subscript) -> None:
        ctx = self.context
        if not self._is_mask_subscript(node):
            return
        region = ctx.compiled_region(node)
        if region is None:
            return
        self.report(node, f"Boolean-mask indexing `{_short(ctx.module.code_for_node(node))}` in the {region}: "
                          f"a graph break on every call. Its output shape depends on the data. Multiply by the "
                          f"mask instead, or select outside the compiled code.")

    # ------------------------------------------------------------------------------
    def _call_hazard(self, node: cst.Call) -> Optional[str]:
        ctx = self.context
        func = node.func
        resolved = ctx.resolve(func) or ""
        parts = resolved.split(".")
        torch_fn = parts[-1] if parts[0] == "torch" and len(parts) == 2 else None
        method = None
        if torch_fn is None and isinstance(func, cst.Attribute):
            receiver = func.value
            if not (isinstance(receiver, cst.Name) and receiver.value in ctx.aliases) \
                    and ctx.kind(receiver) not in (SCALAR, MODEL, BATCH):
                method = func.attr.value
        name = torch_fn or method
        if name is None:
            return None
        if name in _ALWAYS:
            return _ALWAYS[name]
        if name == "where" and torch_fn:
            positional = [a for a in node.args if a.keyword is None]
            if len(node.args) == 1 and len(positional) == 1 and not positional[0].star:
                return "one-argument `torch.where`"
            return None
        if name == "bincount":
            if any(a.keyword is not None and a.keyword.value == "minlength" for a in node.args):
                return None
            positional = [a for a in node.args if a.keyword is None]
            limit = 3 if torch_fn else 2  # torch.bincount(input, weights, minlength)
            if len(positional) >= limit or any(a.star for a in node.args):
                return None
            return "`bincount` without `minlength`"
        return None

    def _is_mask_subscript(self, node: cst.Subscript) -> bool:
        ctx = self.context
        target, parent = node, ctx.parent.get(node)
        while isinstance(parent, cst.Element) and isinstance(ctx.parent.get(parent), (cst.Tuple, cst.List)):
            target = ctx.parent.get(parent)  # `a[m], b[m] = x, y`: an element of an unpacking target
            parent = ctx.parent.get(target)
        if isinstance(parent, cst.AssignTarget) and parent.target is target:
            return False
        if isinstance(parent, cst.AnnAssign) and parent.target is node:
            return False
        if isinstance(parent, cst.Del):
            return False
        base_kind = ctx.kind(node.value)
        if base_kind in (SCALAR, MODEL) or base_kind == BATCH and not _keyed_field(node.value) \
                and not _bound_keyed_field(ctx, node.value):
            return False  # (`data[attr][mask]`: a field read by key out of a batch is a tensor a mask selects from)
        for element in node.slice:
            index = element.slice
            if isinstance(index, cst.Index) and ctx.is_bool_mask(index.value):
                return True
        return False


def _keyed_field(expr: cst.BaseExpression) -> bool:
    """``data[attr]`` / ``data["pos"]`` / ``data[f"target_{k}"]``: one field of a batch read by its key."""
    if not isinstance(expr, cst.Subscript) or len(expr.slice) != 1 or not isinstance(expr.slice[0].slice, cst.Index):
        return False
    return isinstance(expr.slice[0].slice.value, (cst.Name, cst.SimpleString, cst.FormattedString))


def _bound_keyed_field(ctx, expr: cst.BaseExpression, depth: int = 0) -> bool:
    """``lengths`` bound once to such a field or to a slice / method result of one: ``lengths =
    graph["lengths"].squeeze()``, unpacked from a tuple of them (``ei, lengths = (graph["edge_index"],
    graph["lengths"])``), ``idx_i = ei[0, :]``: a tensor, not the batch."""
    if depth > 4:
        return False
    if depth and _keyed_field(expr):
        return True
    if isinstance(expr, cst.Subscript):
        return depth > 0 and _bound_keyed_field(ctx, expr.value, depth + 1)
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
        return depth > 0 and _bound_keyed_field(ctx, expr.func.value, depth + 1)
    if not isinstance(expr, cst.Name):
        return False
    binding, _scope = ctx.lookup(expr.value, expr)
    if binding is None or binding.value is None:
        return False
    if binding.how == "assign":
        return _bound_keyed_field(ctx, binding.value, depth + 1)
    if binding.how == "unpack" and isinstance(binding.value, (cst.Tuple, cst.List)) \
            and 0 <= binding.index < len(binding.value.elements) \
            and not any(isinstance(e, cst.StarredElement) for e in binding.value.elements):
        return _bound_keyed_field(ctx, binding.value.elements[binding.index].value, depth + 1)
    return False


def _short(text: str, limit: int = 50) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
