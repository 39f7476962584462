"""Hierarchical graph classification with DiffPool. Sparse mini-batches from
the DataLoader are densified inside the model (to_dense_batch / to_dense_adj);
a sparse skip readout keeps the node-level view."""
import argparse

import torch
import torch.nn.functional as F
from torch.nn import Linear

from torch_geometric.datasets import FakeDataset
from torch_geometric.loader import DataLoader
from torch_geometric.nn import DenseSAGEConv, dense_diff_pool, global_mean_pool
from torch_geometric.utils import degree, to_dense_adj, to_dense_batch


class DenseGNN(torch.nn.Module):
    def __init__(self, in_channels, hidden, out_channels):
        super().__init__()
        self.conv1 = DenseSAGEConv(in_channels, hidden)
        self.conv2 = DenseSAGEConv(hidden, out_channels)

    def forward(self, x, adj, mask=None):
        x = self.conv1(x, adj, mask).relu()
        return self.conv2(x, adj, mask)


class DiffPoolNet(torch.nn.Module):
    def __init__(self, in_channels, hidden, num_classes, max_nodes, clusters=(12, 3)):
        super().__init__()
        self.max_nodes = max_nodes
        self.pool1 = DenseGNN(in_channels, hidden, clusters[0])
        self.embed1 = DenseGNN(in_channels, hidden, hidden)
        self.pool2 = DenseGNN(hidden, hidden, clusters[1])
        self.embed2 = DenseGNN(hidden, hidden, hidden)
        self.lin = Linear(2 * hidden, num_classes)

    def forward(self, x, edge_index, batch, num_graphs):
        x, mask = to_dense_batch(x, batch, 0.0, self.max_nodes, num_graphs)
        adj = to_dense_adj(edge_index, batch, max_num_nodes=self.max_nodes)
        s = self.pool1(x, adj, mask)
        h = self.embed1(x, adj, mask)
        skip = global_mean_pool(h[mask], batch)
        h, adj, link1, ent1 = dense_diff_pool(h, adj, s, mask)
        s2 = self.pool2(h, adj)
        h = self.embed2(h, adj)
        h, adj, link2, ent2 = dense_diff_pool(h, adj, s2)
        out = self.lin(torch.cat([h.mean(dim=1), skip], dim=-1))
        return out, link1 + link2 + ent1 + ent2, s, mask


@torch.compile(dynamic=True)
def assignment_entropy(s, mask):
    p = s.softmax(dim=-1)
    per_node = -(p * p.clamp_min(1e-9).log()).sum(dim=-1)
    return per_node.masked_select(mask).mean()


def entropy_eager(s, mask):
    p = s.softmax(dim=-1)
    return -(p * p.clamp_min(1e-9).log()).sum(dim=-1)[mask].mean()


def dataset_max_nodes(dataset):
    full = next(iter(DataLoader(dataset, batch_size=len(dataset))))
    sizes = degree(full.batch)
    dense, _ = to_dense_batch(full.x, full.batch)
    assert dense.size(1) == int(sizes.max())
    return dense.size(1)


@torch.no_grad()
def cluster_report(model, data, max_nodes):
    model.eval()
    x, mask = to_dense_batch(data.x, data.batch, max_num_nodes=max_nodes)
    adj = to_dense_adj(data.edge_index, data.batch, max_num_nodes=max_nodes)
    s = model.pool1(x, adj, mask).softmax(dim=-1)
    assign = s.argmax(dim=-1)[mask]
    used = torch.unique(assign)
    _, coarse, _, _ = dense_diff_pool(model.embed1(x, adj, mask), adj, s, mask)
    coarse_edges = (coarse[0] > 0.05).float().to_sparse().indices()
    print(f'{used.numel()} of {s.size(-1)} clusters used, '
          f'{coarse_edges.size(1)} coarse edges in graph 0, '
          f'entropy {entropy_eager(s, mask):.3f}')


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--epochs', type=int, default=40)
    parser.add_argument('--batch_size', type=int, default=32)
    parser.add_argument('--ent_weight', type=float, default=0.05)
    args = parser.parse_args()

    dataset = FakeDataset(num_graphs=500, avg_num_nodes=30, avg_degree=5, num_channels=10,
                          num_classes=2, task='graph')
    max_nodes = dataset_max_nodes(dataset)
    loader = DataLoader(dataset[:400], batch_size=args.batch_size, shuffle=True)
    val_loader = DataLoader(dataset[400:], batch_size=args.batch_size)

    model = DiffPoolNet(10, 64, 2, max_nodes)
    compiled = torch.compile(model, dynamic=True)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(1, args.epochs + 1):
        compiled.train()
        for data in loader:
            optimizer.zero_grad()
            out, aux, s, mask = compiled(data.x, data.edge_index, data.batch, data.num_graphs)
            loss = F.cross_entropy(out, data.y) + aux
            loss = loss + args.ent_weight * assignment_entropy(s, mask)
            loss.backward()
            optimizer.step()

    compiled.eval()
    correct = 0
    with torch.no_grad():
        for data in val_loader:
            out, _, _, _ = compiled(data.x, data.edge_index, data.batch, data.num_graphs)
            correct += int((out.argmax(-1) == data.y).sum())
    print(f'val acc {correct / 100:.4f}')
    cluster_report(model, next(iter(val_loader)), max_nodes)


if __name__ == '__main__':
    main()
