"""Trains for 10,000 steps: the call budget must stop it; its finally block still runs."""
import sys

import torch
from torch_geometric.nn import GINConv

from graphs import random_graph


class GIN(torch.nn.Module):
    def __init__(self):
        super().__init__()
        mlp = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 3))
        self.conv = GINConv(mlp)

    def forward(self, x, edge_index):
        return self.conv(x, edge_index)


def main(marker):
    data = random_graph(32)
    model = torch.compile(GIN())
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    step = 0
    try:
        for step in range(10_000):
            optimizer.zero_grad()
            loss = model(data.x, data.edge_index).square().mean()
            loss.backward()
            optimizer.step()
    except Exception:
        print("an ordinary exception handler must not swallow the budget stop")
        raise
    finally:
        with open(marker, "w") as f:
            f.write(f"finally ran after step {step}\n")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "long_train.done")
