"""LightningModule for mini-batch node classification with NeighborLoader.

The GNN body is compiled once in ``__init__``; Lightning drives the loops
(``training_step`` / ``validation_step`` run once per batch).
"""
import torch
import torch.nn.functional as F

import torch_geometric.transforms as T
from torch_geometric.datasets import FakeDataset
from torch_geometric.loader import NeighborLoader
from torch_geometric.nn import SAGEConv

try:
    import lightning.pytorch as L
    LightningModule = L.LightningModule
except ImportError:  # allows importing the file without Lightning installed
    LightningModule = torch.nn.Module


class SAGEBody(torch.nn.Module):
    def __init__(self, in_channels, hidden, out_channels, feature_noise=0.0):
        super().__init__()
        self.in_channels = in_channels
        self.feature_noise = feature_noise
        self.conv1 = SAGEConv(in_channels, hidden)
        self.conv2 = SAGEConv(hidden, hidden)
        self.head = torch.nn.Linear(hidden, out_channels)
        self.last_act_norm = 0.0

    def forward(self, x, edge_index):
        assert x.size(-1) == self.in_channels
        if self.training and self.feature_noise > 0:
            x = x + self.feature_noise * torch.randn_like(x)
        h = self.conv1(x, edge_index).relu()
        h = self.conv2(h, edge_index).relu()
        if not torch.compiler.is_compiling():
            self.last_act_norm = h.norm(dim=-1).mean().item()
        return self.head(h)


class NodeClassifier(LightningModule):
    def __init__(self, num_nodes=20_000, in_channels=64, num_classes=8, lr=3e-3,
                 batch_size=512):
        super().__init__()
        dataset = FakeDataset(num_graphs=1, avg_num_nodes=num_nodes, avg_degree=12,
                              num_channels=in_channels, num_classes=num_classes,
                              task='node',
                              transform=T.RandomNodeSplit(num_val=0.1, num_test=0.1))
        self.data = dataset[0]
        self.num_train = int(self.data.train_mask.sum())
        counts = torch.bincount(self.data.y[self.data.train_mask], minlength=num_classes)
        self.class_weight = (counts.sum() / counts.clamp(min=1)).float()
        print('train class counts:', counts.tolist())
        self.body = torch.compile(SAGEBody(in_channels, 128, num_classes, 0.05), dynamic=True)
        self.lr = lr
        self.batch_size = batch_size
        self._val_correct = 0
        self._val_total = 0
        self._val_probs = []

    def train_dataloader(self):
        return NeighborLoader(self.data, num_neighbors=[15, 10], batch_size=self.batch_size,
                              input_nodes=self.data.train_mask, shuffle=True, num_workers=4)

    def val_dataloader(self):
        return NeighborLoader(self.data, num_neighbors=[15, 10], batch_size=2 * self.batch_size,
                              input_nodes=self.data.val_mask)

    def forward(self, batch):
        return self.body(batch.x, batch.edge_index)[:batch.batch_size]

    def training_step(self, batch, batch_idx):
        out = self(batch)
        y = batch.y[:batch.batch_size]
        loss = F.cross_entropy(out, y, weight=self.class_weight.to(out.device))
        acc = (out.argmax(dim=-1) == y).float().mean()
        self.log('train_loss', loss, prog_bar=True, batch_size=batch.batch_size)
        self.log('train_acc', acc.item(), batch_size=batch.batch_size)
        if batch_idx % 100 == 0:
            lr = self.optimizers().param_groups[0]['lr']
            self.log('lr', float(lr))
        return loss

    def validation_step(self, batch, batch_idx):
        out = self(batch)
        y = batch.y[:batch.batch_size]
        self._val_correct += int((out.argmax(dim=-1) == y).sum())
        self._val_total += batch.batch_size
        self._val_probs.append(out.softmax(dim=-1).max(dim=-1).values.cpu())
        loss = F.cross_entropy(out, y)
        self.log('val_loss', loss, batch_size=batch.batch_size)

    def on_validation_epoch_end(self):
        acc = self._val_correct / max(self._val_total, 1)
        confidence = torch.cat(self._val_probs).numpy()
        self.log('val_acc', acc)
        self.log('val_conf', float(confidence.mean()))
        self._val_correct, self._val_total, self._val_probs = 0, 0, []

    def on_train_epoch_end(self):
        if self.body.last_act_norm > 50.0:
            print(f'warning: large activations ({self.body.last_act_norm:.1f})')

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=self.lr, weight_decay=1e-4)

    @torch.no_grad()
    def test_accuracy(self):
        self.eval()
        pred = self.body(self.data.x, self.data.edge_index).argmax(dim=-1)
        mask = self.data.test_mask
        return (pred[mask] == self.data.y[mask]).float().mean().item()


if __name__ == '__main__':
    import lightning.pytorch as L

    module = NodeClassifier()
    trainer = L.Trainer(max_epochs=10, accelerator='auto', log_every_n_steps=25)
    trainer.fit(module)
    test_acc = module.test_accuracy()
    print(f'test accuracy: {test_acc:.4f}')
    for name, value in trainer.callback_metrics.items():
        print(f'{name}: {float(value):.4f}')
