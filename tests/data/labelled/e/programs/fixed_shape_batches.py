"""Two ways to get static shapes for mini-batched graph classification so the
models can run under CUDA graphs: (a) pad every graph to a fixed node/edge
budget with T.Pad and batch a fixed number of graphs; (b) densify with
T.ToDense and batch with DenseDataLoader. 1024 graphs are split 896/128, both
multiples of BATCH_SIZE, so every batch has exactly the same shape."""
import argparse
import copy

import torch
import torch.nn.functional as F

import torch_geometric.transforms as T
from torch_geometric.datasets import FakeDataset
from torch_geometric.loader import DataLoader, DenseDataLoader
from torch_geometric.nn import DenseGraphConv, GraphConv, global_add_pool

MAX_NODES = 64
MAX_EDGES = 512
BATCH_SIZE = 32


class PaddedGNN(torch.nn.Module):
    def __init__(self, in_channels, hidden, num_classes):
        super().__init__()
        self.conv1 = GraphConv(in_channels, hidden)
        self.conv2 = GraphConv(hidden, hidden)
        self.head = torch.nn.Linear(hidden, num_classes)

    def forward(self, x, edge_index, batch, pad_node_mask):
        h = self.conv1(x, edge_index).relu()
        h = self.conv2(h, edge_index).relu()
        h = h * pad_node_mask.unsqueeze(-1).to(h.dtype)  # padding nodes contribute 0
        return self.head(global_add_pool(h, batch, size=BATCH_SIZE))


class DenseGNN(torch.nn.Module):
    def __init__(self, in_channels, hidden, num_classes, num_layers=3):
        super().__init__()
        self.convs = torch.nn.ModuleList([
            DenseGraphConv(in_channels if i == 0 else hidden, hidden)
            for i in range(num_layers)
        ])
        # Readout width depends on num_layers (mean + sum per layer): let it be inferred.
        self.readout = torch.nn.LazyLinear(num_classes)

    def forward(self, x, adj, mask):
        m = mask.unsqueeze(-1).to(x.dtype)
        feats = []
        for conv in self.convs:
            x = conv(x, adj, mask).relu()
            summed = (x * m).sum(dim=1)
            feats += [summed, summed / m.sum(dim=1).clamp(min=1.0)]
        return self.readout(torch.cat(feats, dim=-1))


def run_padded(model, loader, optimizer=None, opt_step=None, scheduler=None, device='cpu'):
    train = optimizer is not None
    model.train(train)
    correct = torch.zeros((), dtype=torch.long, device=device)
    for data in loader:
        data = data.to(device)
        with torch.set_grad_enabled(train):
            out = model(data.x, data.edge_index, data.batch, data.pad_node_mask)
        if train:
            optimizer.zero_grad(set_to_none=True)
            F.cross_entropy(out, data.y).backward()
            opt_step()
            scheduler.step()
        correct += (out.argmax(dim=-1) == data.y).sum()
    return correct


def run_dense(model, loader, optimizer=None, opt_step=None, device='cpu'):
    train = optimizer is not None
    model.train(train)
    correct = torch.zeros((), dtype=torch.long, device=device)
    for data in loader:
        data = data.to(device)
        y = data.y.view(-1)
        with torch.set_grad_enabled(train):
            out = model(data.x, data.adj, data.mask)
        if train:
            optimizer.zero_grad(set_to_none=True)
            F.cross_entropy(out, y).backward()
            opt_step()
        correct += (out.argmax(dim=-1) == y).sum()
    return correct


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--epochs', type=int, default=40)
    args = parser.parse_args()
    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')

    base = FakeDataset(num_graphs=1024, avg_num_nodes=40, avg_degree=4,
                       num_channels=16, num_classes=3, task='graph')
    padded = copy.copy(base)
    padded.transform = T.Pad(MAX_NODES, MAX_EDGES, add_pad_mask=True)
    dense = copy.copy(base)
    dense.transform = T.ToDense(MAX_NODES)

    # (a) padded sparse batches
    train_loader = DataLoader(padded[:896], batch_size=BATCH_SIZE, shuffle=True, drop_last=True)
    test_loader = DataLoader(padded[896:], batch_size=BATCH_SIZE)
    model = PaddedGNN(16, 64, 3).to(device)
    model = torch.compile(model, mode='reduce-overhead')
    optimizer = torch.optim.Adam(model.parameters(), lr=torch.tensor(5e-3))
    scheduler = torch.optim.lr_scheduler.OneCycleLR(
        optimizer, max_lr=5e-3, total_steps=args.epochs * len(train_loader))
    opt_step = torch.compile(optimizer.step)
    for epoch in range(args.epochs):
        run_padded(model, train_loader, optimizer, opt_step, scheduler, device)
    acc = run_padded(model, test_loader, device=device).item() / 128
    print(f'padded GraphConv test acc {acc:.4f}')

    # (b) dense batches
    dense_train = DenseDataLoader(dense[:896], batch_size=BATCH_SIZE, shuffle=True, drop_last=True)
    dense_test = DenseDataLoader(dense[896:], batch_size=BATCH_SIZE)
    dense_model = DenseGNN(16, 64, 3).to(device)
    dense_model.compile(mode='reduce-overhead')
    dense_opt = torch.optim.Adam(dense_model.parameters(), lr=1e-3)
    dense_step = torch.compile(dense_opt.step)
    for epoch in range(args.epochs):
        run_dense(dense_model, dense_train, dense_opt, dense_step, device)
    acc = run_dense(dense_model, dense_test, device=device).item() / 128
    print(f'dense GraphConv test acc {acc:.4f}')


if __name__ == '__main__':
    main()
