"""GatedSAGE model and a step-based NeighborLoader training script."""
import argparse

import torch
import torch.nn.functional as F

import torch_geometric.transforms as T
from torch_geometric.datasets import FakeDataset
from torch_geometric.loader import NeighborLoader
from torch_geometric.nn import SAGEConv

from . import ops


class GatedSAGE(torch.nn.Module):
    def __init__(self, x_train, hidden, out_channels, num_layers=3, alpha=0.5):
        super().__init__()
        mean, std, self.max_abs_mean = ops.feature_stats(x_train)
        self.register_buffer('mean', mean)
        self.register_buffer('std', std)
        self.lin_in = torch.nn.Linear(x_train.size(-1), hidden)
        ops.scaled_init(self.lin_in, gain=1.0)
        self.convs = torch.nn.ModuleList(SAGEConv(hidden, hidden) for _ in range(num_layers))
        self.lin_out = torch.nn.Linear(hidden, out_channels)
        self.alpha = alpha

    def forward(self, x, edge_index):
        x = ops.check_shape(x, self.mean.numel())
        h = self.lin_in((x - self.mean) / self.std).relu()
        gate = ops.inverse_degree_gate(edge_index, h.size(0), max_deg_clip=100)
        for conv in self.convs:
            h = ops.residual_mix(h, conv(h, edge_index).relu(), gate, self.alpha)
        return self.lin_out(ops.check_finite(h, 'hidden'))

    @torch.no_grad()
    def inference(self, x_all, loader, device):
        """Layer-wise full-graph inference over a 1-hop NeighborLoader (the
        degree gate is omitted, as in the published evaluation protocol)."""
        h_all = self.lin_in((x_all.to(device) - self.mean) / self.std).relu().cpu()
        for i, conv in enumerate(self.convs):
            parts = []
            for batch in loader:
                h = h_all[batch.n_id].to(device)
                h_new = conv(h, batch.edge_index.to(device)).relu()
                parts.append(h_new[:batch.batch_size].cpu())
            h_all = h_all + self.alpha * (torch.cat(parts) - h_all)
            print(ops.describe(f'layer {i}', h_all))
        return self.lin_out(h_all.to(device))


def forever(loader):
    while True:
        yield from loader


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--max_steps', type=int, default=2000)
    parser.add_argument('--log_every', type=int, default=100)
    args = parser.parse_args()

    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
    data = FakeDataset(num_graphs=1, avg_num_nodes=30_000, avg_degree=10, num_channels=48,
                       num_classes=12, task='node',
                       transform=T.RandomNodeSplit(num_val=0.1, num_test=0.1))[0]
    loader = NeighborLoader(data, num_neighbors=[10, 10, 5], batch_size=512,
                            input_nodes=data.train_mask, shuffle=True, num_workers=2)
    model = GatedSAGE(data.x[data.train_mask], 128, 12).to(device)
    compiled = torch.compile(model, dynamic=True)
    optimizer = torch.optim.Adam(model.parameters(), lr=2e-3)

    batches = forever(loader)
    step, running = 0, torch.zeros((), device=device)
    while step < args.max_steps:
        batch = next(batches).to(device)
        optimizer.zero_grad()
        out = compiled(batch.x, batch.edge_index)[:batch.batch_size]
        loss = F.cross_entropy(out, batch.y[:batch.batch_size])
        loss.backward()
        optimizer.step()
        running += loss.detach()
        step += 1
        if step % args.log_every == 0:
            print(f'step {step:05d} avg loss {running.item() / args.log_every:.4f}')
            running.zero_()

    full_loader = NeighborLoader(data, num_neighbors=[-1], batch_size=4096)
    logits = compiled.inference(data.x, full_loader, device).cpu()
    pred = logits.argmax(dim=-1)
    for split in ('train_mask', 'val_mask', 'test_mask'):
        mask = data[split]
        print(f'{split[:-5]:>5s} acc {(pred[mask] == data.y[mask]).float().mean():.4f}')
    print(ops.topk_nodes(logits.max(dim=-1).values, 5))


if __name__ == '__main__':
    main()
