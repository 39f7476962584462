"""Mini-batches from a DataLoader with two worker processes."""
import os

import torch
from torch_geometric.loader import DataLoader
from torch_geometric.nn import GraphConv, global_add_pool

from graphs import random_graph


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = GraphConv(8, 8)

    def forward(self, x, edge_index, batch):
        x = self.conv(x, edge_index)
        return global_add_pool(x, batch, size=int(batch.max()) + 1)


def main():
    graphs = [random_graph(8 + i, seed=i) for i in range(24)]
    loader = DataLoader(graphs, batch_size=6, num_workers=2)
    model = torch.compile(Net(), dynamic=True)
    total = 0.0
    for epoch in range(2):
        for batch in loader:
            total += model(batch.x, batch.edge_index, batch.batch).sum()
    print("pid", os.getpid(), "total", float(total))


if __name__ == "__main__":
    main()
