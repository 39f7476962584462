"""Building blocks shared by the MolNet models."""
import torch
from torch import Tensor

from torch_geometric.nn import MessagePassing


def edge_dropout(edge_index: Tensor, edge_attr: Tensor, p: float, training: bool):
    """Randomly removes a fraction ``p`` of the edges during training."""
    if not training or p <= 0.0:
        return edge_index, edge_attr
    keep = torch.where(torch.rand(edge_index.size(1), device=edge_index.device) >= p)[0]
    return edge_index[:, keep], edge_attr[keep]


def check_graph(data) -> None:
    """Validates a single molecule before it enters the dataset."""
    if data.edge_index.numel() > 0 and data.edge_index.max() >= data.num_nodes:
        raise ValueError('edge_index refers to a node that does not exist')
    atoms_with_bonds = torch.unique(data.edge_index.flatten())
    if atoms_with_bonds.numel() < data.num_nodes:
        missing = data.num_nodes - atoms_with_bonds.numel()
        print(f'warning: {missing} isolated atom(s) in molecule {data.mol_id.item()}')


class EdgeMLPConv(MessagePassing):
    """h_i' = W h_i + sum_j MLP([h_j, e_ij]) with a learnable residual gate."""

    def __init__(self, channels: int, edge_dim: int):
        super().__init__(aggr='add')
        self.mlp = torch.nn.Sequential(
            torch.nn.Linear(channels + edge_dim, channels), torch.nn.SiLU(),
            torch.nn.Linear(channels, channels))
        self.root = torch.nn.Linear(channels, channels, bias=False)
        self.gate = torch.nn.Parameter(torch.zeros(1))

    def forward(self, x: Tensor, edge_index: Tensor, edge_attr: Tensor) -> Tensor:
        out = self.propagate(edge_index, x=x, edge_attr=edge_attr)
        return self.root(x) + torch.tanh(self.gate) * out

    def message(self, x_j: Tensor, edge_attr: Tensor) -> Tensor:
        msg = self.mlp(torch.cat([x_j, edge_attr], dim=-1))
        if msg.abs().max() > 1e4:
            msg = msg.clamp(-1e4, 1e4)
        return msg

    def update(self, aggr_out: Tensor) -> Tensor:
        return torch.where(torch.isfinite(aggr_out), aggr_out, torch.zeros_like(aggr_out))
