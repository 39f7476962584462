"""OGB-style link prediction: a compiled GCN encoder over the full graph, an
eager MLP link predictor trained on mini-batches of edges with random negative
sampling, and a Hits@K evaluator whose update() is called per batch."""
import argparse

import numpy as np
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader

import torch_geometric.transforms as T
from torch_geometric.datasets import FakeDataset
from torch_geometric.nn import GCNConv
from torch_geometric.utils import negative_sampling


class Encoder(torch.nn.Module):
    def __init__(self, in_channels, hidden, num_layers=3, dropout=0.2):
        super().__init__()
        self.convs = torch.nn.ModuleList(
            GCNConv(in_channels if i == 0 else hidden, hidden) for i in range(num_layers))
        self.dropout = dropout

    def forward(self, x, edge_index):
        for conv in self.convs[:-1]:
            x = F.dropout(conv(x, edge_index).relu(), self.dropout, self.training)
        return self.convs[-1](x, edge_index)


class LinkPredictor(torch.nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.lin1 = torch.nn.Linear(hidden, hidden)
        self.lin2 = torch.nn.Linear(hidden, 1)

    def forward(self, h_src, h_dst):
        return self.lin2((h_src * h_dst).relu()).view(-1)


class HitsEvaluator:
    def __init__(self, ks=(10, 50, 100)):
        self.ks = ks
        self.reset()

    def reset(self):
        self.pos_scores, self.neg_scores = [], []
        self.num_pos = 0

    def update(self, pos_out, neg_out):
        self.pos_scores.append(pos_out.detach().cpu())
        self.neg_scores.append(neg_out.detach().cpu())
        self.num_pos += pos_out.numel()

    def compute(self):
        pos = torch.cat(self.pos_scores)
        neg = torch.cat(self.neg_scores)
        results = {}
        for k in self.ks:
            if neg.numel() < k:
                results[f'hits@{k}'] = 1.0
                continue
            kth = torch.topk(neg, k).values[-1]
            results[f'hits@{k}'] = float((pos > kth).float().mean())
        results['auc'] = self._auc(pos.numpy(), neg.numpy())
        return results

    @staticmethod
    def _auc(pos, neg):
        scores = np.concatenate([pos, neg])
        ranks = scores.argsort().argsort() + 1
        n_pos, n_neg = len(pos), len(neg)
        return ((ranks[:n_pos].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)).item()


def train(encoder, predictor, data, split_edge, optimizer, batch_size):
    encoder.train()
    predictor.train()
    pos_train = split_edge['train']
    total_loss, total_examples = 0.0, 0
    for perm in DataLoader(range(pos_train.size(1)), batch_size, shuffle=True):
        optimizer.zero_grad()
        h = encoder(data.x, data.edge_index)
        src, dst = pos_train[:, perm]
        pos_out = predictor(h[src], h[dst])
        neg = negative_sampling(data.edge_index, num_nodes=data.num_nodes,
                                num_neg_samples=perm.numel())
        neg_out = predictor(h[neg[0]], h[neg[1]])
        loss = (F.binary_cross_entropy_with_logits(pos_out, torch.ones_like(pos_out))
                + F.binary_cross_entropy_with_logits(neg_out, torch.zeros_like(neg_out)))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(predictor.parameters(), 1.0)
        optimizer.step()
        total_loss += loss.item() * perm.numel()
        total_examples += perm.numel()
    return total_loss / total_examples


@torch.no_grad()
def test(encoder, predictor, data, split_edge, evaluator, batch_size):
    encoder.eval()
    predictor.eval()
    h = encoder(data.x, data.edge_index)
    results = {}
    for split in ['val', 'test']:
        evaluator.reset()
        pos, neg = split_edge[split], split_edge[f'{split}_neg']
        for perm in DataLoader(range(pos.size(1)), batch_size):
            pos_out = predictor(h[pos[0, perm]], h[pos[1, perm]])
            neg_out = predictor(h[neg[0, perm]], h[neg[1, perm]])
            evaluator.update(pos_out, neg_out)
        results[split] = evaluator.compute()
    return results


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--epochs', type=int, default=50)
    parser.add_argument('--batch_size', type=int, default=4096)
    parser.add_argument('--eval_steps', type=int, default=5)
    args = parser.parse_args()

    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
    data = FakeDataset(num_graphs=1, avg_num_nodes=10_000, avg_degree=8, num_channels=64,
                       task='node', is_undirected=True)[0]
    train_data, val_data, test_data = T.RandomLinkSplit(
        num_val=0.05, num_test=0.1, is_undirected=True, split_labels=True)(data)
    split_edge = {
        'train': train_data.pos_edge_label_index,
        'val': val_data.pos_edge_label_index, 'val_neg': val_data.neg_edge_label_index,
        'test': test_data.pos_edge_label_index, 'test_neg': test_data.neg_edge_label_index,
    }
    split_edge = {key: value.to(device) for key, value in split_edge.items()}
    print({key: int(value.size(1)) for key, value in split_edge.items()})
    train_data = train_data.to(device)

    encoder = torch.compile(Encoder(64, 256).to(device))
    predictor = LinkPredictor(256).to(device)
    optimizer = torch.optim.Adam(list(encoder.parameters()) + list(predictor.parameters()),
                                 lr=1e-3)
    evaluator = HitsEvaluator()

    best_hits, best_epoch = 0.0, 0
    for epoch in range(1, args.epochs + 1):
        loss = train(encoder, predictor, train_data, split_edge, optimizer, args.batch_size)
        if epoch % args.eval_steps != 0:
            continue
        results = test(encoder, predictor, train_data, split_edge, evaluator, args.batch_size)
        for split, metrics in results.items():
            print(f'epoch {epoch:02d} loss {loss:.4f} {split}: ' +
                  ', '.join(f'{k}={v:.4f}' for k, v in metrics.items()))
        if results['val']['hits@50'] > best_hits:
            best_hits, best_epoch = results['val']['hits@50'], epoch
    print(f'best val hits@50 {best_hits:.4f} at epoch {best_epoch}')


if __name__ == '__main__':
    main()
