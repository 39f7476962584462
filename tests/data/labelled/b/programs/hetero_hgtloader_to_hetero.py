"""Heterogeneous venue classification with HGTLoader mini-batches.

Two variants are trained: a lazily initialised GraphSAGE converted with
`to_hetero`, and a GAT-style model with explicit input sizes (all node types
share a 64-dim feature space). Both see variable-size HGT-sampled subgraphs.
"""
import argparse

import torch
import torch.nn.functional as F

import torch_geometric
import torch_geometric.transforms as T
from torch_geometric.data import HeteroData
from torch_geometric.loader import HGTLoader
from torch_geometric.nn import GATConv, Linear, SAGEConv, to_hetero

NUM_CLASSES = 8


class LazySAGE(torch.nn.Module):
    def __init__(self, hidden_channels, out_channels):
        super().__init__()
        self.conv1 = SAGEConv((-1, -1), hidden_channels)
        self.conv2 = SAGEConv((-1, -1), hidden_channels)
        self.lin = Linear(-1, out_channels)

    def forward(self, x, edge_index):
        x = self.conv1(x, edge_index).relu()
        x = self.conv2(x, edge_index).relu()
        return self.lin(x)


class SizedGAT(torch.nn.Module):
    def __init__(self, in_channels, hidden_channels, out_channels):
        super().__init__()
        self.conv1 = GATConv((in_channels, in_channels), hidden_channels,
                             add_self_loops=False)
        self.conv2 = GATConv((hidden_channels, hidden_channels), hidden_channels,
                             add_self_loops=False)
        self.lin = Linear(hidden_channels, out_channels)

    def forward(self, x, edge_index):
        x = self.conv1(x, edge_index).relu()
        x = self.conv2(x, edge_index).relu()
        return self.lin(x)


def build_graph(num_papers=20_000, num_authors=15_000, num_venues=300):
    data = HeteroData()
    data['paper'].x = torch.randn(num_papers, 64)
    data['paper'].y = torch.randint(0, NUM_CLASSES, (num_papers,))
    data['author'].x = torch.randn(num_authors, 64)
    data['venue'].x = torch.randn(num_venues, 64)
    data['author', 'writes', 'paper'].edge_index = torch.stack([
        torch.randint(0, num_authors, (80_000,)), torch.randint(0, num_papers, (80_000,))])
    data['paper', 'published_in', 'venue'].edge_index = torch.stack([
        torch.arange(num_papers), torch.randint(0, num_venues, (num_papers,))])
    data = T.ToUndirected()(data)
    return T.RandomNodeSplit(num_val=0.1, num_test=0.1)(data)


def run(model, loader, optimizer, device, epochs, opt_step=None):
    step = opt_step if opt_step is not None else optimizer.step
    for epoch in range(1, epochs + 1):
        model.train()
        total = torch.zeros((), device=device)
        for batch in loader:
            batch = batch.to(device)
            bs = batch['paper'].batch_size
            optimizer.zero_grad()
            out = model(batch.x_dict, batch.edge_index_dict)['paper'][:bs]
            loss = F.cross_entropy(out, batch['paper'].y[:bs])
            loss.backward()
            step()
            total += loss.detach()
        print(f'  epoch {epoch:02d} mean loss {float(total) / len(loader):.4f}')


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--epochs', type=int, default=5)
    parser.add_argument('--batch_size', type=int, default=512)
    args = parser.parse_args()

    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
    data = build_graph()
    loader = HGTLoader(data, num_samples={key: [512] * 2 for key in data.node_types},
                       input_nodes=('paper', data['paper'].train_mask),
                       batch_size=args.batch_size, shuffle=True)

    print('lazy SAGE')
    sage = to_hetero(LazySAGE(128, NUM_CLASSES), data.metadata(), aggr='sum')
    sage = torch.compile(sage.to(device), dynamic=True, mode='default')
    sage_opt = torch.optim.AdamW(sage.parameters(), lr=1e-3, weight_decay=1e-4)
    run(sage, loader, sage_opt, device, args.epochs)

    print('sized GAT')
    gat = to_hetero(SizedGAT(64, 128, NUM_CLASSES), data.metadata(), aggr='sum').to(device)
    gat = torch_geometric.compile(gat, dynamic=True)
    gat_opt = torch.optim.Adam(gat.parameters(), lr=0.005)
    gat_step = torch.compile(gat_opt.step)
    run(gat, loader, gat_opt, device, args.epochs, opt_step=gat_step)


if __name__ == '__main__':
    main()
