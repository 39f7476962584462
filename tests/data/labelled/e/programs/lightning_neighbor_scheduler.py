"""LightningModule-style node classifier on one large graph, trained with
NeighborLoader mini-batches. The encoder is compiled in `setup()` (once the
module sits on its final device); `configure_optimizers` returns AdamW plus a
cosine schedule that Lightning steps once per epoch. Inference runs through
`predict_dataloader` with full neighbourhoods and CUDA graphs."""
import os
import tempfile

import torch
import torch.nn.functional as F

import torch_geometric.transforms as T
from torch_geometric.datasets import FakeDataset
from torch_geometric.loader import NeighborLoader
from torch_geometric.nn import GraphSAGE

try:
    import lightning.pytorch as L
    LightningModule = L.LightningModule
except ImportError:
    LightningModule = torch.nn.Module


class NodeClassifier(LightningModule):
    def __init__(self, data, hidden=256, lr=3e-3, weight_decay=1e-4,
                 max_epochs=20, batch_size=1024, num_workers=2):
        super().__init__()
        self.data = data
        num_classes = int(data.y.max()) + 1
        self.encoder = GraphSAGE(in_channels=data.x.size(-1), hidden_channels=hidden,
                                 num_layers=2, out_channels=hidden, dropout=0.3)
        self.head = torch.nn.Linear(hidden, num_classes)
        self.lr = lr
        self.weight_decay = weight_decay
        self.max_epochs = max_epochs
        self.batch_size = batch_size
        self.num_workers = num_workers

    def setup(self, stage=None):
        if stage == 'predict':
            self.encoder = torch.compile(self.encoder, mode='reduce-overhead', dynamic=True)
        else:
            self.encoder = torch.compile(self.encoder)

    def _loader(self, input_nodes, num_neighbors, shuffle=False):
        return NeighborLoader(self.data, num_neighbors=num_neighbors,
                              input_nodes=input_nodes, batch_size=self.batch_size,
                              shuffle=shuffle, num_workers=self.num_workers,
                              persistent_workers=self.num_workers > 0)

    def train_dataloader(self):
        return self._loader(self.data.train_mask, [15, 10], shuffle=True)

    def val_dataloader(self):
        return self._loader(self.data.val_mask, [15, 10])

    def predict_dataloader(self):
        # -1: take every neighbour at inference time.
        return self._loader(None, [-1, -1])

    def forward(self, batch):
        h = self.encoder(batch.x, batch.edge_index)[:batch.batch_size]
        return self.head(F.relu(h))

    def training_step(self, batch, batch_idx):
        logits = self(batch)
        loss = F.cross_entropy(logits, batch.y[:batch.batch_size])
        self.log('train_loss', loss, batch_size=batch.batch_size, prog_bar=True)
        return loss

    def validation_step(self, batch, batch_idx):
        logits = self(batch)
        acc = (logits.argmax(dim=-1) == batch.y[:batch.batch_size]).float().mean()
        self.log('val_acc', acc, batch_size=batch.batch_size)

    def predict_step(self, batch, batch_idx):
        return batch.n_id[:batch.batch_size], self(batch).argmax(dim=-1)

    def configure_optimizers(self):
        optimizer = torch.optim.AdamW(self.parameters(), lr=self.lr,
                                      weight_decay=self.weight_decay)
        scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer,
                                                               T_max=self.max_epochs)
        return {
            'optimizer': optimizer,
            'lr_scheduler': {'scheduler': scheduler, 'interval': 'epoch'},
        }


def strip_compile_prefix(state_dict):
    return {k.replace('_orig_mod.', ''): v for k, v in state_dict.items()}


if __name__ == '__main__':
    import lightning.pytorch as L

    dataset = FakeDataset(num_graphs=1, avg_num_nodes=60_000, avg_degree=12,
                          num_channels=100, num_classes=8, task='node',
                          transform=T.RandomNodeSplit(num_val=0.1, num_test=0.0))
    data = dataset[0]

    module = NodeClassifier(data, max_epochs=20)
    trainer = L.Trainer(max_epochs=20, accelerator='auto', log_every_n_steps=25)
    trainer.fit(module)

    ckpt = os.path.join(tempfile.gettempdir(), 'node_classifier.ckpt')
    trainer.save_checkpoint(ckpt)

    predictor = NodeClassifier(data, batch_size=4096)
    state = torch.load(ckpt, map_location='cpu', weights_only=False)['state_dict']
    predictor.load_state_dict(strip_compile_prefix(state))
    outputs = L.Trainer(accelerator='auto', logger=False).predict(predictor)
    node_ids = torch.cat([ids for ids, _ in outputs])
    preds = torch.cat([p for _, p in outputs])
    print(f'predicted {node_ids.numel()} nodes, class histogram {torch.bincount(preds)}')
