"""Item-to-item recommendation as full-graph link prediction.

A GraphSAGE encoder with a dot-product decoder is compiled as one module and
trained with fresh negative samples every epoch. After training, the top-k
unseen neighbours are recommended for a handful of query items.
"""
import argparse

import numpy as np
import torch
import torch.nn.functional as F

import torch_geometric.transforms as T
from torch_geometric.datasets import FakeDataset
from torch_geometric.nn import SAGEConv
from torch_geometric.utils import negative_sampling


class LinkPredictor(torch.nn.Module):
    def __init__(self, in_channels, hidden, out_channels):
        super().__init__()
        self.conv1 = SAGEConv(in_channels, hidden)
        self.conv2 = SAGEConv(hidden, out_channels)
        self.track_stats = True
        self.emb_norms = []

    def encode(self, x, edge_index):
        h = self.conv1(x, edge_index).relu()
        h = F.dropout(h, p=0.2, training=self.training)
        return self.conv2(h, edge_index)

    def forward(self, x, edge_index, edge_label_index):
        z = self.encode(x, edge_index)
        if self.track_stats and not torch.compiler.is_compiling():
            self.emb_norms.append(z.norm(dim=-1).mean().item())
        # Guard against stale indices after re-splitting the graph.
        valid = (edge_label_index < z.size(0)).all(dim=0)
        edge_label_index = edge_label_index[:, valid]
        score = (z[edge_label_index[0]] * z[edge_label_index[1]]).sum(dim=-1)
        # L2 penalty only on the embeddings of nodes that occur in this batch.
        reg = z[torch.unique(edge_label_index)].pow(2).sum(dim=-1).mean()
        return torch.where(score.isfinite(), score, torch.zeros_like(score)), reg

    @torch.no_grad()
    def recommend(self, x, edge_index, query, k=10):
        z = self.encode(x, edge_index)
        scores = z[query] @ z.t()
        src, dst = edge_index
        for row, q in enumerate(query.tolist()):
            seen = torch.unique(dst[src == q])
            scores[row, seen] = float('-inf')
        scores[torch.arange(query.numel()), query] = float('-inf')
        top = scores.topk(k, dim=-1).indices
        return dict(zip(query.tolist(), top.tolist()))


def auc_score(pos, neg):
    """Probability that a random positive outranks a random negative."""
    pos, neg = np.asarray(pos), np.asarray(neg)
    wins = (pos[:, None] > neg[None, :]).mean()
    return float(wins)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--num_items', type=int, default=5000)
    parser.add_argument('--epochs', type=int, default=150)
    parser.add_argument('--eval_every', type=int, default=5)
    parser.add_argument('--l2', type=float, default=1e-4)
    args = parser.parse_args()

    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
    split = T.RandomLinkSplit(num_val=0.05, num_test=0.1, is_undirected=True,
                              add_negative_train_samples=False)
    dataset = FakeDataset(num_graphs=1, avg_num_nodes=args.num_items, avg_degree=10,
                          num_channels=64, task='node', is_undirected=True)
    train_data, val_data, test_data = [d.to(device) for d in split(dataset[0])]

    model = LinkPredictor(dataset.num_features, 128, 64).to(device)
    model = torch.compile(model)
    optimizer = torch.optim.Adam(model.parameters(), lr=5e-3)

    @torch.no_grad()
    def evaluate(data):
        model.eval()
        out = model(data.x, data.edge_index, data.edge_label_index)[0].sigmoid()
        pos = out[data.edge_label == 1].cpu().numpy()
        neg = out[data.edge_label == 0].cpu().numpy()
        return auc_score(pos, neg)

    best_auc, best_state = 0.0, None
    for epoch in range(1, args.epochs + 1):
        model.train()
        optimizer.zero_grad()
        neg = negative_sampling(train_data.edge_index, num_nodes=train_data.num_nodes,
                                num_neg_samples=train_data.edge_label_index.size(1))
        edge_label_index = torch.cat([train_data.edge_label_index, neg], dim=-1)
        edge_label = torch.cat([train_data.edge_label,
                                train_data.edge_label.new_zeros(neg.size(1))])
        score, reg = model(train_data.x, train_data.edge_index, edge_label_index)
        loss = F.binary_cross_entropy_with_logits(score, edge_label) + args.l2 * reg
        loss.backward()
        optimizer.step()
        if epoch % args.eval_every == 0:
            val_auc = evaluate(val_data)
            if val_auc > best_auc:
                best_auc = val_auc
                best_state = {k: v.detach().clone() for k, v in model.state_dict().items()}
            print(f'Epoch {epoch:03d}  loss {loss.item():.4f}  val auc {val_auc:.4f}')

    model.load_state_dict(best_state)
    print(f'best val auc {best_auc:.4f}, test auc {evaluate(test_data):.4f}')
    if model.emb_norms:
        print(f'embedding norm: first {model.emb_norms[0]:.3f}, last {model.emb_norms[-1]:.3f}')

    query = torch.randint(0, test_data.num_nodes, (5,), device=device)
    recs = model.recommend(test_data.x, test_data.edge_index, query, k=5)
    for item, neighbours in recs.items():
        print(f'item {item}: {neighbours}')


if __name__ == '__main__':
    main()
