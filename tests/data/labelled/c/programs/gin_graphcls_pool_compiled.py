"""Graph classification with a GIN encoder (compiled, dynamic shapes) and an
eager "bag of node features" baseline trained on the same mini-batches.

    python gin_graphcls_pool_compiled.py --epochs 30
"""
import argparse

import torch
import torch.nn.functional as F

from torch_geometric.datasets import FakeDataset
from torch_geometric.loader import DataLoader
from torch_geometric.nn import GINConv, global_add_pool, global_max_pool, global_mean_pool
from torch_geometric.utils import degree


def add_degree_features(dataset, max_degree=16):
    out = []
    for data in dataset:
        deg = degree(data.edge_index[1], num_nodes=data.num_nodes).clamp(max=max_degree).long()
        data.x = torch.cat([data.x, F.one_hot(deg, max_degree + 1).float()], dim=-1)
        out.append(data)
    return out


class GIN(torch.nn.Module):
    def __init__(self, in_channels, hidden, out_channels, num_layers=4):
        super().__init__()
        self.convs = torch.nn.ModuleList()
        for i in range(num_layers):
            mlp = torch.nn.Sequential(
                torch.nn.Linear(in_channels if i == 0 else hidden, hidden),
                torch.nn.BatchNorm1d(hidden), torch.nn.ReLU(),
                torch.nn.Linear(hidden, hidden))
            self.convs.append(GINConv(mlp, train_eps=True))
        self.lin1 = torch.nn.Linear(3 * hidden, hidden)
        self.lin2 = torch.nn.Linear(hidden, out_channels)
        self.last_graph_norm = None

    def forward(self, x, edge_index, batch, num_graphs):
        for conv in self.convs:
            x = conv(x, edge_index).relu()
        x_sum = global_add_pool(x, batch, num_graphs)
        x_mean = global_mean_pool(x, batch, size=num_graphs)
        x_max = global_max_pool(x, batch)
        if not torch.compiler.is_compiling():
            norms = x.norm(dim=-1, keepdim=True)
            self.last_graph_norm = global_mean_pool(norms, batch).detach()
        h = torch.cat([x_sum, x_mean, x_max], dim=-1)
        h = F.dropout(self.lin1(h).relu(), p=0.5, training=self.training)
        return self.lin2(h)

    @torch.no_grad()
    def embed(self, x, edge_index, batch):
        for conv in self.convs:
            x = conv(x, edge_index).relu()
        return global_mean_pool(x, batch)


class PooledMLP(torch.nn.Module):
    """Eager baseline: ignores edges, pools raw node features."""

    def __init__(self, in_channels, hidden, out_channels):
        super().__init__()
        self.mlp = torch.nn.Sequential(torch.nn.Linear(2 * in_channels, hidden),
                                       torch.nn.ReLU(), torch.nn.Linear(hidden, out_channels))

    def forward(self, x, batch):
        return self.mlp(torch.cat([global_mean_pool(x, batch),
                                   global_max_pool(x, batch)], dim=-1))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--epochs', type=int, default=30)
    parser.add_argument('--batch_size', type=int, default=64)
    parser.add_argument('--hidden', type=int, default=64)
    args = parser.parse_args()

    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
    dataset = FakeDataset(num_graphs=2000, avg_num_nodes=24, avg_degree=3,
                          num_channels=8, num_classes=4, task='graph')
    graphs = add_degree_features(dataset)
    in_channels = graphs[0].x.size(-1)
    train_loader = DataLoader(graphs[:1600], batch_size=args.batch_size, shuffle=True)
    test_loader = DataLoader(graphs[1600:], batch_size=256)

    model = torch.compile(GIN(in_channels, args.hidden, 4).to(device), dynamic=True)
    baseline = PooledMLP(in_channels, args.hidden, 4).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    base_optimizer = torch.optim.Adam(baseline.parameters(), lr=1e-3)

    for epoch in range(1, args.epochs + 1):
        model.train()
        total_loss = torch.zeros((), device=device)
        for data in train_loader:
            data = data.to(device)
            optimizer.zero_grad()
            out = model(data.x, data.edge_index, data.batch, data.num_graphs)
            loss = F.cross_entropy(out, data.y)
            loss.backward()
            optimizer.step()
            total_loss += loss.detach() * data.num_graphs

            base_optimizer.zero_grad()
            base_loss = F.cross_entropy(baseline(data.x, data.batch), data.y)
            base_loss.backward()
            base_optimizer.step()
        print(f'epoch {epoch:03d} loss {total_loss.item() / 1600:.4f}')

    model.eval()
    correct = torch.zeros((), device=device)
    embeddings, sizes = [], []
    for data in test_loader:
        data = data.to(device)
        with torch.no_grad():
            correct += (model(data.x, data.edge_index, data.batch,
                              data.num_graphs).argmax(-1) == data.y).sum()
        embeddings.append(model.embed(data.x, data.edge_index, data.batch))
        sizes.append(degree(data.batch))
    print(f'test acc {correct.item() / 400:.4f}')
    emb = torch.cat(embeddings)
    print('embedding spread', emb.std(dim=0).mean().item(),
          'mean graph size', torch.cat(sizes).mean().item())


def gnnlint_example():
    model = GIN(8, 16, 4, num_layers=2)
    batches = []
    for sizes in ([7, 11], [5, 9, 13], [6, 8, 10, 12]):
        n = sum(sizes)
        batch = torch.cat([torch.full((s,), i) for i, s in enumerate(sizes)])
        batches.append((torch.randn(n, 8), torch.randint(0, n, (2, 3 * n)), batch, len(sizes)))
    return model, batches


if __name__ == '__main__':
    main()
