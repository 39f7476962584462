"""TGN-style temporal link prediction over a stream of interaction events.
The node memory and the last-neighbour buffer are updated eagerly after each
event batch; the attention embedding + link scoring step is compiled."""
import argparse

import torch
from sklearn.metrics import average_precision_score
from torch.nn import Linear

from torch_geometric.data import TemporalData
from torch_geometric.loader import TemporalDataLoader
from torch_geometric.nn import TransformerConv
from torch_geometric.nn.models.tgn import (IdentityMessage, LastAggregator,
                                           LastNeighborLoader, TGNMemory, TimeEncoder)


class GraphAttentionEmbedding(torch.nn.Module):
    def __init__(self, in_channels, out_channels, msg_dim, time_dim):
        super().__init__()
        self.time_enc = TimeEncoder(time_dim)
        self.conv = TransformerConv(in_channels, out_channels // 2, heads=2,
                                    edge_dim=msg_dim + time_dim, dropout=0.1)

    def forward(self, x, last_update, edge_index, t, msg):
        rel_t = last_update[edge_index[0]] - t
        if (rel_t < 0).any():
            rel_t = rel_t.clamp(min=0)
        edge_attr = torch.cat([self.time_enc(rel_t.to(x.dtype)), msg], dim=-1)
        return self.conv(x, edge_index, edge_attr)


class LinkPredictor(torch.nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.lin_src = Linear(channels, channels)
        self.lin_dst = Linear(channels, channels)
        self.lin_out = Linear(channels, 1)

    def forward(self, z_src, z_dst):
        return self.lin_out((self.lin_src(z_src) + self.lin_dst(z_dst)).relu())


def synthetic_stream(num_nodes, num_events, msg_dim, gen):
    src = torch.randint(0, num_nodes // 2, (num_events,), generator=gen)
    dst = torch.randint(num_nodes // 2, num_nodes, (num_events,), generator=gen)
    t = torch.sort(torch.randint(0, 10 * num_events, (num_events,), generator=gen)).values
    return TemporalData(src=src, dst=dst, t=t, msg=torch.randn(num_events, msg_dim, generator=gen))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--epochs', type=int, default=5)
    parser.add_argument('--batch_size', type=int, default=200)
    args = parser.parse_args()

    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
    data = synthetic_stream(2000, 60_000, 16, torch.Generator().manual_seed(0))
    if (data.t[1:] < data.t[:-1]).any():
        (bad,) = torch.where(data.t[1:] < data.t[:-1])
        raise ValueError(f'events are not time-ordered at {bad[:5].tolist()}')
    train_data, val_data, test_data = data.train_val_test_split(val_ratio=0.15, test_ratio=0.15)
    train_loader = TemporalDataLoader(train_data, batch_size=args.batch_size, neg_sampling_ratio=1.0)
    val_loader = TemporalDataLoader(val_data, batch_size=args.batch_size, neg_sampling_ratio=1.0)

    memory_dim = time_dim = embedding_dim = 100
    memory = TGNMemory(data.num_nodes, data.msg.size(-1), memory_dim, time_dim,
                       message_module=IdentityMessage(data.msg.size(-1), memory_dim, time_dim),
                       aggregator_module=LastAggregator()).to(device)
    gnn = GraphAttentionEmbedding(memory_dim, embedding_dim, data.msg.size(-1), time_dim).to(device)
    link_pred = LinkPredictor(embedding_dim).to(device)
    params = set(memory.parameters()) | set(gnn.parameters()) | set(link_pred.parameters())
    optimizer = torch.optim.Adam(params, lr=1e-4)
    criterion = torch.nn.BCEWithLogitsLoss()
    neighbor_loader = LastNeighborLoader(data.num_nodes, size=10, device=device)
    assoc = torch.empty(data.num_nodes, dtype=torch.long, device=device)
    full_t, full_msg = data.t.to(device), data.msg.to(device)

    @torch.compile(dynamic=True)
    def embed_and_score(z, last_update, edge_index, t, msg, src, dst, neg_dst):
        not_self = edge_index[0] != edge_index[1]
        edge_index, t, msg = edge_index[:, not_self], t[not_self], msg[not_self]
        z = gnn(z, last_update, edge_index, t, msg)
        return link_pred(z[src], z[dst]), link_pred(z[src], z[neg_dst])

    def step(batch):
        n_id = torch.cat([batch.src, batch.dst, batch.neg_dst]).unique()
        n_id, edge_index, e_id = neighbor_loader(n_id)
        assoc[n_id] = torch.arange(n_id.size(0), device=device)
        z, last_update = memory(n_id)
        pos_out, neg_out = embed_and_score(z, last_update, edge_index, full_t[e_id], full_msg[e_id],
                                           assoc[batch.src], assoc[batch.dst], assoc[batch.neg_dst])
        memory.update_state(batch.src, batch.dst, batch.t, batch.msg)
        neighbor_loader.insert(batch.src, batch.dst)
        return pos_out, neg_out

    for epoch in range(1, args.epochs + 1):
        memory.train(), gnn.train(), link_pred.train()
        memory.reset_state()
        neighbor_loader.reset_state()
        total_loss = 0.0
        for batch in train_loader:
            batch = batch.to(device)
            optimizer.zero_grad()
            pos_out, neg_out = step(batch)
            loss = criterion(pos_out, torch.ones_like(pos_out))
            loss = loss + criterion(neg_out, torch.zeros_like(neg_out))
            loss.backward()
            optimizer.step()
            memory.detach()
            total_loss += float(loss) * batch.num_events

        memory.eval(), gnn.eval(), link_pred.eval()
        aps = []
        with torch.no_grad():
            for batch in val_loader:
                batch = batch.to(device)
                pos_out, neg_out = step(batch)
                y_pred = torch.cat([pos_out, neg_out]).sigmoid()
                y_true = torch.cat([torch.ones_like(pos_out), torch.zeros_like(neg_out)])
                aps.append(average_precision_score(y_true.cpu().numpy(), y_pred.cpu().numpy()))
        val_ap = float(torch.tensor(aps).mean())
        print(f'Epoch {epoch:02d} loss {total_loss / train_data.num_events:.4f} val AP {val_ap:.4f}')


if __name__ == '__main__':
    main()
