"""Graph classification benchmark driven by a small model registry: the
architecture is picked by name, compiled with a shared set of compile options
and trained on mini-batches of variable-size graphs. The best checkpoint is
re-loaded into a fresh registry instance for the final test evaluation."""
import argparse
import copy
import os
import tempfile

import torch
import torch.nn.functional as F

from torch_geometric.datasets import FakeDataset
from torch_geometric.loader import DataLoader
from torch_geometric.nn import GCN, GIN, GraphSAGE, global_add_pool, global_mean_pool


class PooledGNN(torch.nn.Module):
    def __init__(self, backbone, pool, hidden, num_classes):
        super().__init__()
        self.backbone = backbone
        self.pool = pool
        self.head = torch.nn.Sequential(
            torch.nn.Linear(hidden, hidden), torch.nn.ReLU(),
            torch.nn.Linear(hidden, num_classes))

    def forward(self, x, edge_index, batch):
        return self.head(self.pool(self.backbone(x, edge_index), batch))


def gcn(in_channels, hidden, num_classes):
    return PooledGNN(GCN(in_channels, hidden, num_layers=3), global_mean_pool,
                     hidden, num_classes)


def gin(in_channels, hidden, num_classes):
    return PooledGNN(GIN(in_channels, hidden, num_layers=4, train_eps=True),
                     global_add_pool, hidden, num_classes)


def sage(in_channels, hidden, num_classes):
    return PooledGNN(GraphSAGE(in_channels, hidden, num_layers=3, aggr='max'),
                     global_mean_pool, hidden, num_classes)


MODELS = {'gcn': gcn, 'gin': gin, 'sage': sage}

COMPILE_KWARGS = {
    'dynamic': True,
    'fullgraph': False,
    'mode': 'max-autotune-no-cudagraphs',
}


def train_one_epoch(model, loader, optimizer, device):
    model.train()
    total = torch.zeros((), device=device)
    for data in loader:
        data = data.to(device)
        optimizer.zero_grad()
        loss = F.cross_entropy(model(data.x, data.edge_index, data.batch), data.y)
        loss.backward()
        optimizer.step()
        total += loss.detach() * data.num_graphs
    return total / len(loader.dataset)


@torch.no_grad()
def accuracy(model, loader, device):
    model.eval()
    correct = torch.zeros((), dtype=torch.long, device=device)
    for data in loader:
        data = data.to(device)
        pred = model(data.x, data.edge_index, data.batch).argmax(dim=-1)
        correct += (pred == data.y).sum()
    return correct.item() / len(loader.dataset)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--model', choices=sorted(MODELS), default='gin')
    parser.add_argument('--hidden', type=int, default=64)
    parser.add_argument('--lr', type=float, default=1e-3)
    parser.add_argument('--epochs', type=int, default=60)
    args = parser.parse_args()

    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
    dataset = FakeDataset(num_graphs=2000, avg_num_nodes=30, avg_degree=4,
                          num_channels=16, num_classes=4, task='graph').shuffle()
    train_ds, val_ds, test_ds = dataset[:1600], dataset[1600:1800], dataset[1800:]
    train_loader = DataLoader(train_ds, batch_size=64, shuffle=True)
    val_loader = DataLoader(val_ds, batch_size=128)
    test_loader = DataLoader(test_ds, batch_size=128)

    model = torch.compile(MODELS[args.model](dataset.num_features, args.hidden,
                                             dataset.num_classes).to(device),
                          **COMPILE_KWARGS)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, mode='max',
                                                           factor=0.5, patience=5)

    best_acc, best_state = 0.0, None
    for epoch in range(1, args.epochs + 1):
        loss = train_one_epoch(model, train_loader, optimizer, device)
        val_acc = accuracy(model, val_loader, device)
        scheduler.step(val_acc)
        if val_acc > best_acc:
            best_acc = val_acc
            best_state = copy.deepcopy(getattr(model, '_orig_mod', model).state_dict())
        if epoch % 10 == 0:
            print(f'{args.model} epoch {epoch:03d} loss {loss:.4f} val {val_acc:.4f}')

    ckpt = os.path.join(tempfile.gettempdir(), f'{args.model}_best.pt')
    torch.save(best_state, ckpt)

    best = MODELS[args.model](dataset.num_features, args.hidden, dataset.num_classes)
    best.load_state_dict(torch.load(ckpt, map_location='cpu'))
    best = torch.compile(best.to(device).eval(), dynamic=None)
    test_acc = accuracy(best, test_loader, device)
    print(f'{args.model}: best val {best_acc:.4f}  test {test_acc:.4f}')


if __name__ == '__main__':
    main()
