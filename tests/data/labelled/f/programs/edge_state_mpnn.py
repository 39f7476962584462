"""Joint node/edge-state message passing for node classification on one large
graph. Edge states are refined with ``edge_updater`` before every
``propagate``; a bipartite edge->node readout is used for diagnostics only."""
import argparse

import torch
import torch.nn.functional as F
from torch.nn import Linear

from torch_geometric.datasets import FakeDataset
from torch_geometric.nn import MessagePassing
from torch_geometric.transforms import RandomNodeSplit
from torch_geometric.utils import degree, scatter, softmax, to_torch_csr_tensor


class EdgeStateConv(MessagePassing):
    def __init__(self, node_dim, edge_dim):
        super().__init__(aggr='add')
        self.edge_mlp = torch.nn.Sequential(
            Linear(2 * node_dim + edge_dim, edge_dim), torch.nn.SiLU(),
            Linear(edge_dim, edge_dim))
        self.att = Linear(edge_dim, 1)
        self.node_mlp = Linear(node_dim + edge_dim, node_dim)

    def forward(self, x, edge_index, edge_attr):
        edge_attr = self.edge_updater(edge_index, x=x, edge_attr=edge_attr)
        n = x.size(0)
        out = self.propagate(edge_index, x=x, edge_attr=edge_attr, size=(n, n))
        return self.node_mlp(torch.cat([x, out], dim=-1)), edge_attr

    def edge_update(self, x_i, x_j, edge_attr):
        return edge_attr + self.edge_mlp(torch.cat([x_i, x_j, edge_attr], dim=-1))

    def message(self, edge_attr, index, ptr, size_i):
        alpha = softmax(self.att(edge_attr), index, ptr, size_i)
        return alpha * edge_attr


class EdgeGate(torch.nn.Module):
    """Stochastic pruning of weak edges while training."""

    def __init__(self, edge_dim, threshold=0.2):
        super().__init__()
        self.lin = Linear(edge_dim, 1)
        self.threshold = threshold

    def forward(self, edge_index, edge_attr):
        score = torch.sigmoid(self.lin(edge_attr)).squeeze(-1)
        in_deg = degree(edge_index[1])
        score = score / in_deg[edge_index[1]].clamp(min=1).sqrt()
        if not self.training:
            return edge_index, edge_attr
        keep = score + 0.1 * torch.rand_like(score) > self.threshold
        return edge_index[:, keep], edge_attr[keep] * score[keep].unsqueeze(-1)


class NodeToEdgeReadout(MessagePassing):
    """Bipartite readout: sources are edges, targets are nodes."""

    def __init__(self, channels):
        super().__init__(aggr='add')
        self.att = Linear(channels, 1)

    def forward(self, edge_attr, edge_index, num_nodes):
        num_edges = edge_attr.size(0)
        e_id = torch.arange(num_edges, device=edge_attr.device)
        bipartite = torch.stack([e_id, edge_index[1]], dim=0)
        return self.propagate(bipartite, x=(edge_attr, None), size=(num_edges, num_nodes))

    def message(self, x_j, index):
        return softmax(self.att(x_j), index) * x_j


class EdgeStateNet(torch.nn.Module):
    def __init__(self, in_channels, edge_channels, hidden, out_channels, num_layers=3):
        super().__init__()
        self.node_enc = Linear(in_channels, hidden)
        self.edge_enc = Linear(edge_channels, hidden)
        self.gate = EdgeGate(hidden)
        self.convs = torch.nn.ModuleList(
            [EdgeStateConv(hidden, hidden) for _ in range(num_layers)])
        self.out = Linear(2 * hidden, out_channels)

    def forward(self, x, edge_index, edge_attr):
        x, edge_attr = self.node_enc(x), self.edge_enc(edge_attr)
        edge_index, edge_attr = self.gate(edge_index, edge_attr)
        raw_deg = degree(edge_index[1], x.size(0))
        deg = raw_deg.clamp(min=1)
        for conv in self.convs:
            h, edge_attr = conv(x, edge_index, edge_attr)
            x = x + h.relu()
        incoming = scatter(edge_attr, edge_index[1], 0, x.size(0), 'sum') / deg.unsqueeze(-1)
        if not torch.compiler.is_compiling():
            isolated = (raw_deg == 0).nonzero().view(-1)
            self.last_isolated = isolated.numel()
        return self.out(torch.cat([x, incoming], dim=-1))

    def edge_states(self, x, edge_index, edge_attr):
        x, edge_attr = self.node_enc(x), self.edge_enc(edge_attr)
        for conv in self.convs:
            h, edge_attr = conv(x, edge_index, edge_attr)
            x = x + h.relu()
        (strong,) = torch.where(edge_attr.norm(dim=-1) > 1.0)
        return edge_attr, strong


def structural_features(edge_index, num_nodes):
    adj = to_torch_csr_tensor(edge_index, size=(num_nodes, num_nodes))
    ones = torch.ones(num_nodes, 1)
    deg = torch.sparse.mm(adj, ones)
    two_hop = torch.sparse.mm(adj, deg)
    return torch.cat([deg.log1p(), two_hop.log1p()], dim=-1)


@torch.no_grad()
def diagnostics(compiled, data, hidden):
    compiled.eval()
    edge_attr, strong = compiled.edge_states(data.x, data.edge_index, data.edge_attr)
    readout = NodeToEdgeReadout(hidden)
    summary = readout(edge_attr, data.edge_index, data.num_nodes)
    per_node_max = scatter(edge_attr.norm(dim=-1), data.edge_index[1], reduce='max')
    touched = torch.unique(data.edge_index[1, strong])
    print(f'strong edges {strong.numel()} touching {touched.numel()} nodes, '
          f'readout norm {summary.norm():.3f}, max edge norm {per_node_max.max():.3f}')


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--epochs', type=int, default=100)
    parser.add_argument('--hidden', type=int, default=64)
    args = parser.parse_args()

    data = FakeDataset(num_graphs=1, avg_num_nodes=3000, avg_degree=6, num_channels=30,
                       edge_dim=8, num_classes=5, task='node',
                       transform=RandomNodeSplit(num_val=0.1, num_test=0.2))[0]
    data.x = torch.cat([data.x, structural_features(data.edge_index, data.num_nodes)], -1)

    model = EdgeStateNet(data.num_features, 8, args.hidden, 5)
    compiled = torch.compile(model, dynamic=True)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.005)
    for epoch in range(1, args.epochs + 1):
        compiled.train()
        optimizer.zero_grad()
        out = compiled(data.x, data.edge_index, data.edge_attr)
        loss = F.cross_entropy(out[data.train_mask], data.y[data.train_mask])
        loss.backward()
        optimizer.step()

    compiled.eval()
    with torch.no_grad():
        pred = compiled(data.x, data.edge_index, data.edge_attr).argmax(-1)
    test_acc = (pred[data.test_mask] == data.y[data.test_mask]).float().mean()
    print(f'test acc {test_acc:.4f}')
    diagnostics(compiled, data, args.hidden)


if __name__ == '__main__':
    main()
