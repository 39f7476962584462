"""Full-batch node classification with argparse and a main guard."""
import argparse
import json

import torch
import torch.nn.functional as F
from torch_geometric.nn import SAGEConv

from graphs import random_graph


class Net(torch.nn.Module):
    def __init__(self, in_channels, hidden, out_channels):
        super().__init__()
        self.conv1 = SAGEConv(in_channels, hidden)
        self.conv2 = SAGEConv(hidden, out_channels)

    def forward(self, x, edge_index):
        x = self.conv1(x, edge_index).relu()
        scale = x.abs().max().item()
        return self.conv2(x / scale, edge_index)


def evaluate(model, data):
    model.eval()
    with torch.no_grad():
        pred = model(data.x, data.edge_index).argmax(-1)
    return int((pred == data.y).sum()) / data.num_nodes


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--hidden", type=int, default=16)
    parser.add_argument("--report", default="")
    parser.add_argument("--debug", action="store_true")
    args = parser.parse_args()

    data = random_graph(64)
    model = torch.compile(Net(8, args.hidden, 3))
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    losses = []
    for epoch in range(args.epochs):
        model.train()
        optimizer.zero_grad()
        out = model(data.x, data.edge_index)
        loss = F.cross_entropy(out, data.y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        if args.debug:
            print("max logit:", out.max().item())
    acc = evaluate(model, data)
    if args.report:
        with open(args.report, "w") as f:
            json.dump({"argv_epochs": args.epochs, "losses": len(losses), "acc": acc,
                       "file": __file__, "name": __name__}, f)


if __name__ == "__main__":
    main()
