"""The user's pytest tests (copied as test_model_train.py): train a compiled model a few steps."""
import torch
import torch.nn.functional as F
from torch_geometric.nn import GCNConv

from graphs import random_graph


class GCN(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = GCNConv(8, 16)
        self.conv2 = GCNConv(16, 3)

    def forward(self, x, edge_index):
        return self.conv2(self.conv1(x, edge_index).relu(), edge_index)


def test_loss_goes_down():
    data = random_graph(40)
    model = torch.compile(GCN())
    optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
    first = None
    for _ in range(5):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(data.x, data.edge_index), data.y)
        loss.backward()
        optimizer.step()
        first = first if first is not None else loss.detach()
    assert loss.detach() < first


def test_shapes():
    data = random_graph(30)
    out = GCN()(data.x, data.edge_index)
    assert out.shape == (30, 3)
