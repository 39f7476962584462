"""Link prediction with LinkNeighborLoader and per-module optimizers.

The GNN encoder is lazily initialised (in_channels=-1), warmed up eagerly on a
first mini-batch, then compiled. Both optimizer updates are compiled too
(compiled-optimizer recipe): the encoder uses a cosine schedule, the
edge-decoder keeps a constant learning rate.
"""
import torch
import torch.nn.functional as F
from torch import compile as tc

import torch_geometric.transforms as T
from torch_geometric.datasets import FakeDataset
from torch_geometric.loader import LinkNeighborLoader
from torch_geometric.nn import GraphSAGE

CFG = {
    'hidden': 128,
    'lr': 5e-3,
    'decoder_lr': 1e-3,
    'epochs': 20,
    'batch_size': 2048,
    'num_neighbors': [20, 10],
}


class EdgeDecoder(torch.nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.lin1 = torch.nn.Linear(2 * hidden, hidden)
        self.lin2 = torch.nn.Linear(hidden, 1)

    def forward(self, z_src, z_dst):
        h = torch.cat([z_src, z_dst], dim=-1)
        return self.lin2(self.lin1(h).relu()).view(-1)


def load_splits():
    data = FakeDataset(num_graphs=1, avg_num_nodes=30_000, avg_degree=10,
                       num_channels=64, task='node')[0]
    split = T.RandomLinkSplit(num_val=0.05, num_test=0.1, is_undirected=True,
                              add_negative_train_samples=False)
    return split(data)


def main():
    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
    train_data, val_data, test_data = load_splits()
    train_loader = LinkNeighborLoader(
        train_data, num_neighbors=CFG['num_neighbors'], neg_sampling_ratio=1.0,
        edge_label_index=train_data.edge_label_index,
        edge_label=train_data.edge_label, batch_size=CFG['batch_size'],
        shuffle=True)
    val_loader = LinkNeighborLoader(
        val_data, num_neighbors=CFG['num_neighbors'],
        edge_label_index=val_data.edge_label_index,
        edge_label=val_data.edge_label, batch_size=4 * CFG['batch_size'])

    encoder = GraphSAGE(-1, CFG['hidden'], num_layers=2).to(device)
    decoder = EdgeDecoder(CFG['hidden']).to(device)

    # Materialise the lazy weights with one eager forward pass.
    with torch.no_grad():
        warm = next(iter(train_loader)).to(device)
        encoder(warm.x, warm.edge_index)
    encoder = tc(encoder, dynamic=True)

    enc_opt = torch.optim.Adam(encoder.parameters(), lr=CFG['lr'])
    dec_opt = torch.optim.Adam(decoder.parameters(), lr=CFG['decoder_lr'])
    enc_sched = torch.optim.lr_scheduler.CosineAnnealingLR(enc_opt, T_max=CFG['epochs'])

    enc_step = tc(enc_opt.step)
    dec_step = tc(dec_opt.step)

    for epoch in range(1, CFG['epochs'] + 1):
        encoder.train()
        decoder.train()
        for batch in train_loader:
            batch = batch.to(device)
            enc_opt.zero_grad()
            dec_opt.zero_grad()
            z = encoder(batch.x, batch.edge_index)
            src, dst = batch.edge_label_index
            logits = decoder(z[src], z[dst])
            loss = F.binary_cross_entropy_with_logits(logits, batch.edge_label)
            loss.backward()
            enc_step()
            dec_step()
        enc_sched.step()

        encoder.eval()
        decoder.eval()
        hits = torch.zeros((), device=device)
        count = 0
        with torch.no_grad():
            for batch in val_loader:
                batch = batch.to(device)
                z = encoder(batch.x, batch.edge_index)
                src, dst = batch.edge_label_index
                pred = decoder(z[src], z[dst]) > 0
                hits += (pred == batch.edge_label.bool()).sum()
                count += batch.edge_label.numel()
        print(f'Epoch {epoch:02d} | val acc {hits.item() / count:.4f} | '
              f'lr {enc_sched.get_last_lr()[0]:.5f}')


if __name__ == '__main__':
    main()
