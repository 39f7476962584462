"""Graph classification with a gated multi-head attention readout (softmax
over the nodes of each graph) and a graph-context vector broadcast back to the
nodes after every GIN layer. Message passing runs on a sparse ``adj_t``."""
import argparse

import torch
import torch.nn.functional as F
from torch.nn import Linear, ReLU, Sequential

import torch_geometric.transforms as T
from torch_geometric.datasets import FakeDataset
from torch_geometric.loader import DataLoader
from torch_geometric.nn import GINConv, global_add_pool, global_max_pool, global_mean_pool
from torch_geometric.utils import degree, softmax


class GatedAttentionReadout(torch.nn.Module):
    def __init__(self, channels, heads=4):
        super().__init__()
        self.gate = Linear(channels, heads)
        self.value = Linear(channels, channels)
        self.heads = heads

    def forward(self, x, batch, num_graphs):
        alpha = softmax(self.gate(x), batch, num_nodes=num_graphs)
        v = self.value(x).view(-1, self.heads, x.size(-1) // self.heads)
        out = global_add_pool((alpha.unsqueeze(-1) * v).flatten(1), batch, num_graphs)
        if not torch.compiler.is_compiling():
            peaked = alpha.max(dim=-1).values > 0.9
            self.num_peaked = x[peaked].size(0)
        return out


class ScoreMaxReadout(torch.nn.Module):
    """Soft-attention weighted max readout (auxiliary head)."""

    def __init__(self, channels):
        super().__init__()
        self.score = Linear(channels, 1)

    def forward(self, x, batch):
        alpha = softmax(self.score(x), batch)
        return global_max_pool(x * alpha, batch)


class AttnGraphClassifier(torch.nn.Module):
    def __init__(self, in_channels, hidden, num_classes, num_layers=3):
        super().__init__()
        self.enc = Linear(in_channels, hidden)
        self.convs = torch.nn.ModuleList([
            GINConv(Sequential(Linear(hidden, hidden), ReLU(), Linear(hidden, hidden)))
            for _ in range(num_layers)])
        self.ctx = Linear(hidden, hidden)
        self.readout = GatedAttentionReadout(hidden)
        self.aux = ScoreMaxReadout(hidden)
        self.head = Linear(2 * hidden, num_classes)

    def forward(self, x, adj_t, batch, ptr, num_graphs):
        counts = ptr[1:] - ptr[:-1]
        h = self.enc(x)
        size_norm = counts.repeat_interleave(counts).float().sqrt().unsqueeze(-1)
        for i, conv in enumerate(self.convs):
            h = conv(h, adj_t).relu()
            g = self.ctx(global_mean_pool(h, batch, size=num_graphs))
            if i == 0:
                h = h + g.repeat_interleave(counts, dim=0, output_size=ptr[-1])
            else:
                h = h + torch.repeat_interleave(g, counts, dim=0, output_size=h.size(0))
        h = h / size_norm
        out = torch.cat([self.readout(h, batch, num_graphs), self.aux(h, batch)], dim=-1)
        return self.head(out)

    def node_embeddings(self, x, adj_t):
        h = self.enc(x)
        for conv in self.convs:
            h = conv(h, adj_t).relu()
        return h


def size_report(dataset):
    full = next(iter(DataLoader(dataset, batch_size=len(dataset))))
    sizes = degree(full.batch)
    rebuilt = torch.arange(sizes.numel()).repeat_interleave(sizes.long())
    assert torch.equal(rebuilt, full.batch)
    large = sizes[sizes > sizes.mean()]
    nodes = global_add_pool(torch.ones(full.num_nodes, 1), full.batch).squeeze(-1)
    print(f'{sizes.numel()} graphs, {large.numel()} above mean size, '
          f'mean nodes {nodes.mean():.1f}')


@torch.no_grad()
def attention_maps(compiled, data):
    h = compiled.node_embeddings(data.x, data.adj_t)
    alpha = softmax(compiled.readout.gate(h), data.batch)
    first_graph = alpha[data.batch == 0]
    return first_graph.mean(dim=-1)


@torch.no_grad()
def evaluate(compiled, loader):
    compiled.eval()
    correct = torch.zeros(())
    total = 0
    for data in loader:
        out = compiled(data.x, data.adj_t, data.batch, data.ptr, data.num_graphs)
        correct += (out.argmax(-1) == data.y).sum()
        total += data.num_graphs
    return correct / total


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--epochs', type=int, default=60)
    parser.add_argument('--batch_size', type=int, default=64)
    args = parser.parse_args()

    dataset = FakeDataset(num_graphs=800, avg_num_nodes=24, avg_degree=4, num_channels=12,
                          num_classes=3, task='graph', transform=T.ToSparseTensor())
    size_report(dataset)
    train_loader = DataLoader(dataset[:600], batch_size=args.batch_size, shuffle=True)
    test_loader = DataLoader(dataset[600:], batch_size=args.batch_size)

    model = AttnGraphClassifier(12, 64, 3)
    compiled = torch.compile(model, dynamic=True)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(1, args.epochs + 1):
        compiled.train()
        for data in train_loader:
            optimizer.zero_grad()
            out = compiled(data.x, data.adj_t, data.batch, data.ptr, data.num_graphs)
            F.cross_entropy(out, data.y).backward()
            optimizer.step()
        if epoch % 10 == 0:
            print(f'epoch {epoch:03d} test acc {evaluate(compiled, test_loader):.4f}')

    sample = next(iter(test_loader))
    print('attention on first test graph:', attention_maps(compiled, sample))


if __name__ == '__main__':
    main()
