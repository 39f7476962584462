"""Graph classification (TU-style) with a GIN + global pooling readout.

The model is built and compiled in `build_model`, and trained/evaluated in
separate functions that receive it together with a mini-batch DataLoader.
The optimizer update is compiled as well; the learning rate is reduced when
the validation accuracy plateaus.
"""
import argparse

import torch
import torch.nn.functional as F

from torch_geometric.datasets import FakeDataset
from torch_geometric.loader import DataLoader
from torch_geometric.nn import MLP, GINConv, global_add_pool


class GIN(torch.nn.Module):
    def __init__(self, in_channels, hidden_channels, out_channels, num_layers):
        super().__init__()
        self.convs = torch.nn.ModuleList()
        for _ in range(num_layers):
            mlp = MLP([in_channels, hidden_channels, hidden_channels])
            self.convs.append(GINConv(nn=mlp, train_eps=False))
            in_channels = hidden_channels
        self.mlp = MLP([hidden_channels, hidden_channels, out_channels],
                       norm=None, dropout=0.5)

    def forward(self, x, edge_index, batch, num_graphs: int):
        for conv in self.convs:
            x = conv(x, edge_index).relu()
        x = global_add_pool(x, batch, size=num_graphs)
        return self.mlp(x)


def build_model(args, in_channels, out_channels, device):
    model = GIN(in_channels, args.hidden, out_channels, args.num_layers).to(device)
    if args.autotune:
        return torch.compile(model, mode='max-autotune-no-cudagraphs', dynamic=False)
    return torch.compile(model, options={'epilogue_fusion': True,
                                         'shape_padding': True})


def make_loaders(dataset, batch_size):
    dataset = dataset.shuffle()
    n = len(dataset) // 10
    test_loader = DataLoader(dataset[:n], batch_size=batch_size)
    val_loader = DataLoader(dataset[n:2 * n], batch_size=batch_size)
    train_loader = DataLoader(dataset[2 * n:], batch_size=batch_size, shuffle=True)
    return train_loader, val_loader, test_loader


def train(model, loader, optimizer, opt_step, device):
    model.train()
    total_loss = torch.zeros((), device=device)
    for data in loader:
        data = data.to(device)
        optimizer.zero_grad()
        out = model(data.x, data.edge_index, data.batch, data.num_graphs)
        loss = F.cross_entropy(out, data.y)
        loss.backward()
        opt_step()
        total_loss += loss.detach() * data.num_graphs
    return total_loss / len(loader.dataset)


@torch.no_grad()
def test(model, loader, device):
    model.eval()
    correct = torch.zeros((), dtype=torch.long, device=device)
    for data in loader:
        data = data.to(device)
        out = model(data.x, data.edge_index, data.batch, data.num_graphs)
        correct += (out.argmax(dim=-1) == data.y).sum()
    return correct / len(loader.dataset)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--lr', type=float, default=0.01)
    parser.add_argument('--hidden', type=int, default=64)
    parser.add_argument('--num_layers', type=int, default=5)
    parser.add_argument('--batch_size', type=int, default=128)
    parser.add_argument('--epochs', type=int, default=100)
    parser.add_argument('--autotune', action='store_true')
    args = parser.parse_args()

    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
    dataset = FakeDataset(num_graphs=2000, avg_num_nodes=30, avg_degree=4,
                          num_channels=16, num_classes=2, task='graph')
    train_loader, val_loader, test_loader = make_loaders(dataset, args.batch_size)

    model = build_model(args, dataset.num_features, dataset.num_classes, device)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(
        optimizer, mode='max', factor=0.5, patience=5)

    @torch.compile(fullgraph=False)
    def opt_step():
        optimizer.step()

    best_val = test_acc = 0.0
    for epoch in range(1, args.epochs + 1):
        loss = train(model, train_loader, optimizer, opt_step, device)
        val_acc = float(test(model, val_loader, device))
        scheduler.step(val_acc)
        if val_acc > best_val:
            best_val = val_acc
            test_acc = float(test(model, test_loader, device))
        print(f'Epoch {epoch:03d} loss {float(loss):.4f} val {val_acc:.4f} '
              f'best {best_val:.4f} test {test_acc:.4f}')


if __name__ == '__main__':
    main()
