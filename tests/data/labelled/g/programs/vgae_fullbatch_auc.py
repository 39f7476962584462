"""Variational graph autoencoder: full-batch training of a compiled GCN
encoder with reconstruction + KL loss, AUC on the validation edges every few
epochs, and final AUC/AP on the test edges. Embeddings are exported at the end."""
import argparse

import numpy as np
import torch

import torch_geometric.transforms as T
from torch_geometric.datasets import FakeDataset
from torch_geometric.nn import GCNConv, VGAE


class VariationalGCNEncoder(torch.nn.Module):
    def __init__(self, in_channels, out_channels, max_logstd=10.0):
        super().__init__()
        self.conv1 = GCNConv(in_channels, 2 * out_channels)
        self.conv_mu = GCNConv(2 * out_channels, out_channels)
        self.conv_logstd = GCNConv(2 * out_channels, out_channels)
        self.max_logstd = float(max_logstd)

    def forward(self, x, edge_index):
        assert torch.isfinite(x).all(), 'non-finite node features'
        h = self.conv1(x, edge_index).relu()
        mu = self.conv_mu(h, edge_index)
        logstd = self.conv_logstd(h, edge_index).clamp(max=self.max_logstd)
        return mu, logstd


def auc_score(pos, neg):
    """Mann-Whitney AUC computed on the device; returns a 0-dim tensor."""
    scores = torch.cat([pos, neg])
    ranks = torch.empty_like(scores)
    ranks[scores.argsort()] = torch.arange(1, scores.numel() + 1, dtype=scores.dtype,
                                           device=scores.device)
    n_pos, n_neg = pos.numel(), neg.numel()
    return (ranks[:n_pos].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--epochs', type=int, default=400)
    parser.add_argument('--latent', type=int, default=16)
    parser.add_argument('--eval_every', type=int, default=10)
    parser.add_argument('--out', default='vgae_embeddings.npy')
    args = parser.parse_args()

    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
    transform = T.Compose([
        T.NormalizeFeatures(),
        T.ToDevice(device),
        T.RandomLinkSplit(num_val=0.05, num_test=0.1, is_undirected=True,
                          split_labels=True, add_negative_train_samples=False),
    ])
    dataset = FakeDataset(num_graphs=1, avg_num_nodes=3000, avg_degree=5, num_channels=64,
                          task='node', is_undirected=True)
    train_data, val_data, test_data = transform(dataset[0])

    encoder = torch.compile(VariationalGCNEncoder(dataset.num_features, args.latent))
    model = VGAE(encoder).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)

    @torch.no_grad()
    def evaluate(data):
        model.eval()
        z = model.encode(data.x, data.edge_index)
        pos = model.decoder(z, data.pos_edge_label_index, sigmoid=True)
        neg = model.decoder(z, data.neg_edge_label_index, sigmoid=True)
        return auc_score(pos, neg)

    history = []
    best_auc, best_epoch = torch.zeros((), device=device), 0
    for epoch in range(1, args.epochs + 1):
        model.train()
        optimizer.zero_grad()
        z = model.encode(train_data.x, train_data.edge_index)
        loss = model.recon_loss(z, train_data.pos_edge_label_index)
        loss = loss + (1 / train_data.num_nodes) * model.kl_loss()
        loss.backward()
        optimizer.step()
        history.append(loss.detach())
        if epoch % args.eval_every == 0:
            val_auc = evaluate(val_data)
            if val_auc > best_auc:
                best_auc, best_epoch = val_auc, epoch
            print(f'Epoch {epoch:03d} loss {float(loss):.4f} val AUC {val_auc:.4f}')

    losses = torch.stack(history).cpu()
    print(f'best val AUC {best_auc.item():.4f} at epoch {best_epoch}')
    model.eval()
    with torch.no_grad():
        z = model.encode(test_data.x, test_data.edge_index)
    auc, ap = model.test(z, test_data.pos_edge_label_index, test_data.neg_edge_label_index)
    print(f'test AUC {auc:.4f}  AP {ap:.4f}')
    if auc < 0.6:
        print('warning: weak reconstruction, consider a larger latent size')

    np.save(args.out, z.cpu().numpy())
    plateau = losses[losses < losses.median()]
    print('epochs below median loss:', plateau.numel(), 'final loss', losses[-1].item())


if __name__ == '__main__':
    main()
