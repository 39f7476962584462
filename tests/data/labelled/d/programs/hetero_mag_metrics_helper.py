"""Heterogeneous paper-venue classification with NeighborLoader and to_hetero.

A small metrics helper keeps running sums on the device; per-epoch timing and
gradient-norm tracking are reported once per epoch.
"""
import argparse
import time

import torch
import torch.nn.functional as F

import torch_geometric.transforms as T
from torch_geometric.data import HeteroData
from torch_geometric.loader import NeighborLoader
from torch_geometric.nn import GraphConv, Linear, to_hetero


class GNN(torch.nn.Module):
    def __init__(self, hidden, out_channels):
        super().__init__()
        self.conv1 = GraphConv((-1, -1), hidden)
        self.conv2 = GraphConv((-1, -1), hidden)
        self.lin = Linear(-1, out_channels)

    def forward(self, x, edge_index):
        x = self.conv1(x, edge_index).relu()
        x = self.conv2(x, edge_index).relu()
        return self.lin(x)


class RunningMetrics:
    """Accumulates loss/accuracy on the device; read once via summary()."""

    def __init__(self, device):
        self.device = device
        self.reset()

    def reset(self):
        self.loss_sum = torch.zeros((), device=self.device)
        self.correct = torch.zeros((), dtype=torch.long, device=self.device)
        self.count = 0

    def update(self, loss, logits, y):
        n = y.numel()
        self.loss_sum += loss.detach() * n
        self.correct += (logits.argmax(dim=-1) == y).sum()
        self.count += n

    def summary(self):
        return {'loss': (self.loss_sum / max(self.count, 1)).item(),
                'acc': self.correct.item() / max(self.count, 1)}


def build_data(num_papers=40_000, num_authors=25_000, num_venues=64, seed=0):
    gen = torch.Generator().manual_seed(seed)
    data = HeteroData()
    data['paper'].x = torch.randn(num_papers, 128, generator=gen)
    data['paper'].y = torch.randint(0, num_venues, (num_papers,), generator=gen)
    data['author'].x = torch.randn(num_authors, 64, generator=gen)
    data['author', 'writes', 'paper'].edge_index = torch.stack([
        torch.randint(0, num_authors, (150_000,), generator=gen),
        torch.randint(0, num_papers, (150_000,), generator=gen)])
    data['paper', 'cites', 'paper'].edge_index = torch.randint(
        0, num_papers, (2, 250_000), generator=gen)
    data = T.ToUndirected()(data)
    data = T.RandomNodeSplit(num_val=0.1, num_test=0.1)(data)
    num_classes = int(data['paper'].y.max()) + 1
    for node_type, store in data.node_items():
        print(f'{node_type}: {store.num_nodes} nodes, {store.x.size(-1)} features')
    return data, num_classes


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--epochs', type=int, default=5)
    parser.add_argument('--batch_size', type=int, default=1024)
    parser.add_argument('--clip', type=float, default=2.0)
    parser.add_argument('--log_every', type=int, default=50)
    args = parser.parse_args()

    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
    data, num_classes = build_data()
    kwargs = dict(num_neighbors={et: [12, 8] for et in data.edge_types},
                  batch_size=args.batch_size, num_workers=4)
    train_loader = NeighborLoader(data, input_nodes=('paper', data['paper'].train_mask),
                                  shuffle=True, **kwargs)
    val_loader = NeighborLoader(data, input_nodes=('paper', data['paper'].val_mask), **kwargs)

    model = to_hetero(GNN(128, num_classes), data.metadata(), aggr='sum').to(device)
    with torch.no_grad():  # initialise lazy modules
        warm = next(iter(train_loader)).to(device)
        model(warm.x_dict, warm.edge_index_dict)
    model = torch.compile(model, dynamic=True)
    optimizer = torch.optim.Adam(model.parameters(), lr=5e-3)
    metrics = RunningMetrics(device)

    def log_step(step, loss, grad_norm):
        if step % args.log_every == 0:
            print(f'  step {step:05d} loss {loss:.4f} grad-norm {grad_norm:.2f}')

    step = 0
    for epoch in range(1, args.epochs + 1):
        model.train()
        metrics.reset()
        grad_norms, skipped = [], 0
        start = time.perf_counter()
        for batch in train_loader:
            batch = batch.to(device)
            bs = batch['paper'].batch_size
            optimizer.zero_grad()
            out = model(batch.x_dict, batch.edge_index_dict)['paper'][:bs]
            y = batch['paper'].y[:bs]
            loss = F.cross_entropy(out, y)
            loss.backward()
            norm = torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
            if not torch.isfinite(norm):
                skipped += 1
                continue
            optimizer.step()
            metrics.update(loss, out, y)
            grad_norms.append(norm)
            log_step(step, loss, norm)
            step += 1
        if device.type == 'cuda':
            torch.cuda.synchronize()
        elapsed = time.perf_counter() - start
        stats = metrics.summary()
        max_norm = torch.stack(grad_norms).max().item()
        print(f'epoch {epoch}: loss {stats["loss"]:.4f} acc {stats["acc"]:.4f} '
              f'max-grad-norm {max_norm:.2f} skipped {skipped} time {elapsed:.1f}s')

        model.eval()
        metrics.reset()
        with torch.no_grad():
            for batch in val_loader:
                batch = batch.to(device)
                bs = batch['paper'].batch_size
                out = model(batch.x_dict, batch.edge_index_dict)['paper'][:bs]
                y = batch['paper'].y[:bs]
                metrics.update(F.cross_entropy(out, y), out, y)
        val = metrics.summary()
        for key, value in val.items():
            print(f'  val {key}: {value:.4f}')


if __name__ == '__main__':
    main()
