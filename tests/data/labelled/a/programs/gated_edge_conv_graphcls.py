"""Graph classification with a custom gated edge-attention convolution.

The convolution overrides message() and aggregate(); the whole network is
compiled with dynamic shapes and trained on synthetic molecule-like graphs.
"""
import argparse
import os
import random
import tempfile
import time

import torch
import torch.nn.functional as F

from torch_geometric.data import Data
from torch_geometric.loader import DataLoader
from torch_geometric.nn import MessagePassing, global_mean_pool
from torch_geometric.utils import softmax


class GatedEdgeConv(MessagePassing):
    def __init__(self, in_channels, out_channels, edge_dim, max_norm=5.0):
        super().__init__(aggr='add', node_dim=0)
        self.lin_src = torch.nn.Linear(in_channels, out_channels)
        self.lin_dst = torch.nn.Linear(in_channels, out_channels)
        self.lin_edge = torch.nn.Linear(edge_dim, out_channels)
        self.att = torch.nn.Parameter(torch.empty(out_channels))
        self.register_buffer('max_norm', torch.tensor(max_norm))
        if self.max_norm.item() <= 0:
            raise ValueError(f'max_norm must be positive (got {max_norm})')
        torch.nn.init.normal_(self.att, std=out_channels ** -0.5)

    def forward(self, x, edge_index, edge_attr):
        x_src, x_dst = self.lin_src(x), self.lin_dst(x)
        out = self.propagate(edge_index, x=(x_src, x_dst), edge_attr=edge_attr)
        return out + x_dst

    def message(self, x_j, x_i, edge_attr, index, ptr, size_i):
        gate = torch.sigmoid(x_i + x_j + self.lin_edge(edge_attr))
        alpha = softmax((gate * self.att).sum(dim=-1), index, ptr, size_i)
        if torch.isnan(alpha).any():
            alpha = torch.nan_to_num(alpha, nan=0.0)
        return alpha.unsqueeze(-1) * gate * x_j

    def aggregate(self, inputs, index, ptr=None, dim_size=None):
        # Drop exploding messages instead of letting them dominate the sum.
        keep = inputs.norm(dim=-1) <= self.max_norm
        return super().aggregate(inputs[keep], index[keep], dim_size=dim_size)


class Net(torch.nn.Module):
    def __init__(self, in_channels, edge_dim, hidden, num_classes, num_layers=3):
        super().__init__()
        self.embed = torch.nn.Linear(in_channels, hidden)
        self.convs = torch.nn.ModuleList(
            GatedEdgeConv(hidden, hidden, edge_dim) for _ in range(num_layers))
        self.norms = torch.nn.ModuleList(
            torch.nn.BatchNorm1d(hidden) for _ in range(num_layers))
        self.head = torch.nn.Linear(hidden, num_classes)
        self.debug = False

    def forward(self, x, edge_index, edge_attr, batch):
        h = self.embed(x)
        for conv, norm in zip(self.convs, self.norms):
            h = h + F.relu(norm(conv(h, edge_index, edge_attr)))
        if not torch.compiler.is_compiling():
            if self.debug:
                print('mean node norm:', h.norm(dim=-1).mean())
        num_graphs = int(batch.max()) + 1
        return self.head(global_mean_pool(h, batch, size=num_graphs))


def make_graphs(n, rng):
    graphs = []
    for _ in range(n):
        num_nodes = rng.randint(8, 40)
        label = rng.randrange(2)
        x = torch.randn(num_nodes, 9) + 0.5 * label
        edge_index = torch.randint(0, num_nodes, (2, 2 * num_nodes))
        graphs.append(Data(x=x, edge_index=edge_index,
                           edge_attr=torch.randn(edge_index.size(1), 3),
                           y=torch.tensor([label])))
    return graphs


def dataset_summary(graphs):
    num_nodes = torch.tensor([g.num_nodes for g in graphs])
    labels = torch.cat([g.y for g in graphs])
    classes, counts = torch.unique(labels, return_counts=True)
    print(f'{len(graphs)} graphs, {num_nodes.float().mean().item():.1f} nodes on average')
    for c, n in zip(classes.tolist(), counts.tolist()):
        print(f'  class {c}: {n} graphs')


def train(model, loader, optimizer, device, log_every):
    model.train()
    total_loss = torch.zeros((), device=device)
    num_graphs = 0
    for step, batch in enumerate(loader):
        batch = batch.to(device)
        optimizer.zero_grad()
        out = model(batch.x, batch.edge_index, batch.edge_attr, batch.batch)
        loss = F.cross_entropy(out, batch.y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
        optimizer.step()
        total_loss += loss.detach() * batch.num_graphs
        num_graphs += batch.num_graphs
        if step % log_every == 0:
            print(f'  step {step:04d}  loss {loss.item():.4f}')
    return total_loss.item() / num_graphs


@torch.no_grad()
def evaluate(model, loader, device):
    model.eval()
    correct = 0
    for batch in loader:
        batch = batch.to(device)
        pred = model(batch.x, batch.edge_index, batch.edge_attr, batch.batch).argmax(dim=-1)
        correct += int((pred == batch.y).sum())
    return correct / len(loader.dataset)


def main():
    parser = argparse.ArgumentParser(description='Gated edge-attention GNN')
    parser.add_argument('--epochs', type=int, default=30)
    parser.add_argument('--batch_size', type=int, default=64)
    parser.add_argument('--hidden', type=int, default=64)
    parser.add_argument('--log_every', type=int, default=20)
    parser.add_argument('--seed', type=int, default=0)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
    graphs = make_graphs(1200, random.Random(args.seed))
    dataset_summary(graphs)
    train_loader = DataLoader(graphs[:1000], batch_size=args.batch_size, shuffle=True)
    val_loader = DataLoader(graphs[1000:], batch_size=256)

    model = Net(9, 3, args.hidden, num_classes=2).to(device)
    model = torch.compile(model, dynamic=True)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    ckpt = os.path.join(tempfile.gettempdir(), 'gated_edge_best.pt')

    best_acc = 0.0
    for epoch in range(1, args.epochs + 1):
        t0 = time.perf_counter()
        loss = train(model, train_loader, optimizer, device, args.log_every)
        val_acc = evaluate(model, val_loader, device)
        if val_acc > best_acc:
            best_acc = val_acc
            torch.save(model.state_dict(), ckpt)
        print(f'Epoch {epoch:03d}  loss {loss:.4f}  val acc {val_acc:.4f}  '
              f'({time.perf_counter() - t0:.1f}s)')
    print(f'best val acc {best_acc:.4f}, checkpoint at {ckpt}')


if __name__ == '__main__':
    main()
