"""Shared data helpers, imported as a sibling module (sys.path[0] is the script's dir)."""
import torch
from torch_geometric.data import Data


def random_graph(num_nodes, num_features=8, num_classes=3, seed=0):
    g = torch.Generator().manual_seed(seed + num_nodes)
    edge_index = torch.randint(0, num_nodes, (2, num_nodes * 3), generator=g)
    x = torch.randn(num_nodes, num_features, generator=g)
    y = torch.randint(0, num_classes, (num_nodes,), generator=g)
    return Data(x=x, edge_index=edge_index, y=y)
