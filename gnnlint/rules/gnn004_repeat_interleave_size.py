from __future__ import annotations

from typing import Optional

import libcst as cst

from gnnlint.context import SCALAR, TENSOR, arg_of, is_none
from gnnlint.rules.base import FixSpec, Invalid, NodeEdit, Rule, Valid


class RepeatInterleaveSize(Rule):
    """
    ## What it does
    Flags `torch.repeat_interleave(x, repeats)` / `x.repeat_interleave(repeats)`
    (and the one-argument `torch.repeat_interleave(repeats)`) whose `repeats`
    is a tensor and that passes no `output_size`, and calls whose
    `output_size` is itself a device tensor (`ptr[-1]`, `counts.sum()`).

    ## Why is this bad?
    With tensor `repeats`, the output length is `repeats.sum()`, a value that
    lives on the device: PyTorch copies it to the host to allocate the output
    — a **device sync** on every call (on CUDA), and under `torch.compile` an
    unbacked data-dependent size that blocks optimisations. Passing
    `output_size=` as a Python int (or a symbolic size such as `x.size(0)`)
    removes the sync; PyG itself does this in `softmax` and its pooling code.
    An `output_size` that is a tensor (`ptr[-1]`) is converted with `int()` —
    the same sync, moved.

    Python-int `repeats` are fine and not flagged. gnnlint flags only
    `repeats` it can tell is a tensor (the result of a torch op, a forward
    argument, something computed from them).

    ## Example
    ```python
    def forward(self, x, batch, ptr):
        counts = ptr[1:] - ptr[:-1]
        g = global_mean_pool(x, batch, size=counts.numel())
        return x + g.repeat_interleave(counts, dim=0)
    ```

    ## Use instead
    ```python
    def forward(self, x, batch, ptr):
        counts = ptr[1:] - ptr[:-1]
        g = global_mean_pool(x, batch, size=counts.numel())
        return x + g.repeat_interleave(counts, dim=0, output_size=x.size(0))
    ```
    (here simply `g[batch]` avoids `repeat_interleave` altogether).

    ## Fix safety
    Unsafe, and only offered when the total is evident in scope: `repeats`
    computed as `bincount(v)` / `degree(v)` sums to `v.numel()`; per-graph
    node counts (`ptr[1:] - ptr[:-1]`, `ptr.diff()`) sum to the number of
    nodes (`num_nodes`, `x.size(0)`, `batch.size(0)`). A wrong `output_size`
    gives wrong results (or an error) instead of a sync, so review the value.
    `ptr[-1]` is never suggested: it is a device tensor and would still sync.

    ## References
    - [torch.repeat_interleave (`output_size`)](https://pytorch.org/docs/stable/generated/torch.repeat_interleave.html)
    - [PyG `softmax` passes `output_size` to avoid the sync](https://github.com/pyg-team/pytorch_geometric/blob/master/torch_geometric/utils/_softmax.py)
    """

    code = "GNN004"
    name = "repeat-interleave-size"
    summary = "`repeat_interleave` with tensor `repeats` and no `output_size` (device sync)"
    triggers = (b"repeat_interleave",)
    fix_applicability = "unsafe"

    VALID = (
        # a graph attribute this file treats as a Python list (`.insert`): its elements are ints
        Valid("""
import torch
def spatial_embed(embed, batch):
    for i in range(len(batch)):
        batch[i].sizes.insert(1, 4)
    return torch.cat([embed[:4].repeat_interleave(batch[i].sizes[1], dim=0)
                      for i in range(len(batch))])
"""),
        # a tuple that is not jraph's GraphsTuple: its last fields may be ints
        Valid("""
import torch
from typing import NamedTuple
class Graph(NamedTuple):
    nodes: torch.Tensor
    n_edge: int
def spread(graph: Graph, g):
    nodes, n_edge = graph
    return torch.repeat_interleave(g, n_edge, dim=0)
"""),
        # isinstance narrowing (issue 10 item 4): the tensor assignments keep a tensor a tensor,
        # so `repeats` is what the caller passed -- an int (fairchem's repeat_blocks)
        Valid("""
import torch
def repeat_blocks(sizes, repeats, mask):
    if isinstance(repeats, torch.Tensor):
        repeats = torch.masked_select(repeats, mask)
        repeats = torch.cat((sizes.new_ones(1), repeats))
    else:
        r0 = torch.repeat_interleave(sizes, repeats)
    return torch.repeat_interleave(sizes, repeats)
class Net(torch.nn.Module):
    def forward(self, sizes, mask):
        return repeat_blocks(sizes, repeats=2, mask=mask)
model = torch.compile(Net())
"""),
        # eager-only code (issue 10 item 4): after `if is_compiling(): return`, in a helper only
        # called from there, inside `if not is_compiling():`, in a torch.compiler.disable method
        Valid("""
import torch
import torch_geometric
def expand(x, counts):
    return x.repeat_interleave(counts, dim=0)
class Net(torch.nn.Module):
    def forward(self, x, counts):
        if torch_geometric.is_compiling():
            return x
        y = x.repeat_interleave(counts, dim=0)
        return y + expand(x, counts)
class Net2(torch.nn.Module):
    def forward(self, x, counts):
        if not torch._dynamo.is_compiling():
            x = x.repeat_interleave(counts, dim=0)
        return self.log(x, counts)
    @torch.compiler.disable
    def log(self, x, counts):
        return x.repeat_interleave(counts, dim=0)
model = torch.compile(Net())
model2 = torch.compile(Net2())
"""),
        # a caller passes a Python int: not known to be a tensor
        Valid("""
import torch
def expand(x, repeats):
    return x.repeat_interleave(repeats, dim=0)
a = expand(torch.ones(3, 2), 2)
b = expand(torch.ones(3, 2), torch.tensor([1, 2, 3]))
"""),
        Valid("""
import torch
class Net(torch.nn.Module):
    def forward(self, x, heads: int):
        w = self.scale.repeat_interleave(x.size(-1) // heads)
        return x * w.repeat_interleave(2, dim=0)
"""),
        Valid("""
import torch
def expand(h, counts, num_nodes: int):
    return h.repeat_interleave(counts, dim=0, output_size=num_nodes)
"""),
        # a repeats count used as a plain number: no array evidence, so not called a tensor
        Valid("""
import torch
def expand(graph, h):
    nodes, n_node = graph
    scale = n_node * 2
    return h.repeat_interleave(n_node, dim=0) * scale
"""),
        # `x.size(1)` / `x.numel()` are ints, though `size` is a method an int lacks
        Valid("""
import torch
def batch_of(embeddings, device):
    return torch.arange(embeddings.size(0), device=device).repeat_interleave(embeddings.size(1))
"""),
        # an int annotation, a jaxtyping-looking name subscripted with something else
        Valid("""
import torch
def expand(h, counts: int, k: Int[3]):
    return h.repeat_interleave(counts, dim=0).repeat_interleave(k, dim=1)
"""),
        # another field of the batch, a field stored into here, a rebound base, module state: no evidence
        Valid("""
import torch
class Pool(torch.nn.Module):
    def forward(self, h, v_data):
        bs = v_data["num_faces"].shape[0]
        return h.repeat_interleave(v_data["k"], dim=0)
"""),
        Valid("""
import torch
class Pool(torch.nn.Module):
    def forward(self, h, v_data):
        bs = v_data["num_faces"].shape[0]
        v_data["num_faces"] = 3
        return h.repeat_interleave(v_data["num_faces"], dim=0)
"""),
        Valid("""
import torch
class Pool(torch.nn.Module):
    def forward(self, h, v_data):
        bs = v_data["num_faces"].shape[0]
        v_data = v_data["cfg"]
        return h.repeat_interleave(v_data["num_faces"], dim=0)
"""),
        Valid("""
import torch
class Heads(torch.nn.Module):
    def forward(self, h):
        n = self.k.shape[0]
        return h.repeat_interleave(self.k, dim=1)
"""),
    )
    INVALID = (
        # a graph attribute is a tensor; a list method on another object's attribute of that name says nothing
        Invalid("""
import torch
def spatial_embed(embed, batch, cache):
    cache.sizes.insert(1, 4)
    return torch.cat([embed[:4].repeat_interleave(batch[i].sizes[1], dim=0)
                      for i in range(len(batch))])
""", lines=(5,)),
        # torch_scatter's segment counts, a legacy `torch.LongTensor` (CPU: no sync, but a data-sized
        # output) and a value with a length (an int has none; `repeats` takes no list) are tensors
        Invalid("""
import torch
from torch_scatter import segment_coo
def neighbors(index, x):
    num_neighbors = segment_coo(index.new_ones(1).expand_as(index), index, dim_size=x.size(0))
    return torch.repeat_interleave(x, num_neighbors)
def cells(cell, n):
    num_atoms = torch.LongTensor([n])
    return torch.repeat_interleave(cell, num_atoms, dim=0)
def per_atom(x, num_atoms):
    batch_size = len(num_atoms)
    return torch.repeat_interleave(x, num_atoms, dim=0), batch_size
""", lines=(6, 9, 12)),
        # jraph's GraphsTuple (also in PyTorch ports): n_node / n_edge are per-graph count arrays
        Invalid("""
import torch
from jraph import GraphsTuple
def spread(graph: GraphsTuple, g):
    nodes, edges, receivers, senders, globals_, n_node, n_edge = graph
    edge_g = torch.repeat_interleave(g, n_edge, dim=0)
    node_g = torch.repeat_interleave(g, graph.n_node, dim=0)
    return edge_g, node_g
""", lines=(6, 7)),
        # repeats can only be an int or a tensor: one with a first dimension, a device or `.to()` is a tensor
        Invalid("""
import torch
class GraphNetwork(torch.nn.Module):
    def forward(self, graph):
        nodes, edges, globals_, n_node, n_edge = graph
        n_graph = n_node.shape[0]
        return torch.repeat_interleave(torch.arange(n_graph), n_node, dim=0)
def pbc(cell, neighbors):
    neighbors = neighbors.to(cell.device)
    return torch.repeat_interleave(cell, neighbors, dim=0)
def from_state(state, device):
    n_node = state.n_atoms_per_system
    return torch.arange(n_node.shape[0], device=device).repeat_interleave(n_node)
""", lines=(7, 10, 13)),
        # CPU repeats: reported anywhere as well (the labelled policy); the message says what it costs
        Invalid("""
import torch
counts = torch.tensor([2, 3, 1])
batch = torch.arange(3).repeat_interleave(counts)
""", lines=(4,)),
        Invalid("""
import torch
class Net(torch.nn.Module):
    def forward(self, x):
        counts = torch.tensor([2, 3, 1])
        return x.repeat_interleave(counts, dim=0)
model = torch.compile(Net())
""", lines=(6,)),
        # a tensor before the isinstance branch stays one
        Invalid("""
import torch
from torch import Tensor
def expand(x, sizes):
    counts = torch.bincount(sizes)
    if isinstance(counts, Tensor):
        counts = counts.to(x.device)
    return x.repeat_interleave(counts, dim=0)
""", lines=(8,)),
        # the guard covers only what follows it; a helper also called before it is compiled
        Invalid("""
import torch
def expand(x, counts):
    return x.repeat_interleave(counts, dim=0)
class Net(torch.nn.Module):
    def forward(self, x, counts):
        h = expand(x, counts)
        if torch.compiler.is_compiling():
            return h
        return x.repeat_interleave(counts, dim=0) + expand(x, counts)
model = torch.compile(Net())
""", lines=(4,)),
        # repeats: a parameter every caller passes a tensor for, unpacked from a collate's tuple
        Invalid("""
import torch
def collate(xs):
    counts = torch.tensor([x.size(0) for x in xs])
    return torch.cat(xs), counts
def batch_vector(num_graphs, counts):
    return torch.arange(num_graphs).repeat_interleave(counts)
x, counts = collate(graphs)
batch = batch_vector(len(graphs), counts)
""", lines=(7,)),
        Invalid("""
import torch
class Net(torch.nn.Module):
    def forward(self, x, batch, ptr):
        counts = ptr[1:] - ptr[:-1]
        g = x.sum(0, keepdim=True)
        return x + torch.repeat_interleave(g, counts, dim=0)

model = torch.compile(Net())
""", lines=(7,), expected_fix="""
import torch
class Net(torch.nn.Module):
    def forward(self, x, batch, ptr):
        counts = ptr[1:] - ptr[:-1]
        g = x.sum(0, keepdim=True)
        return x + torch.repeat_interleave(g, counts, dim=0, output_size=x.size(0))

model = torch.compile(Net())
"""),
        Invalid("""
import torch
def neighbors(edge_index):
    row = edge_index[0]
    deg = torch.bincount(row)
    src = torch.arange(deg.numel()).repeat_interleave(deg)
    return src
""", lines=(6,), expected_fix="""
import torch
def neighbors(edge_index):
    row = edge_index[0]
    deg = torch.bincount(row)
    src = torch.arange(deg.numel()).repeat_interleave(deg, output_size=row.numel())
    return src
"""),
        Invalid("""
import torch
class Expand(torch.nn.Module):
    def forward(self, h, counts, ptr):
        return h.repeat_interleave(counts, dim=0, output_size=ptr[-1])
""", lines=(5,)),
        # a parameter annotated as a tensor by shape (jaxtyping `Int[Tensor, "b"]`, a project's `Int["n"]` alias)
        Invalid("""
import torch
import jaxtyping
from .tensor_typing import Int
def expand(h, counts: jaxtyping.Int[torch.Tensor, "b"], lens: Int["n"]):
    a = h.repeat_interleave(counts, dim=0)
    return a, torch.repeat_interleave(h, lens)
""", lines=(6, 7)),
        # a batch field the function also reads as an array (`.shape[0]`, `.to(device)`): a tensor
        Invalid("""
import torch
class Pool(torch.nn.Module):
    def forward(self, h, v_data):
        bs = v_data["num_faces"].shape[0]
        index = torch.arange(bs, device=h.device).repeat_interleave(v_data["num_faces"])
        return h.repeat_interleave(v_data["num_faces"], dim=0), index
""", lines=(6, 7)),
        Invalid("""
import torch
def expand(h, data, device):
    counts = data.counts.to(device)
    return h.repeat_interleave(data.counts, dim=0)
""", lines=(5,)),
    )

    def visit_Call(self, node: cst.Call) -> None:
        ctx = self.context
        func = node.func
        resolved = ctx.resolve(func) or ""
        if resolved == "torch.repeat_interleave":
            positional = [a for a in node.args if a.keyword is None]
            if any(a.star for a in node.args):
                return
            repeats_arg = arg_of(node, "repeats", 1) or (positional[0] if len(positional) == 1 else None)
        elif isinstance(func, cst.Attribute) and func.attr.value == "repeat_interleave" \
                and not (isinstance(func.value, cst.Name) and func.value.value in ctx.aliases):
            if ctx.kind(func.value) == SCALAR:
                return
            repeats_arg = arg_of(node, "repeats", 0)
        else:
            return
        if repeats_arg is None or repeats_arg.star or ctx.is_eager_only(node):
            return  # reported anywhere a tensor repeats, except code that provably never runs compiled
        repeats = repeats_arg.value
        if not ctx.int_or_tensor_is_tensor(repeats):
            return
        where = ctx.compiled_region(node)
        size_arg = next((a for a in node.args if a.keyword is not None and a.keyword.value == "output_size"), None)
        if size_arg is not None and not is_none(size_arg.value):
            if ctx.kind(size_arg.value) != TENSOR:
                return
            problem = (f"`output_size={_text(ctx, size_arg.value)}` is a device tensor: converting it to an int "
                       f"syncs the device")
        elif ctx.host_tensor(repeats) is not None:  # no device to sync, but the size is still the data's
            problem = (f"`repeat_interleave` with CPU tensor repeats `{_text(ctx, repeats)}` and no "
                       f"`output_size` sizes its output from the data")
        else:
            problem = (f"`repeat_interleave` with tensor repeats `{_text(ctx, repeats)}` and no `output_size` "
                       f"syncs the device to size its output")
        if where is not None:
            cost = f" in the {where}. Its output size is data-dependent (an unbacked size)."
        else:
            hot = ctx.hot_region(node)
            cost = f" every step ({hot})." if hot else "."
        total = _known_total(ctx, repeats, node)
        fix = None
        if total is not None:
            advice = f"Pass `output_size={total}`."
            fix = FixSpec("unsafe", f"Pass `output_size={total}`", (NodeEdit(node, _with_size(node, size_arg, total)),))
        else:
            advice = ("Pass `output_size=` with the total you already know (e.g. the number of nodes); "
                      "`ptr[-1]` or `repeats.sum()` would still sync.")
        self.report(node, f"{problem}{cost} {advice}", fix)


