"""Protein-function style graph classification with models assembled by
torch_geometric.nn.Sequential (GCN + JumpingKnowledge + pooling), trained on
graph DataLoader batches, optionally over a SparseTensor adjacency."""
import argparse

import torch
import torch.nn.functional as F
from torch.nn import Dropout, Linear, ReLU

import torch_geometric
import torch_geometric.transforms as T
from torch_geometric.datasets import FakeDataset
from torch_geometric.loader import DataLoader
from torch_geometric.nn import (GCNConv, JumpingKnowledge, Sequential, global_add_pool,
                                global_max_pool, global_mean_pool)


def build_jk_model(in_channels, hidden, num_classes):
    return Sequential('x, edge_index, batch', [
        (Dropout(p=0.2), 'x -> x'),
        (GCNConv(in_channels, hidden), 'x, edge_index -> x1'),
        ReLU(inplace=True),
        (GCNConv(hidden, hidden), 'x1, edge_index -> x2'),
        ReLU(inplace=True),
        (lambda x1, x2: [x1, x2], 'x1, x2 -> xs'),
        (JumpingKnowledge('cat', hidden, num_layers=2), 'xs -> x'),
        (global_mean_pool, 'x, batch -> x'),
        Linear(2 * hidden, num_classes),
    ])


def build_sized_model(in_channels, hidden, num_classes):
    return Sequential('x, edge_index, batch, num_graphs: int', [
        (GCNConv(in_channels, hidden), 'x, edge_index -> x'),
        ReLU(),
        (GCNConv(hidden, hidden), 'x, edge_index -> x'),
        ReLU(),
        (lambda x, batch, n: torch.cat([global_mean_pool(x, batch, n),
                                        global_max_pool(x, batch, size=n)], dim=-1),
         'x, batch, num_graphs -> x'),
        Linear(2 * hidden, num_classes),
    ])


class FeatureBaseline(torch.nn.Module):
    """Structure-blind baseline: pooled raw features -> MLP. Kept eager."""

    def __init__(self, in_channels, num_classes):
        super().__init__()
        self.mlp = torch.nn.Sequential(Linear(2 * in_channels, 64), ReLU(), Linear(64, num_classes))

    def forward(self, x, batch):
        pooled = torch.cat([global_mean_pool(x, batch), global_add_pool(x, batch).log1p()], -1)
        return self.mlp(pooled)


def train(model, loader, optimizer, call):
    model.train()
    for data in loader:
        optimizer.zero_grad()
        loss = F.cross_entropy(call(model, data), data.y)
        loss.backward()
        optimizer.step()


@torch.no_grad()
def accuracy(model, loader, call):
    model.eval()
    correct = sum(int((call(model, d).argmax(-1) == d.y).sum()) for d in loader)
    return correct / len(loader.dataset)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--arch', choices=['jk', 'sized'], default='jk')
    parser.add_argument('--sparse', action='store_true')
    parser.add_argument('--epochs', type=int, default=100)
    args = parser.parse_args()

    transform = T.ToSparseTensor() if args.sparse else None
    dataset = FakeDataset(num_graphs=1100, avg_num_nodes=40, num_channels=21,
                          num_classes=6, transform=transform).shuffle()
    train_loader = DataLoader(dataset[:900], batch_size=32, shuffle=True)
    test_loader = DataLoader(dataset[900:], batch_size=64)
    adj = 'adj_t' if args.sparse else 'edge_index'

    baseline = FeatureBaseline(21, 6)
    opt = torch.optim.Adam(baseline.parameters(), lr=1e-2)
    base_call = lambda m, d: m(d.x, d.batch)  # noqa: E731
    for _ in range(20):
        train(baseline, train_loader, opt, base_call)
    print(f'feature baseline: {accuracy(baseline, test_loader, base_call):.3f}')

    if args.arch == 'jk':
        model = torch.compile(build_jk_model(21, 64, 6))
        call = lambda m, d: m(d.x, d[adj], d.batch)  # noqa: E731
    else:
        model = torch_geometric.compile(build_sized_model(21, 64, 6), dynamic=True)
        call = lambda m, d: m(d.x, d[adj], d.batch, d.num_graphs)  # noqa: E731
    optimizer = torch.optim.Adam(model.parameters(), lr=5e-3)
    for epoch in range(1, args.epochs + 1):
        train(model, train_loader, optimizer, call)
        if epoch % 10 == 0:
            print(f'epoch {epoch:03d} test acc {accuracy(model, test_loader, call):.3f}')


if __name__ == '__main__':
    main()
