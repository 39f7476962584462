"""Molecular-property-style graph regression with a GINE model, a tqdm
progress bar, gradient clipping and two torchmetrics-like accumulators."""
import argparse
import math
import random
import time

import numpy as np
import torch
import torch.nn.functional as F
from tqdm import tqdm

import torch_geometric as pyg
from torch_geometric.data import Data
from torch_geometric.loader import DataLoader
from torch_geometric.nn import GINEConv, global_add_pool


class GINE(torch.nn.Module):
    def __init__(self, in_channels, edge_dim, hidden, num_layers=4):
        super().__init__()
        self.embed = torch.nn.Linear(in_channels, hidden)
        self.convs = torch.nn.ModuleList()
        for _ in range(num_layers):
            mlp = torch.nn.Sequential(torch.nn.Linear(hidden, hidden), torch.nn.ReLU(),
                                      torch.nn.Linear(hidden, hidden))
            self.convs.append(GINEConv(mlp, edge_dim=edge_dim))
        self.out = torch.nn.Linear(hidden, 1)

    def forward(self, x, edge_index, edge_attr, batch):
        h = self.embed(x)
        for conv in self.convs:
            h = h + conv(h, edge_index, edge_attr).relu()
        num_graphs = int(batch.max()) + 1
        return self.out(global_add_pool(h, batch, size=num_graphs)).view(-1)


class MeanAbsoluteError:
    """Device-side accumulator in the style of torchmetrics."""

    def __init__(self, device):
        self.sum_abs_error = torch.zeros((), device=device)
        self.total = 0

    def update(self, preds, target):
        self.sum_abs_error += (preds - target).abs().sum()
        self.total += target.numel()

    def compute(self):
        return self.sum_abs_error / max(self.total, 1)


class MeanMetric:
    """Host-side running mean of per-batch scalars."""

    def __init__(self):
        self.values = []

    def update(self, value):
        self.values.append(float(value))

    def compute(self):
        return sum(self.values) / max(len(self.values), 1)


def make_dataset(n, seed=0):
    rng = random.Random(seed)
    graphs = []
    for _ in range(n):
        k = rng.randint(8, 40)
        x = torch.randn(k, 16)
        edge_index = torch.randint(0, k, (2, 3 * k))
        edge_attr = torch.randn(3 * k, 4)
        y = x.sum() / math.sqrt(k) + 0.1 * torch.randn(())
        graphs.append(Data(x=x, edge_index=edge_index, edge_attr=edge_attr, y=y.view(1)))
    ys = torch.cat([g.y for g in graphs])
    mean, std = ys.mean().item(), float(ys.std())
    for g in graphs:
        g.y = (g.y - mean) / std
    return graphs, mean, std


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--epochs', type=int, default=30)
    parser.add_argument('--batch_size', type=int, default=128)
    parser.add_argument('--clip', type=float, default=5.0)
    args = parser.parse_args()

    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
    graphs, y_mean, y_std = make_dataset(6000)
    train_loader = DataLoader(graphs[:5000], batch_size=args.batch_size, shuffle=True)
    test_loader = DataLoader(graphs[5000:], batch_size=512)

    model = pyg.compile(GINE(16, 4, 128).to(device), dynamic=True)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    grad_norm_meter = MeanMetric()

    for epoch in range(1, args.epochs + 1):
        model.train()
        mae = MeanAbsoluteError(device)
        t0 = time.time()
        pbar = tqdm(train_loader, desc=f'epoch {epoch}', leave=False)
        for step, batch in enumerate(pbar):
            batch = batch.to(device)
            optimizer.zero_grad()
            pred = model(batch.x, batch.edge_index, batch.edge_attr, batch.batch)
            loss = F.mse_loss(pred, batch.y)
            loss.backward()
            norm = torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
            optimizer.step()
            mae.update(pred.detach(), batch.y)
            grad_norm_meter.update(norm)
            pbar.set_postfix(loss=loss.item())
            if step % 10 == 0:
                pbar.set_postfix(loss=f'{loss:.4f}', gnorm=f'{norm:.2f}')
        train_mae = mae.compute().item() * y_std
        epoch_time = time.time() - t0
        pbar.set_postfix(mae=f'{train_mae:.3f}')
        print(f'epoch {epoch:02d} train MAE {train_mae:.4f} '
              f'mean grad-norm {grad_norm_meter.compute():.3f} ({epoch_time:.1f}s)')

    model.eval()
    preds, targets = [], []
    with torch.no_grad():
        for batch in tqdm(test_loader, desc='test'):
            batch = batch.to(device)
            pred = model(batch.x, batch.edge_index, batch.edge_attr, batch.batch)
            preds.append(pred.cpu())
            targets.append(batch.y.cpu())
    preds = torch.cat(preds).numpy() * y_std + y_mean
    targets = torch.cat(targets).numpy() * y_std + y_mean
    rmse = np.sqrt(np.mean((preds - targets) ** 2)).item()
    print(f'test RMSE {rmse:.4f}, corr {float(np.corrcoef(preds, targets)[0, 1]):.3f}')


if __name__ == '__main__':
    main()
