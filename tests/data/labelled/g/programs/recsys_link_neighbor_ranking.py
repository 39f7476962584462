"""Implicit-feedback recommender on a user-item interaction graph. A GraphSAGE
encoder over learnable node embeddings is trained with LinkNeighborLoader
mini-batches and a BPR loss; validation reports hit-rate@k and MRR against
sampled negative items (triplet sampling)."""
import argparse

import torch
import torch.nn.functional as F

from torch_geometric.data import Data
from torch_geometric.loader import LinkNeighborLoader
from torch_geometric.nn import SAGEConv
from torch_geometric.utils import to_undirected


def make_interactions(num_users, num_items, num_inter, gen):
    users = torch.randint(0, num_users, (num_inter,), generator=gen)
    items = torch.randint(0, num_items, (num_inter,), generator=gen) + num_users
    return torch.unique(torch.stack([users, items]), dim=1)


class Recommender(torch.nn.Module):
    def __init__(self, num_nodes, hidden):
        super().__init__()
        self.emb = torch.nn.Embedding(num_nodes, hidden)
        self.conv1 = SAGEConv(hidden, hidden)
        self.conv2 = SAGEConv(hidden, hidden)

    def embed(self, n_id, edge_index):
        h = self.conv1(self.emb(n_id), edge_index).relu()
        return self.conv2(h, edge_index)

    def forward(self, n_id, edge_index, edge_label_index, edge_label):
        h = self.embed(n_id, edge_index)
        score = (h[edge_label_index[0]] * h[edge_label_index[1]]).sum(-1)
        pos_score = score[edge_label == 1]
        neg_score = score[edge_label == 0]
        return F.softplus(neg_score - pos_score).mean()


def train_epoch(model, loader, optimizer, device, num_users):
    model.train()
    losses = []
    items_seen = 0
    for batch in loader:
        batch = batch.to(device)
        if batch.edge_label.sum() == 0:
            continue
        optimizer.zero_grad()
        loss = model(batch.n_id, batch.edge_index, batch.edge_label_index, batch.edge_label)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        items_seen += torch.unique(batch.n_id[batch.n_id >= num_users]).numel()
    return sum(losses) / max(len(losses), 1), items_seen


@torch.no_grad()
def evaluate(model, loader, device, k):
    model.eval()
    hits_per_batch = []
    all_ranks = []
    for batch in loader:
        batch = batch.to(device)
        h = model.embed(batch.n_id, batch.edge_index)
        src = h[batch.src_index]
        pos = (src * h[batch.dst_pos_index]).sum(-1, keepdim=True)
        neg = (src.unsqueeze(1) * h[batch.dst_neg_index]).sum(-1)
        rank = 1 + (neg >= pos).sum(-1)
        hits_per_batch.append((rank <= k).float().mean().item())
        all_ranks.append(rank)
    ranks = torch.cat(all_ranks).float()
    hit_rate = (ranks <= k).float().mean().item()
    mrr = float((1.0 / ranks).mean())
    hard = ranks[ranks > k]
    return hit_rate, mrr, hard.numel(), hits_per_batch


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--users', type=int, default=3000)
    parser.add_argument('--items', type=int, default=1500)
    parser.add_argument('--epochs', type=int, default=10)
    parser.add_argument('--k', type=int, default=10)
    args = parser.parse_args()

    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
    gen = torch.Generator().manual_seed(0)
    inter = make_interactions(args.users, args.items, 40_000, gen)
    perm = torch.randperm(inter.size(1), generator=gen)
    n_val = inter.size(1) // 10
    val_edges, train_edges = inter[:, perm[:n_val]], inter[:, perm[n_val:]]
    num_nodes = args.users + args.items
    data = Data(edge_index=to_undirected(train_edges, num_nodes=num_nodes), num_nodes=num_nodes)

    train_loader = LinkNeighborLoader(data, num_neighbors=[10, 5], edge_label_index=train_edges,
                                      neg_sampling='binary', batch_size=1024, shuffle=True)
    val_loader = LinkNeighborLoader(data, num_neighbors=[10, 5], edge_label_index=val_edges,
                                    neg_sampling=dict(mode='triplet', amount=20), batch_size=2048)

    model = torch.compile(Recommender(num_nodes, 64).to(device), dynamic=True)
    optimizer = torch.optim.Adam(model.parameters(), lr=5e-3)

    history = {}
    for epoch in range(1, args.epochs + 1):
        loss, items_seen = train_epoch(model, train_loader, optimizer, device, args.users)
        hit, mrr, n_hard, per_batch = evaluate(model, val_loader, device, args.k)
        spread = max(per_batch) - min(per_batch)
        print(f'epoch {epoch:02d} loss {loss:.4f} HR@{args.k} {hit:.4f} MRR {mrr:.4f} '
              f'hard {n_hard} spread {spread:.3f} items {items_seen}')
        for name, value in {'hr': hit, 'mrr': mrr, 'loss': loss}.items():
            history.setdefault(name, []).append(value)
    best_epoch = int(torch.tensor(history['mrr']).argmax()) + 1
    print('best MRR epoch:', best_epoch)


if __name__ == '__main__':
    main()