def _text(ctx, node: cst.CSTNode, limit: int = 40) -> str:
    text = " ".join(ctx.module.code_for_node(node).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _with_size(call: cst.Call, size_arg: Optional[cst.Arg], total: str) -> cst.Call:
    value = cst.parse_expression(total)
    if size_arg is not None:
        args = [a.with_changes(value=value) if a is size_arg else a for a in call.args]
        return call.with_changes(args=args)
    args = list(call.args)
    last = args[-1]
    trailing = last.comma if isinstance(last.comma, cst.Comma) else None
    args[-1] = last.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
    new = cst.Arg(value=value, keyword=cst.Name("output_size"),
                  equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                        whitespace_after=cst.SimpleWhitespace("")),
                  comma=trailing if trailing is not None else cst.MaybeSentinel.DEFAULT)
    args.append(new)
    return call.with_changes(args=args)


def _resolve_value(ctx, expr: cst.BaseExpression, at: cst.CSTNode, depth: int = 0):
    """Follow plain ``name = value`` bindings."""
    while isinstance(expr, cst.Name) and depth < 4:
        binding, _ = ctx.lookup(expr.value, at)
        if binding is None or binding.how != "assign" or binding.value is None:
            return expr
        at, expr, depth = binding.value, binding.value, depth + 1
    return expr


