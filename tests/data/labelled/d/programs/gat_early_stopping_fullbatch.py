"""Full-batch GAT with early stopping on the validation loss.

The model is compiled in place with ``Module.compile()``. Two early-stopping
helpers are shown: one fed Python floats, one that keeps the best loss on the
device and is only consulted every ``check_every`` epochs.
"""
import argparse
import copy

import torch
import torch.nn.functional as F

import torch_geometric.transforms as T
from torch_geometric.datasets import FakeDataset
from torch_geometric.nn import GATConv


class GAT(torch.nn.Module):
    def __init__(self, in_channels, hidden, out_channels, heads=8, dropout=0.6):
        super().__init__()
        self.conv1 = GATConv(in_channels, hidden, heads=heads, dropout=dropout)
        self.conv2 = GATConv(hidden * heads, out_channels, heads=1, concat=False,
                             dropout=dropout)
        self.dropout = dropout

    def forward(self, x, edge_index):
        x = F.dropout(x, p=self.dropout, training=self.training)
        x = F.elu(self.conv1(x, edge_index))
        assert not torch.isnan(x).any(), 'NaN after first GAT layer'
        x = F.dropout(x, p=self.dropout, training=self.training)
        return self.conv2(x, edge_index)


class EarlyStopping:
    """Classic patience-based stopper; expects Python floats."""

    def __init__(self, patience=50, min_delta=0.0):
        self.patience = patience
        self.min_delta = min_delta
        self.best = float('inf')
        self.bad_epochs = 0
        self.stop = False

    def step(self, val_loss):
        if val_loss < self.best - self.min_delta:
            self.best = val_loss
            self.bad_epochs = 0
            return True
        self.bad_epochs += 1
        self.stop = self.bad_epochs >= self.patience
        return False


class DevicePatience:
    """Tracks the best loss on the device; should_stop() reads it back."""

    def __init__(self, patience, device):
        self.patience = patience
        self.best = torch.full((), float('inf'), device=device)
        self.bad = torch.zeros((), dtype=torch.long, device=device)

    def update(self, val_loss):
        improved = val_loss < self.best
        self.best = torch.where(improved, val_loss, self.best)
        self.bad = torch.where(improved, torch.zeros_like(self.bad), self.bad + 1)

    def should_stop(self):
        return bool(self.bad >= self.patience)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--max_epochs', type=int, default=1000)
    parser.add_argument('--patience', type=int, default=100)
    parser.add_argument('--check_every', type=int, default=25)
    parser.add_argument('--stopper', choices=['float', 'device'], default='float')
    args = parser.parse_args()

    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
    dataset = FakeDataset(num_graphs=1, avg_num_nodes=3000, avg_degree=4, num_channels=100,
                          num_classes=6, task='node',
                          transform=T.Compose([T.RandomNodeSplit(), T.NormalizeFeatures()]))
    data = dataset[0].to(device)

    model = GAT(dataset.num_features, 8, dataset.num_classes).to(device)
    model.compile()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.005, weight_decay=5e-4)

    def train_step():
        model.train()
        optimizer.zero_grad()
        out = model(data.x, data.edge_index)
        loss = F.cross_entropy(out[data.train_mask], data.y[data.train_mask])
        loss.backward()
        optimizer.step()
        return loss.detach()

    @torch.no_grad()
    def val_loss_fn():
        model.eval()
        out = model(data.x, data.edge_index)
        return F.cross_entropy(out[data.val_mask], data.y[data.val_mask])

    stopper = EarlyStopping(patience=args.patience)
    device_stopper = DevicePatience(args.patience, device)
    best_state, best_val = None, torch.tensor(float('inf'), device=device)
    epoch = 0
    while epoch < args.max_epochs and not stopper.stop:
        epoch += 1
        train_loss = train_step()
        val_loss = val_loss_fn()
        if args.stopper == 'float':
            if stopper.step(val_loss.item()):
                best_state = copy.deepcopy(model.state_dict())
        else:
            device_stopper.update(val_loss)
            if val_loss < best_val:
                best_val = val_loss
                best_state = {k: v.detach().clone() for k, v in model.state_dict().items()}
            if epoch % args.check_every == 0 and device_stopper.should_stop():
                break
        if epoch % 100 == 0:
            print(f'epoch {epoch:04d} train {train_loss:.4f} val {val_loss:.4f}')

    if best_state is not None:
        model.load_state_dict(best_state)
    model.eval()
    with torch.no_grad():
        pred = model(data.x, data.edge_index).argmax(dim=-1)
    correct = (pred[data.test_mask] == data.y[data.test_mask]).sum()
    test_acc = int(correct) / int(data.test_mask.sum())
    best = stopper.best if args.stopper == 'float' else best_val.item()
    print(f'stopped at epoch {epoch}, best val loss {best:.4f}, test acc {test_acc:.4f}')


if __name__ == '__main__':
    main()
