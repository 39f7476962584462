"""Hyper-parameter sweep over PyG's basic GNNs on a large node-classification
graph with NeighborLoader mini-batches; each config is compiled, the best one
is retrained and then evaluated full-batch and by sampled inference."""
import argparse
import copy

import torch
import torch.nn.functional as F

from torch_geometric.datasets import FakeDataset
from torch_geometric.loader import NeighborLoader
from torch_geometric.nn import GAT, GIN, GraphSAGE
from torch_geometric.utils import degree

CONFIGS = [
    dict(name='sage-128', arch=GraphSAGE, hidden=128, layers=2, kw={}),
    dict(name='sage-256', arch=GraphSAGE, hidden=256, layers=3, kw={'aggr': 'max'}),
    dict(name='gat-64x4', arch=GAT, hidden=64, layers=2, kw={'heads': 4}),
    dict(name='gin-128', arch=GIN, hidden=128, layers=3, kw={}),
]


class DegreeAugmented(torch.nn.Module):
    """Appends log in/out degree of every sampled node before the GNN."""

    def __init__(self, gnn):
        super().__init__()
        self.gnn = gnn

    def forward(self, x, edge_index):
        deg_in = degree(edge_index[1], x.size(0), dtype=x.dtype)
        deg_out = degree(edge_index[0], dtype=x.dtype)
        deg_out = F.pad(deg_out, (0, x.size(0) - deg_out.size(0)))
        x = torch.cat([x, deg_in.log1p().unsqueeze(-1), deg_out.log1p().unsqueeze(-1)], dim=-1)
        return self.gnn(x, edge_index)


def build(cfg, in_channels, num_classes):
    gnn = cfg['arch'](in_channels + 2, cfg['hidden'], cfg['layers'],
                      out_channels=num_classes, **cfg['kw'])
    return DegreeAugmented(gnn)


def train_epoch(model, loader, optimizer):
    model.train()
    for batch in loader:
        optimizer.zero_grad()
        out = model(batch.x, batch.edge_index)[:batch.batch_size]
        F.cross_entropy(out, batch.y[:batch.batch_size]).backward()
        optimizer.step()


@torch.no_grad()
def sampled_accuracy(model, loader, mark=False):
    model.eval()
    correct = torch.zeros(())
    for batch in loader:
        if mark:
            torch._dynamo.mark_dynamic(batch.x, 0)
        out = model(batch.x, batch.edge_index)[:batch.batch_size]
        correct += (out.argmax(-1) == batch.y[:batch.batch_size]).sum()
    return correct / len(loader.input_nodes)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--epochs', type=int, default=5)
    parser.add_argument('--warmup_compile', action='store_true')
    args = parser.parse_args()

    data = FakeDataset(num_graphs=1, avg_num_nodes=60_000, avg_degree=10,
                       num_channels=64, num_classes=8, task='node')[0]
    perm = torch.randperm(data.num_nodes)
    train_idx, val_idx, test_idx = perm[:40_000], perm[40_000:50_000], perm[50_000:]
    train_loader = NeighborLoader(data, [15, 10, 5], input_nodes=train_idx,
                                  batch_size=1024, shuffle=True)
    val_loader = NeighborLoader(data, [15, 10, 5], input_nodes=val_idx, batch_size=4096)
    test_loader = NeighborLoader(data, [15, 10, 5], input_nodes=test_idx, batch_size=4096)

    scores = {}
    for cfg in CONFIGS:
        model = build(cfg, data.num_features, 8)
        if args.warmup_compile:
            torch.compile(model)
        compiled = torch.compile(model, dynamic=True)
        optimizer = torch.optim.Adam(compiled.parameters(), lr=0.003)
        for _ in range(args.epochs):
            train_epoch(compiled, train_loader, optimizer)
        scores[cfg['name']] = sampled_accuracy(compiled, val_loader)

    best_name = max(scores, key=lambda k: scores[k])
    best_cfg = next(c for c in CONFIGS if c['name'] == best_name)
    best = build(best_cfg, data.num_features, 8)
    best.compile()
    optimizer = torch.optim.Adam(best.parameters(), lr=0.003)
    for _ in range(2 * args.epochs):
        train_epoch(best, train_loader, optimizer)

    full = torch.compile(copy.deepcopy(best).eval())
    with torch.no_grad():
        pred = full(data.x, data.edge_index).argmax(-1)
    full_acc = (pred[test_idx] == data.y[test_idx]).float().mean()

    sampled = torch.compile(copy.deepcopy(best))
    sampled_acc = sampled_accuracy(sampled, test_loader, mark=True)
    print(f'best={best_name} full-batch={full_acc:.4f} sampled={sampled_acc:.4f}')


if __name__ == '__main__':
    main()
