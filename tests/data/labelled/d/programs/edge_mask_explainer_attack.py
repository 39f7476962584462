"""Post-hoc analysis of a trained GCN: (1) a GNNExplainer-style edge mask for a
single node, optimised for a fixed number of iterations, and (2) a small
feature-perturbation attack that runs until the prediction flips."""
import argparse
import time

import numpy as np
import torch
import torch.nn.functional as F

from torch_geometric.datasets import FakeDataset
from torch_geometric.nn import MessagePassing
from torch_geometric.transforms import RandomNodeSplit
from torch_geometric.utils import add_self_loops, k_hop_subgraph


class WeightedConv(MessagePassing):
    def __init__(self, in_channels, out_channels):
        super().__init__(aggr='mean')
        self.lin = torch.nn.Linear(in_channels, out_channels)

    def forward(self, x, edge_index, edge_weight):
        edge_index, edge_weight = add_self_loops(edge_index, edge_weight, fill_value=1.0,
                                                 num_nodes=x.size(0))
        return self.propagate(edge_index, x=self.lin(x), edge_weight=edge_weight)

    def message(self, x_j, edge_weight):
        if edge_weight.min() < 0:
            raise ValueError('edge weights must be non-negative')
        return edge_weight.view(-1, 1) * x_j


class Net(torch.nn.Module):
    def __init__(self, in_channels, hidden, out_channels):
        super().__init__()
        self.conv1 = WeightedConv(in_channels, hidden)
        self.conv2 = WeightedConv(hidden, out_channels)

    def forward(self, x, edge_index, edge_weight):
        x = self.conv1(x, edge_index, edge_weight).relu()
        return self.conv2(x, edge_index, edge_weight)


def fit(model, data, epochs=200):
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
    ones = torch.ones(data.num_edges, device=data.x.device)
    for epoch in range(1, epochs + 1):
        optimizer.zero_grad()
        out = model(data.x, data.edge_index, ones)
        loss = F.cross_entropy(out[data.train_mask], data.y[data.train_mask])
        loss.backward()
        optimizer.step()
        if epoch % 50 == 0:
            print(f'[fit] epoch {epoch:03d} loss {loss:.4f}')


def explain_node(model, x, edge_index, target, node, iters, coeff_size=0.005):
    edge_mask = torch.nn.Parameter(0.1 * torch.randn(edge_index.size(1), device=x.device))
    optimizer = torch.optim.Adam([edge_mask], lr=0.01)
    history = []
    for it in range(iters):
        optimizer.zero_grad()
        m = edge_mask.sigmoid()
        log_prob = model(x, edge_index, m)[node].log_softmax(dim=-1)
        ent = -(m * (m + 1e-15).log() + (1 - m) * (1 - m + 1e-15).log()).mean()
        loss = -log_prob[target] + coeff_size * m.sum() + ent
        loss.backward()
        optimizer.step()
        history.append(loss.item())
        if m.max() < 0.01:
            print(f'mask collapsed after {it} iterations')
            break
    return edge_mask.detach().sigmoid(), history


def flip_attack(model, x, edge_index, node, eps=0.5, step_size=0.05, max_iter=100):
    ones = torch.ones(edge_index.size(1), device=x.device)
    with torch.no_grad():
        orig = model(x, edge_index, ones)[node].argmax()
    delta = torch.zeros_like(x[node], requires_grad=True)
    it = 0
    flipped = False
    while it < max_iter and not flipped:
        x_adv = x.clone()
        x_adv[node] = x[node] + delta
        logits = model(x_adv, edge_index, ones)[node]
        F.cross_entropy(logits.unsqueeze(0), orig.view(1)).backward()
        with torch.no_grad():
            delta += step_size * delta.grad.sign()
            delta.clamp_(-eps, eps)
            delta.grad.zero_()
        flipped = bool(logits.argmax() != orig)
        it += 1
    return it, flipped, delta.detach()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--node', type=int, default=10)
    parser.add_argument('--iters', type=int, default=300)
    parser.add_argument('--top_k', type=int, default=8)
    args = parser.parse_args()

    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
    data = FakeDataset(num_graphs=1, avg_num_nodes=3000, avg_degree=5, num_channels=32,
                       num_classes=5, task='node', transform=RandomNodeSplit())[0].to(device)
    model = torch.compile(Net(32, 64, 5).to(device), dynamic=True)
    fit(model, data)
    model.eval()
    for p in model.parameters():
        p.requires_grad_(False)

    subset, sub_edge_index, mapping, _ = k_hop_subgraph(
        args.node, 2, data.edge_index, relabel_nodes=True, num_nodes=data.num_nodes)
    sub_x = data.x[subset]
    center = mapping.item()
    target = int(data.y[args.node])
    print(f'node {args.node}: {subset.numel()} nodes in its 2-hop subgraph')

    t0 = time.perf_counter()
    mask, history = explain_node(model, sub_x, sub_edge_index, target, center, args.iters)
    print(f'explanation took {time.perf_counter() - t0:.2f}s, final loss {history[-1]:.4f}')
    top = mask.topk(min(args.top_k, mask.numel())).indices
    global_ids = subset[sub_edge_index[:, top]].t().cpu().numpy()
    for (src, dst), w in zip(global_ids, mask[top].tolist()):
        print(f'  {int(src):5d} -> {int(dst):5d}  weight {w:.3f}')
    curve = np.asarray(history)
    print('loss improvement:', (curve[0] - curve.min()).item())

    steps, flipped, delta = flip_attack(model, sub_x, sub_edge_index, center)
    print(f'attack: flipped={flipped} after {steps} steps, '
          f'|delta|_inf={delta.abs().max():.3f}')


if __name__ == '__main__':
    main()
