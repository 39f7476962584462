"""Graph classifier for pkg_z.  Compiled by pkg_z.train; nothing here calls
torch.compile itself."""
import torch

from torch_geometric.nn import GraphConv, global_max_pool, global_mean_pool
from torch_geometric.utils import degree, scatter, softmax, to_dense_batch


class AttentionReadout(torch.nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.gate = torch.nn.Linear(channels, 1)
        self.value = torch.nn.Linear(channels, channels)

    def forward(self, x, batch, num_graphs):
        score = softmax(self.gate(x), batch, num_nodes=num_graphs)
        return scatter(score * self.value(x), batch, dim=0, dim_size=num_graphs,
                       reduce='sum')


def degree_embedding(edge_index, num_nodes, emb):
    deg = degree(edge_index[1], num_nodes, dtype=torch.long)
    return emb(deg.clamp(max=emb.num_embeddings - 1))


def graph_log_size(batch):
    return degree(batch).log1p().unsqueeze(-1)


class GraphClassifier(torch.nn.Module):
    def __init__(self, in_channels, hidden, num_classes, num_layers=3, max_degree=32):
        super().__init__()
        self.lin_in = torch.nn.Linear(in_channels, hidden)
        self.deg_emb = torch.nn.Embedding(max_degree + 1, hidden)
        self.convs = torch.nn.ModuleList(
            [GraphConv(hidden, hidden, aggr='mean') for _ in range(num_layers)])
        self.ctx = torch.nn.Linear(hidden, hidden)
        self.readout = AttentionReadout(hidden)
        self.set_mlp = torch.nn.Sequential(torch.nn.Linear(hidden, hidden), torch.nn.ReLU())
        self.head = torch.nn.Sequential(
            torch.nn.Linear(3 * hidden + 1, hidden), torch.nn.ReLU(),
            torch.nn.Dropout(0.3), torch.nn.Linear(hidden, num_classes))

    def encode(self, x, edge_index):
        h = self.lin_in(x) + degree_embedding(edge_index, x.size(0), self.deg_emb)
        for conv in self.convs:
            h = h + conv(h, edge_index).relu()
        return h

    def forward(self, x, edge_index, batch, num_graphs):
        h = self.encode(x, edge_index)
        counts = degree(batch, num_graphs, dtype=torch.long)
        ctx = self.ctx(global_mean_pool(h, batch))
        h = h + ctx.repeat_interleave(counts, dim=0, output_size=x.size(0))

        r_att = self.readout(h, batch, num_graphs)
        r_max = global_max_pool(h, batch, num_graphs)
        dense, mask = to_dense_batch(h, batch, batch_size=num_graphs)
        r_set = self.set_mlp(dense).masked_fill(~mask.unsqueeze(-1), 0.0).sum(dim=1)
        return self.head(torch.cat([r_att, r_max, r_set, graph_log_size(batch)], dim=-1))

    @torch.no_grad()
    def embed(self, x, edge_index, batch):
        """Graph embeddings for retrieval / t-SNE; called after training."""
        return global_mean_pool(self.encode(x, edge_index), batch)
