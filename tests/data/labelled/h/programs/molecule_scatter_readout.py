"""Molecular property regression with an edge-conditioned MPNN, a virtual-node
style graph context broadcast back to atoms, and hand-written scatter
readouts (sum / max / attention set pooling). Trains with model.compile() and
exports a separately compiled predictor for virtual screening."""
import argparse
import random

import torch
import torch.nn.functional as F

from torch_geometric.data import Data
from torch_geometric.loader import DataLoader
from torch_geometric.nn import MessagePassing
from torch_geometric.utils import degree, scatter, softmax

NUM_ATOM_TYPES, EDGE_DIM, POS_DIM = 10, 4, 8


def random_molecule(rng):
    n = rng.randint(5, 30)
    ring = torch.arange(n)
    edge_index = torch.stack([ring, (ring + 1) % n])
    edge_index = torch.cat([edge_index, edge_index.flip(0)], dim=1)
    bonds_per_atom = torch.full((n,), 2)
    src = torch.arange(n).repeat_interleave(bonds_per_atom)
    atom_pos = torch.arange(n).repeat_interleave(2)
    assert torch.equal(src, atom_pos)
    return Data(z=torch.randint(0, NUM_ATOM_TYPES, (n,)), edge_index=edge_index,
                edge_attr=torch.randn(edge_index.size(1), EDGE_DIM),
                num_atoms=torch.tensor([n]), y=torch.randn(1))


def target_normalizer(molecules):
    ys = torch.cat([m.y for m in molecules])
    sizes = torch.cat([m.num_atoms for m in molecules])
    per_atom = scatter(ys / sizes, sizes - sizes.min(), reduce='mean')
    return ys.mean(), ys.std(), per_atom


class EdgeMPNN(MessagePassing):
    def __init__(self, hidden):
        super().__init__(aggr='add')
        self.msg = torch.nn.Linear(2 * hidden + EDGE_DIM, hidden)
        self.att = torch.nn.Linear(hidden, 1)
        self.upd = torch.nn.GRUCell(hidden, hidden)

    def forward(self, h, edge_index, edge_attr):
        deg = degree(edge_index[1], num_nodes=h.size(0), dtype=h.dtype).clamp(min=1)
        m = self.propagate(edge_index, h=h, edge_attr=edge_attr)
        return self.upd(m / deg.unsqueeze(-1), h)

    def message(self, h_i, h_j, edge_attr, index, ptr, size_i):
        m = F.silu(self.msg(torch.cat([h_i, h_j, edge_attr], dim=-1)))
        alpha = softmax(self.att(m), index, ptr, size_i)
        return alpha * m


class ScatterReadout(torch.nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.gate = torch.nn.Linear(hidden, 1)

    def forward(self, h, batch, num_graphs):
        s = scatter(h, batch, dim=0, reduce='sum')
        m = scatter(h, batch, 0, num_graphs, reduce='max')
        a = softmax(self.gate(h), batch, num_nodes=num_graphs)
        att = scatter(a * h, batch, dim=0, dim_size=num_graphs, reduce='sum')
        return torch.cat([s, m, att], dim=-1)


class MolNet(torch.nn.Module):
    def __init__(self, hidden=128, num_layers=4):
        super().__init__()
        self.embed = torch.nn.Embedding(NUM_ATOM_TYPES, hidden)
        self.pos = torch.nn.Parameter(torch.randn(1, POS_DIM))
        self.pos_proj = torch.nn.Linear(POS_DIM, hidden)
        self.layers = torch.nn.ModuleList(EdgeMPNN(hidden) for _ in range(num_layers))
        self.vn = torch.nn.Linear(hidden, hidden)
        self.readout = ScatterReadout(hidden)
        self.out = torch.nn.Linear(3 * hidden, 1)

    def forward(self, z, edge_index, edge_attr, batch, ptr, num_atoms, num_graphs):
        h = self.embed(z)
        pos = self.pos.repeat_interleave(num_graphs, dim=0)
        h = h + self.pos_proj(pos).repeat_interleave(num_atoms, dim=0, output_size=ptr[-1])
        for layer in self.layers:
            g = scatter(h, batch, dim=0, dim_size=num_graphs, reduce='mean')
            h = h + self.vn(g).repeat_interleave(num_atoms, dim=0)
            h = layer(h, edge_index, edge_attr)
            h = h + self.vn(g).repeat_interleave(num_atoms, dim=0, output_size=h.size(0))
        return self.out(self.readout(h, batch, num_graphs)).squeeze(-1)


def forward_batch(model, b):
    return model(b.z, b.edge_index, b.edge_attr, b.batch, b.ptr, b.num_atoms, b.num_graphs)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--epochs', type=int, default=40)
    parser.add_argument('--ckpt', default='molnet.pt')
    args = parser.parse_args()

    rng = random.Random(0)
    molecules = [random_molecule(rng) for _ in range(4000)]
    mean, std, _ = target_normalizer(molecules)
    loader = DataLoader(molecules[:3500], batch_size=64, shuffle=True)

    model = MolNet()
    model.compile(dynamic=True)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=1e-5)
    for epoch in range(args.epochs):
        for b in loader:
            loss = F.l1_loss(forward_batch(model, b), (b.y - mean) / std)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    torch.save(model.state_dict(), args.ckpt)

    predictor = MolNet()
    predictor.load_state_dict(torch.load(args.ckpt))
    predictor = torch.compile(predictor.eval())
    screen_loader = DataLoader(molecules[3500:], batch_size=256)
    with torch.no_grad():
        preds = torch.cat([forward_batch(predictor, b) * std + mean for b in screen_loader])
    torch.save(preds, 'screen_preds.pt')


if __name__ == '__main__':
    main()
