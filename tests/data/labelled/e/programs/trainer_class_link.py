"""Link prediction with a small hand-written Trainer class. The encoder uses
lazily-sized layers (in_channels=-1) that are materialised with one eager
forward pass before compilation; the AdamW update is compiled as well and the
learning rate follows warm restarts, stepped fractionally after every batch."""
import dataclasses

import torch
import torch.nn.functional as F

import torch_geometric.transforms as T
from torch_geometric.datasets import FakeDataset
from torch_geometric.loader import LinkNeighborLoader
from torch_geometric.nn import GraphSAGE


@dataclasses.dataclass
class TrainConfig:
    hidden: int = 128
    lr: float = 2e-3
    weight_decay: float = 1e-5
    epochs: int = 30
    restart_every: int = 10
    batch_size: int = 2048
    num_neighbors: tuple = (10, 5)


class MLPDecoder(torch.nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.lin1 = torch.nn.Linear(2 * hidden, hidden)
        self.lin2 = torch.nn.Linear(hidden, 1)

    def forward(self, z_src, z_dst):
        h = self.lin1(torch.cat([z_src, z_dst], dim=-1)).relu()
        return self.lin2(h).view(-1)


class Trainer:
    def __init__(self, train_data, val_data, cfg: TrainConfig, device):
        self.cfg = cfg
        self.device = device
        self.train_loader = LinkNeighborLoader(
            train_data, num_neighbors=list(cfg.num_neighbors),
            edge_label_index=train_data.edge_label_index,
            edge_label=train_data.edge_label, neg_sampling_ratio=1.0,
            batch_size=cfg.batch_size, shuffle=True)
        self.val_loader = LinkNeighborLoader(
            val_data, num_neighbors=list(cfg.num_neighbors),
            edge_label_index=val_data.edge_label_index,
            edge_label=val_data.edge_label, batch_size=4 * cfg.batch_size)

        encoder = GraphSAGE(-1, cfg.hidden, num_layers=2).to(device)
        with torch.no_grad():  # materialise the lazy (-1) input channels eagerly
            first = next(iter(self.train_loader)).to(device)
            encoder(first.x, first.edge_index)
        self.model = torch.compile(encoder)
        self.decoder = MLPDecoder(cfg.hidden).to(device)
        torch.compile(self.decoder, dynamic=True)

        params = list(self.model.parameters()) + list(self.decoder.parameters())
        self.opt = torch.optim.AdamW(params, lr=cfg.lr, weight_decay=cfg.weight_decay)
        self.sched = torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(
            self.opt, T_0=cfg.restart_every, eta_min=1e-5)
        self._opt_step = torch.compile(self.opt.step)

    def _scores(self, batch):
        z = self.model(batch.x, batch.edge_index)
        src, dst = batch.edge_label_index
        return self.decoder(z[src], z[dst])

    def train_epoch(self, epoch):
        self.model.train()
        self.decoder.train()
        total = torch.zeros((), device=self.device)
        num_batches = len(self.train_loader)
        for i, batch in enumerate(self.train_loader):
            batch = batch.to(self.device)
            self.opt.zero_grad(set_to_none=True)
            loss = F.binary_cross_entropy_with_logits(self._scores(batch), batch.edge_label)
            loss.backward()
            self._opt_step()
            self.sched.step(epoch + (i + 1) / num_batches)
            total += loss.detach()
        return total / num_batches

    @torch.no_grad()
    def evaluate(self):
        self.model.eval()
        self.decoder.eval()
        correct = torch.zeros((), device=self.device)
        count = 0
        for batch in self.val_loader:
            batch = batch.to(self.device)
            pred = (self._scores(batch) > 0).float()
            correct += (pred == batch.edge_label).sum()
            count += batch.edge_label.numel()
        return correct / count

    def fit(self):
        history = []
        for epoch in range(self.cfg.epochs):
            loss = self.train_epoch(epoch)
            acc = self.evaluate()
            history.append((loss, acc))
            print(f'epoch {epoch:02d}  loss {loss:.4f}  val acc {acc:.4f}  '
                  f'lr {self.sched.get_last_lr()[0]:.2e}')
        return history


def main():
    cfg = TrainConfig()
    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
    dataset = FakeDataset(num_graphs=1, avg_num_nodes=30_000, avg_degree=8,
                          num_channels=64, task='node')
    split = T.RandomLinkSplit(num_val=0.1, num_test=0.0, is_undirected=True,
                              add_negative_train_samples=False)
    train_data, val_data, _ = split(dataset[0])
    Trainer(train_data, val_data, cfg, device).fit()


if __name__ == '__main__':
    main()
