"""Score-based node selection (TopKPooling-style) and readout layers."""
import torch
from torch.nn import Linear

from torch_geometric.utils import degree, scatter, softmax, to_dense_batch


def filter_adj(edge_index, node_mask, num_nodes):
    """Keep the edges whose endpoints both survive and relabel them."""
    remap = torch.full((num_nodes,), -1, dtype=torch.long, device=edge_index.device)
    kept = node_mask.nonzero().view(-1)
    remap[kept] = torch.arange(kept.numel(), device=edge_index.device)
    edge_mask = node_mask[edge_index[0]] & node_mask[edge_index[1]]
    return remap[edge_index[:, edge_mask]], kept


class ScoreTopK(torch.nn.Module):
    """Keeps the ceil(ratio * n_i) highest-scoring nodes of every graph."""

    def __init__(self, channels, ratio=0.5):
        super().__init__()
        self.score = Linear(channels, 1)
        self.ratio = ratio

    def forward(self, x, edge_index, batch, num_graphs, max_nodes):
        score = torch.tanh(self.score(x)).view(-1)
        dense, valid = to_dense_batch(score, batch, float('-inf'), max_nodes, num_graphs)
        counts = degree(batch, num_graphs)
        k = (self.ratio * counts).ceil().long()
        rank = dense.argsort(dim=-1, descending=True).argsort(dim=-1)
        node_mask = (rank < k.unsqueeze(-1))[valid]
        edge_index, perm = filter_adj(edge_index, node_mask, x.size(0))
        x = x[perm] * score[perm].unsqueeze(-1)
        new_batch = torch.arange(num_graphs, device=x.device).repeat_interleave(k)
        return x, edge_index, new_batch, perm


class AttnReadout(torch.nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.gate = Linear(channels, 1)

    def forward(self, x, batch, num_graphs):
        gate = softmax(self.gate(x), batch, None, num_graphs)
        if torch.compiler.is_compiling():
            self.dominant = None
        else:
            self.dominant = (gate.view(-1) > 0.5).nonzero().view(-1)
        return scatter(gate * x, batch, dim=0, dim_size=num_graphs, reduce='sum')


class MaxMeanReadout(torch.nn.Module):
    def forward(self, x, batch):
        x_max = scatter(x, batch, dim=0, reduce='max')
        x_mean = scatter(x, batch, 0, reduce='mean')
        return torch.cat([x_max, x_mean], dim=-1)


class ThresholdSelect(torch.nn.Module):
    """SAGPool-style selection with a minimum attention score instead of a
    fixed ratio (output size depends on the scores)."""

    def __init__(self, channels, min_score=0.05):
        super().__init__()
        self.score = Linear(channels, 1)
        self.min_score = min_score

    def forward(self, x, edge_index, batch):
        score = softmax(self.score(x).view(-1), batch)
        keep = score > self.min_score
        edge_index, perm = filter_adj(edge_index, keep, x.size(0))
        graphs_left = torch.unique(batch[keep])
        return x[perm] * score[perm].unsqueeze(-1), edge_index, batch[perm], graphs_left
