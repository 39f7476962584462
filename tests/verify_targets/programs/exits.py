"""Trains a few steps, then exits with its own status."""
import sys

import torch
from torch_geometric.nn import SAGEConv

from graphs import random_graph


def main():
    data = random_graph(24)
    model = torch.compile(SAGEConv(8, 4))
    for _ in range(3):
        out = model(data.x, data.edge_index)
        if out.isnan().any():
            print("nan!")
    sys.exit(3)


if __name__ == "__main__":
    main()
