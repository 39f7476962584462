"""Train the top-k pooling classifier.  python -m pkg_f.train"""
import argparse

import torch
import torch.nn.functional as F
from torch.nn import Linear

import torch_geometric.transforms as T
from torch_geometric.datasets import FakeDataset
from torch_geometric.loader import DataLoader
from torch_geometric.nn import GCNConv, GraphConv, global_mean_pool
from torch_geometric.typing import SparseTensor

from .layers import AttnReadout, MaxMeanReadout, ScoreTopK, ThresholdSelect


class TopKNet(torch.nn.Module):
    def __init__(self, in_channels, hidden, num_classes, max_nodes):
        super().__init__()
        self.max_nodes = max_nodes
        self.conv1 = GraphConv(in_channels, hidden)
        self.pool1 = ScoreTopK(hidden, ratio=0.5)
        self.conv2 = GraphConv(hidden, hidden)
        self.pool2 = ScoreTopK(hidden, ratio=0.5)
        self.read1 = AttnReadout(hidden)
        self.read2 = MaxMeanReadout()
        self.lin = Linear(3 * hidden, num_classes)

    def forward(self, x, adj_t, edge_index, batch, num_graphs):
        x = self.conv1(x, adj_t).relu()
        x, edge_index, batch, _ = self.pool1(x, edge_index, batch, num_graphs, self.max_nodes)
        r1 = self.read1(x, batch, num_graphs)
        x = self.conv2(x, edge_index).relu()
        x, edge_index, batch, _ = self.pool2(x, edge_index, batch, num_graphs, self.max_nodes)
        r2 = self.read2(x, batch)
        if not torch.compiler.is_compiling():
            self.kept_per_graph = torch.unique(batch, return_counts=True)[1]
        return self.lin(torch.cat([r1, r2], dim=-1))


class SparseGCNBaseline(torch.nn.Module):
    def __init__(self, in_channels, hidden, num_classes):
        super().__init__()
        self.conv1 = GCNConv(in_channels, hidden)
        self.conv2 = GCNConv(hidden, hidden)
        self.lin = Linear(hidden, num_classes)

    def forward(self, x, adj_t, batch):
        x = self.conv2(self.conv1(x, adj_t).relu(), adj_t).relu()
        return self.lin(global_mean_pool(x, batch))


def to_adj_t(edge_index, num_nodes):
    return SparseTensor(row=edge_index[1], col=edge_index[0],
                        sparse_sizes=(num_nodes, num_nodes))


@torch.no_grad()
def analyse_selection(model, loader):
    data = next(iter(loader))
    h = model.conv1(data.x, data.edge_index).relu()
    selector = ThresholdSelect(h.size(-1), min_score=0.02)
    _, _, _, graphs_left = selector(h, data.edge_index, data.batch)
    _, _, _, perm = model.pool1(h, data.edge_index, data.batch, data.num_graphs, model.max_nodes)
    low = h.norm(dim=-1) < h.norm(dim=-1).median()
    print(f'threshold keeps {graphs_left.numel()}/{data.num_graphs} graphs; '
          f'top-k keeps {perm.numel()} nodes, {int(low[perm].sum())} of them low-norm')


def baseline_accuracy(dataset, epochs=20):
    sparse_set = FakeDataset(num_graphs=len(dataset), avg_num_nodes=20, num_channels=16,
                             num_classes=2, task='graph', transform=T.ToSparseTensor())
    model = SparseGCNBaseline(16, 32, 2)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    loader = DataLoader(sparse_set, batch_size=64, shuffle=True)
    for _ in range(epochs):
        for data in loader:
            opt.zero_grad()
            F.cross_entropy(model(data.x, data.adj_t, data.batch), data.y).backward()
            opt.step()
    return model


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--epochs', type=int, default=50)
    parser.add_argument('--batch_size', type=int, default=64)
    args = parser.parse_args()

    dataset = FakeDataset(num_graphs=1000, avg_num_nodes=20, num_channels=16,
                          num_classes=2, task='graph')
    max_nodes = max(d.num_nodes for d in dataset)
    train_loader = DataLoader(dataset[:800], batch_size=args.batch_size, shuffle=True)
    test_loader = DataLoader(dataset[800:], batch_size=args.batch_size)

    model = TopKNet(16, 64, 2, max_nodes)
    compiled = torch.compile(model, dynamic=True)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(1, args.epochs + 1):
        compiled.train()
        for data in train_loader:
            optimizer.zero_grad()
            adj_t = to_adj_t(data.edge_index, data.num_nodes)
            out = compiled(data.x, adj_t, data.edge_index, data.batch, data.num_graphs)
            F.cross_entropy(out, data.y).backward()
            optimizer.step()

    compiled.eval()
    correct = 0
    with torch.no_grad():
        for data in test_loader:
            adj_t = to_adj_t(data.edge_index, data.num_nodes)
            pred = compiled(data.x, adj_t, data.edge_index, data.batch, data.num_graphs).argmax(-1)
            correct += int((pred == data.y).sum())
    print(f'test acc {correct / 200:.4f}')
    analyse_selection(model, test_loader)
    baseline_accuracy(dataset)


if __name__ == '__main__':
    main()
