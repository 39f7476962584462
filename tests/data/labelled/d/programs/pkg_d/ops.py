"""Tensor helpers used by pkg_d.model."""
import math

import torch
from torch_geometric.utils import degree


def feature_stats(x):
    """Per-feature mean/std used to build the input normaliser (called once)."""
    mean = x.mean(dim=0)
    std = x.std(dim=0).clamp(min=1e-6)
    if (std < 1e-3).any():
        print(f'{int((std < 1e-3).sum())} near-constant input features')
    return mean, std, mean.abs().max().item()


def check_shape(x, expected_dim):
    assert x.dim() == 2 and x.size(-1) == expected_dim, (
        f'expected [N, {expected_dim}] input, got {tuple(x.shape)}')
    return x


def check_finite(x, name):
    if not torch.isfinite(x).all():
        raise FloatingPointError(f'non-finite values in {name}')
    return x


def inverse_degree_gate(edge_index, num_nodes, max_deg_clip):
    """Gate in (0, 1] that shrinks the update of very high-degree nodes."""
    deg = degree(edge_index[1], num_nodes=num_nodes)
    max_deg = deg.max().item()
    clip = min(float(max_deg_clip), max_deg)
    return (1.0 / (1.0 + deg.clamp(max=clip).log1p())).unsqueeze(-1)


def residual_mix(h, h_new, gate, alpha):
    if alpha <= 0.0:
        return h_new
    return h + gate * alpha * (h_new - h)


def scaled_init(linear, gain):
    bound = gain * math.sqrt(6.0 / (linear.in_features + linear.out_features))
    torch.nn.init.uniform_(linear.weight, -bound, bound)
    if linear.bias is not None:
        torch.nn.init.zeros_(linear.bias)


def describe(name, t):
    """Human-readable summary for logging outside the training loop."""
    t = t.detach().float()
    return (f'{name}: shape={tuple(t.shape)} mean={t.mean().item():.4f} '
            f'std={t.std():.4f} absmax={t.abs().max():.4f}')


def topk_nodes(scores, k):
    values, index = scores.topk(k)
    return list(zip(index.cpu().tolist(), values.cpu().tolist()))
