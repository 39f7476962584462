"""E23: does a boolean-mask *assignment* (`x[mask] = value`) break the graph like a boolean-mask read?
(GNN008; heldout3 label ADiT `radius_graph_utils.py:307` `distance_sort[~is_included.T] = np.inf`,
and labeller G's policy call "masked scalar assignment keeps the shape: false")

`x[mask]` (a read) has a data-dependent size: dynamo lowers it to `aten.nonzero` and breaks the graph
(unless `capture_dynamic_output_shape_ops`). `x[mask] = scalar` is `index_put_` with a boolean mask:
the result has `x`'s shape, so it traces as a masked fill, without a break.

Measured here (backend="eager", CPU): graph breaks over three sizes, and whether `fullgraph=True`
compiles each function.

Run: python bench/evidence/e23_boolean_mask_assignment.py  Output: out/e23_boolean_mask_assignment.txt
"""
import torch
import torch._dynamo
from torch._dynamo.utils import counters


def assign(x, mask):
    x = x.clone()
    x[mask] = float("inf")
    return x * 2


def assign_tensor(x, mask, value):
    # a tensor value sized by the mask, made outside (`full[mask] = embed`, neural-graphs
    # dynamic_graph_constructor.py:260, where `embed` has one row per selected position)
    x = x.clone()
    x[mask] = value
    return x * 2


def read(x, mask):
    return x[mask] * 2


def inputs(fn, n):
    x = torch.randn(n)
    mask = x > 0
    return (x, mask, torch.ones(int(mask.sum()))) if fn is assign_tensor else (x, mask)


for fn in (assign, assign_tensor, read):
    torch._dynamo.reset()
    counters.clear()
    compiled = torch.compile(fn, backend="eager")
    for n in (5, 7, 9):
        compiled(*inputs(fn, n))
    breaks = sum(counters["graph_break"].values())
    torch._dynamo.reset()
    try:
        torch.compile(fn, backend="eager", fullgraph=True)(*inputs(fn, 6))
        full = "compiles"
    except Exception as exc:  # noqa: BLE001 - report what dynamo raised
        full = f"fails ({type(exc).__name__})"
    print(f"{fn.__name__}: graph breaks over 3 sizes = {breaks}; fullgraph=True {full}")
