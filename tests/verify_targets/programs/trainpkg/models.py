import torch
from torch_geometric.nn import GraphConv, global_mean_pool


class GraphClassifier(torch.nn.Module):
    def __init__(self, in_channels, hidden, num_classes):
        super().__init__()
        self.conv = GraphConv(in_channels, hidden)
        self.head = torch.nn.Linear(hidden, num_classes)

    def forward(self, x, edge_index, batch):
        x = self.conv(x, edge_index).relu()
        keep = x[x.sum(dim=-1) > 0]
        x = global_mean_pool(x, batch)
        return self.head(x) + keep.mean()
