"""MolNet model definition."""
import logging

import torch
import torch.nn.functional as F
from torch import Tensor

from torch_geometric.nn import global_add_pool, global_max_pool

from .layers import EdgeMLPConv, edge_dropout

log = logging.getLogger(__name__)


class MolNet(torch.nn.Module):
    def __init__(self, atom_features: int, bond_features: int, hidden: int,
                 num_tasks: int, atom_counts: Tensor, num_layers: int = 4,
                 edge_drop: float = 0.1):
        super().__init__()
        self.atom_encoder = torch.nn.Linear(atom_features, hidden)
        self.bond_encoder = torch.nn.Linear(bond_features, hidden // 4)
        self.convs = torch.nn.ModuleList(
            EdgeMLPConv(hidden, hidden // 4) for _ in range(num_layers))
        self.norms = torch.nn.ModuleList(
            torch.nn.LayerNorm(hidden) for _ in range(num_layers))
        self.head = torch.nn.Sequential(
            torch.nn.Linear(2 * hidden, hidden), torch.nn.ReLU(),
            torch.nn.Linear(hidden, num_tasks))
        self.edge_drop = edge_drop
        # Prior on molecule size, used to rescale the sum readout.
        self.register_buffer('mean_atoms', atom_counts.float().mean())
        log.info('MolNet: %d layers, mean molecule size %.1f atoms',
                 num_layers, self.mean_atoms.item())
        self.max_atoms = int(atom_counts.max())

    def forward(self, x: Tensor, edge_index: Tensor, edge_attr: Tensor,
                batch: Tensor, num_graphs: int) -> Tensor:
        edge_index, edge_attr = edge_dropout(edge_index, edge_attr, self.edge_drop,
                                             self.training)
        h = self.atom_encoder(x)
        e = self.bond_encoder(edge_attr)
        for conv, norm in zip(self.convs, self.norms):
            h = h + F.silu(norm(conv(h, edge_index, e)))
        h_sum = global_add_pool(h, batch, size=num_graphs) / self.mean_atoms
        h_max = global_max_pool(h, batch, size=num_graphs)
        return self.head(torch.cat([h_sum, h_max], dim=-1))

    @torch.no_grad()
    def predict_proba(self, batch) -> Tensor:
        self.eval()
        logits = self.forward(batch.x, batch.edge_index, batch.edge_attr,
                              batch.batch, batch.num_graphs)
        probs = torch.sigmoid(logits)
        valid = ~torch.isnan(batch.y)
        print(f'{int(valid.sum())} labelled targets in the held-out batch')
        return probs.cpu()