def _root_name(expr: cst.BaseExpression) -> Optional[cst.Name]:
    while isinstance(expr, (cst.Attribute, cst.Subscript)):
        expr = expr.value
    return expr if isinstance(expr, cst.Name) else None


def _same_binding(ctx, name: cst.Name, a: cst.CSTNode, b: cst.CSTNode) -> bool:
    first, _ = ctx.lookup(name.value, a)
    second, _ = ctx.lookup(name.value, b)
    return first is second


def _counted_index(ctx, value: cst.BaseExpression) -> Optional[cst.BaseExpression]:
    """``v`` when ``value`` is ``bincount(v)`` / ``degree(v)`` (which sum to ``v.numel()``)."""
    if not isinstance(value, cst.Call):
        return None
    resolved = ctx.resolve(value.func) or ""
    last = resolved.split(".")[-1]
    positional = [a for a in value.args if a.keyword is None]
    weighted = any(a.keyword is not None and a.keyword.value == "weights" for a in value.args)
    if resolved == "torch.bincount":
        return positional[0].value if len(positional) == 1 and not weighted else None
    if resolved.startswith("torch_geometric") and last == "degree":
        return positional[0].value if positional else None
    if isinstance(value.func, cst.Attribute) and value.func.attr.value == "bincount":
        if weighted or positional:
            return None
        return value.func.value
    return None


