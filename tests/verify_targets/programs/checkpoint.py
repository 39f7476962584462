"""Trains, then writes a checkpoint of the compiled model's original module,
and one of the wrapper (GNN018: its keys start with `_orig_mod.`)."""
import os
import sys

import torch
from torch_geometric.nn import GATConv

from graphs import random_graph


def main(path):
    data = random_graph(20)
    net = GATConv(8, 4, heads=2, add_self_loops=False)
    model = torch.compile(net)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(3):
        optimizer.zero_grad()
        model(data.x, data.edge_index).sum().backward()
        optimizer.step()
    tmp = path + ".tmp"
    torch.save(net.state_dict(), tmp)
    os.replace(tmp, path)
    torch.save(model.state_dict(), path + ".wrapped")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "model.pt")
