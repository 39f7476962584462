"""Full-batch GAT on a citation-style graph with lazily initialised layers.

The backbone is warmed up with one eager forward pass and then "compiled";
a lazily sized linear probe is attached afterwards and compiled in place.
Final predictions are produced by a CUDA-graph compiled copy of the backbone.
"""
import argparse

import torch
import torch.nn.functional as F

from torch_geometric.datasets import FakeDataset
from torch_geometric.nn import GATConv
from torch_geometric.transforms import Compose, NormalizeFeatures, RandomNodeSplit


class GAT(torch.nn.Module):
    def __init__(self, hidden_channels, out_channels, heads):
        super().__init__()
        self.conv1 = GATConv(-1, hidden_channels, heads, dropout=0.6)
        self.conv2 = GATConv(-1, out_channels, heads=1, concat=False, dropout=0.6)

    def forward(self, x, edge_index):
        x = F.dropout(x, p=0.6, training=self.training)
        x = F.elu(self.conv1(x, edge_index))
        x = F.dropout(x, p=0.6, training=self.training)
        return self.conv2(x, edge_index)


class Probe(torch.nn.Module):
    """Linear probe on the frozen hidden representation."""
    def __init__(self, out_channels):
        super().__init__()
        self.lin = torch.nn.LazyLinear(out_channels)

    def forward(self, h):
        return self.lin(h)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--hidden', type=int, default=8)
    parser.add_argument('--heads', type=int, default=8)
    parser.add_argument('--lr', type=float, default=0.005)
    parser.add_argument('--epochs', type=int, default=200)
    args = parser.parse_args()

    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
    transform = Compose([NormalizeFeatures(), RandomNodeSplit(num_val=500, num_test=1000)])
    dataset = FakeDataset(num_graphs=1, avg_num_nodes=3000, avg_degree=4,
                          num_channels=500, num_classes=7, task='node',
                          transform=transform)
    data = dataset[0].to(device)

    model = GAT(args.hidden, dataset.num_classes, args.heads).to(device)
    with torch.no_grad():  # materialise the lazy GATConv weights
        model(data.x, data.edge_index)
    torch.compile(model)

    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr, weight_decay=5e-4)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=50, gamma=0.5)

    for epoch in range(1, args.epochs + 1):
        model.train()
        optimizer.zero_grad()
        out = model(data.x, data.edge_index)
        loss = F.cross_entropy(out[data.train_mask], data.y[data.train_mask])
        loss.backward()
        optimizer.step()
        scheduler.step()
        if epoch % 20 == 0:
            print(f'Epoch {epoch:03d}, lr {scheduler.get_last_lr()[0]:.5f}')

    # Linear probe on the first-layer representation of the trained backbone.
    model.eval()
    with torch.no_grad():
        hidden = F.elu(model.conv1(data.x, data.edge_index))
    probe = Probe(dataset.num_classes).to(device)
    probe.compile()
    probe_opt = torch.optim.Adam(probe.parameters(), lr=0.01)
    for _ in range(100):
        probe_opt.zero_grad()
        logits = probe(hidden)
        F.cross_entropy(logits[data.train_mask], data.y[data.train_mask]).backward()
        probe_opt.step()

    infer = torch.compile(model, mode='reduce-overhead')
    with torch.no_grad():
        pred = infer(data.x, data.edge_index).argmax(dim=-1)
        probe_pred = probe(hidden).argmax(dim=-1)
    mask = data.test_mask
    acc = (pred[mask] == data.y[mask]).float().mean()
    probe_acc = (probe_pred[mask] == data.y[mask]).float().mean()
    print(f'GAT test acc {acc:.4f} | probe test acc {probe_acc:.4f}')


if __name__ == '__main__':
    main()