def _is_ptr_diff(ctx, value: cst.BaseExpression) -> bool:
    """``ptr[1:] - ptr[:-1]`` or ``ptr.diff()`` / ``torch.diff(ptr)``."""
    if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Subtract):
        left, right = value.left, value.right
        if isinstance(left, cst.Subscript) and isinstance(right, cst.Subscript):
            lname, rname = _root_name(left), _root_name(right)
            return lname is not None and rname is not None and lname.value == rname.value \
                and "ptr" in lname.value
    if isinstance(value, cst.Call):
        resolved = ctx.resolve(value.func) or ""
        if resolved == "torch.diff" and value.args:
            root = _root_name(value.args[0].value)
            return root is not None and "ptr" in root.value
        if isinstance(value.func, cst.Attribute) and value.func.attr.value == "diff":
            root = _root_name(value.func.value)
            return root is not None and "ptr" in root.value
    return False


def _known_total(ctx, repeats: cst.BaseExpression, call: cst.Call) -> Optional[str]:
    value = _resolve_value(ctx, repeats, call)
    index = _counted_index(ctx, value)
    if index is not None:
        root = _root_name(index)
        if root is not None and _same_binding(ctx, root, index, call):
            return f"{ctx.module.code_for_node(index)}.numel()"
        return None
    if _is_ptr_diff(ctx, value):
        for name, template in (("num_nodes", "{}"), ("x", "{}.size(0)"), ("batch", "{}.size(0)")):
            binding, _ = ctx.lookup(name, call)
            if binding is None:
                continue
            kind = _name_kind(ctx, name, call)
            if name == "num_nodes" and kind != TENSOR and binding.how in ("param", "assign"):
                return template.format(name)
            if name != "num_nodes" and kind == TENSOR:
                return template.format(name)
    return None


def _name_kind(ctx, name: str, at: cst.CSTNode) -> str:
    for use in ctx.name_uses(name):
        binding_at_use, _ = ctx.lookup(name, use)
        binding_at_call, _ = ctx.lookup(name, at)
        if binding_at_use is binding_at_call and binding_at_use is not None:
            return ctx.kind(use)
    return "unknown"
