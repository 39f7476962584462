"""E18: does GCNConv / SGConv / APPNP with cached=True break the graph on every call?

The independent judge (2026-11-26) found GNN014 saying "breaks the graph on every call" of PyG's
benchmark/citation/sgc.py `SGConv(..., cached=True)`. Measured with dynamo's explain (backend eager),
torch 2.13 + PyG 2.8.1: the first call breaks (gcn_norm -> add_remaining_self_loops, nonzero) as with
cached=False; once the normalisation is cached, later calls compile to one graph with 0 breaks.

Run: python bench/evidence/e18_cached_norm.py  (needs torch, torch_geometric). Output: out/e18_cached_norm.txt
"""
import torch
import torch._dynamo
from torch_geometric.nn import APPNP, GCNConv, SGConv

LAYERS = (
    lambda cached: SGConv(8, 4, cached=cached),
    lambda cached: GCNConv(8, 4, cached=cached),
    lambda cached: APPNP(2, 0.1, cached=cached),
)

if __name__ == "__main__":
    print("torch", torch.__version__)
    x, edge_index = torch.randn(10, 8), torch.randint(0, 10, (2, 30))
    for make in LAYERS:
        for cached in (False, True):
            conv = make(cached)
            torch._dynamo.reset()
            first = torch._dynamo.explain(conv)(x, edge_index)
            torch._dynamo.reset()
            later = torch._dynamo.explain(conv)(x, edge_index)  # the cache, if any, is filled now
            print(f"{type(conv).__name__:8} cached={cached!s:5} first call breaks={first.graph_break_count} "
                  f"later calls breaks={later.graph_break_count}")
