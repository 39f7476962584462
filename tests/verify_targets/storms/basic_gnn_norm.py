"""verify target (run as a script): PyG's GraphSAGE with a graph-level norm,
compiled and called with `batch` but without `batch_size=` (GNN009: the
GraphNorm layers infer the number of graphs inside the model's layer loop,
so the model's whole forward is skipped and runs eagerly), then the same
model called with `batch_size=` (compiles)."""
import torch

from torch_geometric.nn.models import GraphSAGE


def make_batch(num_graphs, nodes_per_graph=10, channels=8):
    n = num_graphs * nodes_per_graph
    x = torch.randn(n, channels)
    edge_index = torch.randint(0, nodes_per_graph, (2, 3 * n))
    edge_index += (torch.arange(3 * n) // (3 * nodes_per_graph)) * nodes_per_graph
    batch = torch.arange(num_graphs).repeat_interleave(nodes_per_graph)
    return x, edge_index, batch


torch.manual_seed(0)
model = torch.compile(GraphSAGE(8, 16, 2, norm="graph_norm"))
sized = torch.compile(GraphSAGE(8, 16, 2, norm="graph_norm"))
for num_graphs in (2, 3, 4):
    x, edge_index, batch = make_batch(num_graphs)
    out = model(x, edge_index, batch=batch)
    out = sized(x, edge_index, batch=batch, batch_size=num_graphs)
