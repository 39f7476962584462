"""Model builders. Both return compiled modules ready for training."""
import torch
import torch.nn.functional as F

from torch_geometric.nn import GATConv


class EdgeEncoder(torch.nn.Module):
    def __init__(self, hidden_channels, heads=4):
        super().__init__()
        self.conv1 = GATConv(-1, hidden_channels // heads, heads=heads)
        self.conv2 = GATConv(-1, hidden_channels, heads=1)
        self.norm = torch.nn.LayerNorm(hidden_channels)

    def forward(self, x, edge_index):
        x = F.elu(self.conv1(x, edge_index))
        x = self.conv2(x, edge_index)
        return self.norm(x)


def build_encoder(data, hidden_channels, device):
    encoder = EdgeEncoder(hidden_channels).to(device)
    # One tiny eager pass so that the lazy GATConv weights get their shapes.
    x = data.x[:2].to(device)
    edge_index = torch.tensor([[0, 1], [1, 0]], device=device)
    with torch.no_grad():
        encoder(x, edge_index)
    return torch.compile(encoder)


def build_scorer(hidden_channels, device):
    scorer = torch.nn.Sequential(
        torch.nn.LazyLinear(hidden_channels),
        torch.nn.ReLU(),
        torch.nn.Dropout(0.2),
        torch.nn.Linear(hidden_channels, 1),
    ).to(device)
    return torch.compile(scorer, dynamic=True)
