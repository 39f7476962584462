"""Recurrent graph forecaster over a sequence of snapshots in which nodes
appear and disappear. A per-snapshot presence mask gates the graph-GRU update
and newly arrived nodes are initialised from their features."""
import argparse

import torch
import torch.nn.functional as F
from torch.nn import Linear

import torch_geometric
from torch_geometric.nn import GCNConv, global_add_pool
from torch_geometric.utils import degree, scatter, softmax, to_torch_csr_tensor


def make_snapshots(num_nodes, num_steps, gen):
    snaps = []
    present = torch.rand(num_nodes, generator=gen) < 0.5
    for _ in range(num_steps):
        present = present ^ (torch.rand(num_nodes, generator=gen) < 0.05)
        ids = present.nonzero().view(-1)
        edge_index = ids[torch.randint(0, ids.numel(), (2, 4 * ids.numel()), generator=gen)]
        x = torch.randn(num_nodes, 8, generator=gen) * present.unsqueeze(-1)
        y = scatter(x[edge_index[0]].sum(-1), edge_index[1], 0, num_nodes, 'mean')
        adj_t = to_torch_csr_tensor(edge_index.flip(0), size=(num_nodes, num_nodes))
        snaps.append(dict(x=x, edge_index=edge_index, adj_t=adj_t, present=present.clone(), y=y))
    return snaps


class GraphGRUCell(torch.nn.Module):
    def __init__(self, in_channels, hidden):
        super().__init__()
        self.conv_x = GCNConv(in_channels, 3 * hidden)
        self.conv_h = GCNConv(hidden, 3 * hidden)

    def forward(self, x, adj_t, h):
        xr, xz, xn = self.conv_x(x, adj_t).chunk(3, dim=-1)
        hr, hz, hn = self.conv_h(h, adj_t).chunk(3, dim=-1)
        r, z = torch.sigmoid(xr + hr), torch.sigmoid(xz + hz)
        n = torch.tanh(xn + r * hn)
        return (1 - z) * n + z * h


class PresenceForecaster(torch.nn.Module):
    def __init__(self, in_channels, hidden):
        super().__init__()
        self.cell = GraphGRUCell(in_channels, hidden)
        self.init = Linear(in_channels, hidden)
        self.att = Linear(hidden, 1)
        self.out = Linear(2 * hidden, 1)

    def forward(self, x, adj_t, edge_index, h, seen, present):
        arrived = torch.nonzero(present & ~seen).view(-1)
        h = h.index_copy(0, arrived, torch.tanh(self.init(x[arrived])))
        h = torch.where(present.unsqueeze(-1), self.cell(x, adj_t, h), h)
        src, dst = edge_index
        alpha = softmax(self.att(h)[src], dst)
        nbr = scatter(alpha * h[src], dst, dim=0, dim_size=h.size(0), reduce='sum')
        crow, col = adj_t.crow_indices(), adj_t.col_indices()
        row_counts = crow[1:] - crow[:-1]
        row_state = h.repeat_interleave(row_counts, dim=0)
        rows = torch.arange(h.size(0), device=h.device).repeat_interleave(
            row_counts, output_size=col.numel())
        gate = torch.sigmoid((row_state * h[col]).sum(dim=-1, keepdim=True))
        nbr = nbr + scatter(gate * h[col], rows, 0, h.size(0), 'sum')
        if not torch_geometric.is_compiling():
            departed = (seen & ~present).nonzero().view(-1)
            self.num_departed = departed.numel()
        return self.out(torch.cat([h, nbr], dim=-1)).squeeze(-1), h, seen | present


class SnapshotSummary(torch.nn.Module):
    """Attention summary of every snapshot (used for offline analysis)."""

    def __init__(self, hidden):
        super().__init__()
        self.score = Linear(hidden, 1)

    def forward(self, states, snapshot_id):
        alpha = softmax(self.score(states), snapshot_id)
        return global_add_pool(alpha * states, snapshot_id)


@torch.compile(dynamic=True)
def masked_mse(pred, target, present):
    return F.mse_loss(pred[present], target[present])


def masked_mse_eager(pred, target, present):
    return (pred - target).masked_select(present).pow(2).mean()


@torch.no_grad()
def evaluate(compiled, snaps, num_nodes, hidden):
    h, seen = torch.zeros(num_nodes, hidden), torch.zeros(num_nodes, dtype=torch.bool)
    losses, states = [], []
    for snap in snaps:
        pred, h, seen = compiled(snap['x'], snap['adj_t'], snap['edge_index'], h, seen,
                                 snap['present'])
        losses.append(masked_mse_eager(pred, snap['y'], snap['present']))
        states.append(h[snap['present']])
    counts = torch.tensor([s.size(0) for s in states])
    snapshot_id = torch.arange(len(states)).repeat_interleave(
        counts, output_size=int(counts.sum()))
    summary = SnapshotSummary(hidden)(torch.cat(states), snapshot_id)
    active = degree(torch.cat([s['edge_index'][1] for s in snaps]))
    return torch.stack(losses).mean(), summary, (active > 0).sum()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--epochs', type=int, default=20)
    parser.add_argument('--num_nodes', type=int, default=1500)
    parser.add_argument('--hidden', type=int, default=32)
    args = parser.parse_args()

    snaps = make_snapshots(args.num_nodes, 40, torch.Generator().manual_seed(0))
    train_snaps, test_snaps = snaps[:30], snaps[30:]
    model = PresenceForecaster(8, args.hidden)
    compiled = torch.compile(model, dynamic=True)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(1, args.epochs + 1):
        h = torch.zeros(args.num_nodes, args.hidden)
        seen = torch.zeros(args.num_nodes, dtype=torch.bool)
        for snap in train_snaps:
            pred, h, seen = compiled(snap['x'], snap['adj_t'], snap['edge_index'], h, seen,
                                     snap['present'])
            loss = masked_mse(pred, snap['y'], snap['present'])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            h = h.detach()
        test_loss, _, num_active = evaluate(compiled, test_snaps, args.num_nodes, args.hidden)
        print(f'epoch {epoch:02d} test mse {float(test_loss):.4f} active {int(num_active)}')


if __name__ == '__main__':
    main()
