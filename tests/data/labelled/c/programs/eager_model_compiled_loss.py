"""Per-atom property regression over many small graphs.  The GNN itself runs
eagerly (it uses a torch.sparse adjacency and dense set attention); only the
graph-balanced loss and the evaluation metric are compiled."""
import argparse

import torch
import torch.nn.functional as F

from torch_geometric.datasets import FakeDataset
from torch_geometric.loader import DataLoader
from torch_geometric.nn import global_mean_pool
from torch_geometric.utils import scatter, softmax, to_dense_batch, to_torch_csr_tensor


class SparseSetGNN(torch.nn.Module):
    def __init__(self, in_channels, hidden, heads=4):
        super().__init__()
        self.lin_in = torch.nn.Linear(in_channels, hidden)
        self.lin_hop = torch.nn.Linear(hidden, hidden)
        self.attn = torch.nn.MultiheadAttention(hidden, heads, batch_first=True)
        self.gate = torch.nn.Linear(hidden, 1)
        self.out = torch.nn.Linear(2 * hidden, 1)

    def forward(self, x, adj, batch):
        h = self.lin_in(x).relu()
        h = h + self.lin_hop(torch.sparse.mm(adj, h)).relu()
        dense, mask = to_dense_batch(h, batch)
        dense, _ = self.attn(dense, dense, dense, key_padding_mask=~mask)
        h = h + dense[mask]
        w = softmax(self.gate(h), batch)
        ctx = global_mean_pool(w * h, batch)
        return self.out(torch.cat([h, ctx[batch]], dim=-1)).squeeze(-1)


@torch.compile(dynamic=True)
def graph_balanced_loss(pred, target, batch):
    node_loss = F.smooth_l1_loss(pred, target, reduction='none')
    per_graph = scatter(node_loss, batch, dim=0, reduce='mean')
    return per_graph.mean()


def _per_graph_mae(pred, target, batch, num_graphs):
    err = (pred - target).abs()
    return scatter(err, batch, dim=0, dim_size=num_graphs, reduce='mean').sum()


per_graph_mae = torch.compile(_per_graph_mae, dynamic=True)


def batch_adjacency(data):
    return to_torch_csr_tensor(data.edge_index.flip(0), size=(data.num_nodes, data.num_nodes))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--epochs', type=int, default=25)
    parser.add_argument('--batch_size', type=int, default=32)
    args = parser.parse_args()

    dataset = FakeDataset(num_graphs=1200, avg_num_nodes=18, avg_degree=3,
                          num_channels=10, task='node')
    train_loader = DataLoader(dataset[:1000], batch_size=args.batch_size, shuffle=True)
    test_loader = DataLoader(dataset[1000:], batch_size=100)

    model = SparseSetGNN(dataset.num_features, 64)
    optimizer = torch.optim.Adam(model.parameters(), lr=2e-3)

    for epoch in range(1, args.epochs + 1):
        model.train()
        for data in train_loader:
            counts = data.ptr[1:] - data.ptr[:-1]
            target = data.y.float()
            node_w = (counts.float().mean() / counts.float()).repeat_interleave(counts)
            optimizer.zero_grad()
            pred = model(data.x, batch_adjacency(data), data.batch)
            loss = graph_balanced_loss(pred * node_w, target * node_w, data.batch)
            loss.backward()
            optimizer.step()

        model.eval()
        total, n_graphs = torch.zeros(()), 0
        with torch.no_grad():
            for data in test_loader:
                counts = data.ptr[1:] - data.ptr[:-1]
                graph_id = torch.arange(data.num_graphs).repeat_interleave(
                    counts, output_size=data.num_nodes)
                pred = model(data.x, batch_adjacency(data), graph_id)
                total += per_graph_mae(pred, data.y.float(), graph_id, data.num_graphs)
                n_graphs += data.num_graphs
        print(f'epoch {epoch:02d} test per-graph MAE {total.item() / n_graphs:.4f}')


if __name__ == '__main__':
    main()
