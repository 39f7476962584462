"""Node classification on a large synthetic graph with Cluster-GCN
(ClusterData + ClusterLoader) or GraphSAINT random-walk subgraphs, full-graph
validation, then layer-wise CPU inference for the final predictions."""
import argparse

import torch
import torch.nn.functional as F

import torch_geometric.transforms as T
from torch_geometric.datasets import FakeDataset
from torch_geometric.loader import ClusterData, ClusterLoader, GraphSAINTRandomWalkSampler
from torch_geometric.nn import GraphConv
from torch_geometric.typing import SparseTensor
from torch_geometric.utils import degree, to_torch_csr_tensor


class Net(torch.nn.Module):
    def __init__(self, in_channels, hidden, out_channels, num_layers=3, dropout=0.3):
        super().__init__()
        dims = [in_channels] + [hidden] * (num_layers - 1) + [out_channels]
        self.convs = torch.nn.ModuleList(GraphConv(a, b) for a, b in zip(dims[:-1], dims[1:]))
        self.dropout = dropout

    def forward(self, x, edge_index, edge_weight=None):
        for i, conv in enumerate(self.convs):
            x = conv(x, edge_index, edge_weight)
            if i < len(self.convs) - 1:
                x = F.dropout(x.relu(), p=self.dropout, training=self.training)
        return x

    @torch.no_grad()
    def inference(self, x, adj_t, chunk=100_000):
        for i, conv in enumerate(self.convs):
            x = conv(x, adj_t)
            if i < len(self.convs) - 1:
                x = x.relu()
        return x


def add_structural_features(data):
    deg = degree(data.edge_index[1], dtype=torch.float)
    adj = to_torch_csr_tensor(data.edge_index, size=(data.num_nodes, data.num_nodes))
    two_hop = adj @ (adj @ data.x) / deg.clamp(min=1).pow(2).unsqueeze(-1)
    data.x = torch.cat([data.x, two_hop, deg.log1p().unsqueeze(-1)], dim=-1)
    return data


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--sampler', choices=['cluster', 'saint'], default='cluster')
    parser.add_argument('--num_parts', type=int, default=400)
    parser.add_argument('--epochs', type=int, default=20)
    args = parser.parse_args()

    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
    data = FakeDataset(num_graphs=1, avg_num_nodes=150_000, avg_degree=12,
                       num_channels=32, num_classes=10, task='node')[0]
    data.train_mask = torch.rand(data.num_nodes) < 0.6
    data = add_structural_features(data)
    in_channels = data.num_features

    if args.sampler == 'cluster':
        cluster_data = ClusterData(data, num_parts=args.num_parts)
        loader = ClusterLoader(cluster_data, batch_size=20, shuffle=True, num_workers=4)
        model = torch.compile(Net(in_channels, 256, 10).to(device))
    else:
        data.edge_weight = torch.ones(data.num_edges)
        loader = GraphSAINTRandomWalkSampler(data, batch_size=6000, walk_length=2,
                                             num_steps=30, sample_coverage=100)
        model = torch.compile(Net(in_channels, 256, 10).to(device))
    optimizer = torch.optim.Adam(model.parameters(), lr=0.005)

    val_data = T.ToSparseTensor()(data.clone()).to(device)

    for epoch in range(args.epochs):
        model.train()
        for batch in loader:
            batch = batch.to(device)
            optimizer.zero_grad()
            if args.sampler == 'cluster':
                out = model(batch.x, batch.edge_index)
                loss = F.cross_entropy(out[batch.train_mask], batch.y[batch.train_mask])
            else:
                edge_weight = batch.edge_norm * batch.edge_weight
                torch._dynamo.mark_dynamic(batch.x, 0)
                torch._dynamo.mark_dynamic(batch.edge_index, 1)
                torch._dynamo.mark_dynamic(edge_weight, 0)
                out = model(batch.x, batch.edge_index, edge_weight)
                loss = F.nll_loss(out.log_softmax(-1), batch.y, reduction='none')
                loss = (loss * batch.node_norm)[batch.train_mask].sum()
            loss.backward()
            optimizer.step()

        model.eval()
        with torch.no_grad():
            pred = model(val_data.x, val_data.adj_t).argmax(-1)
            val_acc = (pred == val_data.y)[~val_data.train_mask].float().mean()
        print(f'epoch {epoch:02d} val acc {val_acc:.4f}')

    cpu_model = model.to('cpu')
    adj_t = SparseTensor(row=data.edge_index[1], col=data.edge_index[0],
                         sparse_sizes=(data.num_nodes, data.num_nodes))
    final = cpu_model.inference(data.x, adj_t)
    torch.save(final.argmax(-1), 'predictions.pt')


if __name__ == '__main__':
    main()
