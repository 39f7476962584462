"""Train pkg_z.GraphClassifier with torch.compile.

    python -m pkg_z.train --epochs 20
"""
import argparse

import torch
import torch._dynamo
import torch.nn.functional as F

from torch_geometric.datasets import FakeDataset
from torch_geometric.loader import DataLoader
from torch_geometric.utils import degree, to_torch_coo_tensor

from .models import GraphClassifier

# Every new batch shape used to trigger a recompile warning; silence it.
torch._dynamo.config.cache_size_limit = 32


def add_structural_features(dataset):
    """Eager preprocessing: node degree and number of distinct 2-hop neighbours."""
    out = []
    for data in dataset:
        adj = to_torch_coo_tensor(data.edge_index, size=data.num_nodes)
        two_hop = torch.sparse.mm(adj, adj).to_dense().gt(0).sum(dim=-1, keepdim=True)
        deg = degree(data.edge_index[0], data.num_nodes).unsqueeze(-1)
        data.x = torch.cat([data.x, deg, two_hop.float()], dim=-1)
        out.append(data)
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--epochs', type=int, default=20)
    parser.add_argument('--batch_size', type=int, default=64)
    parser.add_argument('--hidden', type=int, default=64)
    args = parser.parse_args()

    dataset = FakeDataset(num_graphs=1000, avg_num_nodes=20, avg_degree=3,
                          num_channels=8, num_classes=5, task='graph')
    graphs = add_structural_features(dataset)
    train_loader = DataLoader(graphs[:800], batch_size=args.batch_size, shuffle=True)
    test_loader = DataLoader(graphs[800:], batch_size=100)

    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
    model = GraphClassifier(graphs[0].num_features, args.hidden, dataset.num_classes).to(device)
    compiled = torch.compile(model, dynamic=True)
    optimizer = torch.optim.Adam(compiled.parameters(), lr=1e-3, weight_decay=1e-5)

    for epoch in range(1, args.epochs + 1):
        compiled.train()
        total = torch.zeros((), device=device)
        for data in train_loader:
            data = data.to(device)
            optimizer.zero_grad()
            out = compiled(data.x, data.edge_index, data.batch, data.num_graphs)
            loss = F.cross_entropy(out, data.y)
            loss.backward()
            optimizer.step()
            total += loss.detach() * data.num_graphs
        print(f'epoch {epoch:02d} loss {total.item() / 800:.4f}')

    compiled.eval()
    embeddings, node_rows = [], []
    with torch.no_grad():
        for data in test_loader:
            data = data.to(device)
            probs = compiled(data.x, data.edge_index, data.batch, data.num_graphs).softmax(-1)
            embeddings.append(compiled.embed(data.x, data.edge_index, data.batch).cpu())
            sizes = data.ptr[1:] - data.ptr[:-1]
            node_probs = probs.repeat_interleave(sizes, dim=0, output_size=data.ptr[-1])
            graph_id = torch.arange(data.num_graphs, device=device).repeat_interleave(
                sizes, output_size=data.num_nodes)
            node_rows.append(torch.cat([graph_id.unsqueeze(-1).float(), node_probs], dim=-1).cpu())
    torch.save({'graph_emb': torch.cat(embeddings), 'node_probs': torch.cat(node_rows)},
               'pkg_z_predictions.pt')


if __name__ == '__main__':
    main()
