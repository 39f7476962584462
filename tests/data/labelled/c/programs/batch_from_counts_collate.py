"""Graph regression with a hand-rolled collate function: graphs are stored as
(x, edge_index, y) tuples and concatenated manually, the batch vector is
rebuilt from per-graph node counts.  The model is compiled with dynamic=True
and mixes message passing with a dense set-attention block."""
import argparse
import random

import torch
import torch.nn.functional as F

from torch_geometric.nn import GraphConv
from torch_geometric.utils import scatter, to_dense_batch


def make_graphs(num_graphs, seed=0):
    rng = random.Random(seed)
    graphs = []
    for _ in range(num_graphs):
        n = rng.randint(5, 48)
        edge_index = torch.randint(0, n, (2, rng.randint(n, 4 * n)))
        graphs.append((torch.randn(n, 12), edge_index, torch.randn(1)))
    return graphs


def collate(samples):
    xs, edge_indices, ys = zip(*samples)
    counts = torch.tensor([x.size(0) for x in xs])
    edge_counts = torch.tensor([e.size(1) for e in edge_indices])
    total_edges = sum(e.size(1) for e in edge_indices)
    ptr = torch.cat([counts.new_zeros(1), counts.cumsum(0)])
    offsets = ptr[:-1].repeat_interleave(edge_counts, output_size=total_edges)
    edge_index = torch.cat(edge_indices, dim=1) + offsets
    batch = torch.arange(len(samples)).repeat_interleave(counts)
    return torch.cat(xs), edge_index, batch, counts, torch.cat(ys)


class SetGraphRegressor(torch.nn.Module):
    def __init__(self, in_channels, hidden, max_nodes=48, heads=4):
        super().__init__()
        self.max_nodes = max_nodes
        self.conv1 = GraphConv(in_channels, hidden)
        self.conv2 = GraphConv(hidden, hidden)
        self.ctx = torch.nn.Linear(hidden, hidden)
        self.slot = torch.nn.Parameter(torch.randn(heads, hidden // heads))
        self.attn = torch.nn.MultiheadAttention(hidden, heads, batch_first=True)
        self.out = torch.nn.Linear(3 * hidden, 1)

    def forward(self, x, edge_index, counts, num_graphs):
        batch = torch.arange(num_graphs, device=x.device).repeat_interleave(
            counts, output_size=x.size(0))
        h = self.conv1(x, edge_index).relu()
        g = scatter(h, batch, dim=0, dim_size=num_graphs, reduce='mean')
        h = h + self.ctx(g).repeat_interleave(counts, dim=0)
        h = self.conv2(h, edge_index).relu()

        dense, mask = to_dense_batch(h, batch, max_num_nodes=self.max_nodes,
                                     batch_size=num_graphs)
        query = self.slot.reshape(1, 1, -1).expand(num_graphs, 1, -1)
        pooled, _ = self.attn(query, dense, dense, key_padding_mask=~mask)

        g_max = scatter(h, batch, dim=0, reduce='max')
        g_sum = g.repeat_interleave(counts, dim=0, output_size=counts.sum())
        g_sum = scatter(g_sum * h, batch, dim=0, dim_size=num_graphs, reduce='sum')
        return self.out(torch.cat([pooled.squeeze(1), g_max, g_sum], dim=-1)).squeeze(-1)


def node_saliency(model, x, edge_index, counts, num_graphs):
    """Eager: gradient of each graph's prediction w.r.t. its node features."""
    x = x.clone().requires_grad_(True)
    model(x, edge_index, counts, num_graphs).sum().backward()
    sal = x.grad.norm(dim=-1)
    batch = torch.arange(num_graphs).repeat_interleave(counts)
    dense, _ = to_dense_batch(sal, batch)
    return dense


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--epochs', type=int, default=40)
    parser.add_argument('--batch_size', type=int, default=32)
    args = parser.parse_args()

    graphs = make_graphs(1024)
    loader = torch.utils.data.DataLoader(graphs, batch_size=args.batch_size,
                                         shuffle=True, collate_fn=collate)
    eager_model = SetGraphRegressor(12, 64)
    model = torch.compile(eager_model, dynamic=True)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)

    for epoch in range(args.epochs):
        running = []
        for x, edge_index, batch, counts, y in loader:
            optimizer.zero_grad()
            pred = model(x, edge_index, counts, counts.numel())
            loss = F.mse_loss(pred, y)
            loss.backward()
            optimizer.step()
            running.append(loss.detach())
        print(f'epoch {epoch:02d} mse {torch.stack(running).mean().item():.4f}')

    x, edge_index, batch, counts, y = collate(graphs[:8])
    sal = node_saliency(eager_model, x, edge_index, counts, 8)
    print('saliency per graph', sal.sum(dim=-1))


def gnnlint_example():
    model = SetGraphRegressor(12, 16)
    inputs = []
    for k in (3, 5, 7):
        x, edge_index, _, counts, _ = collate(make_graphs(k, seed=k))
        inputs.append((x, edge_index, counts, k))
    return model, inputs


if __name__ == '__main__':
    main()
