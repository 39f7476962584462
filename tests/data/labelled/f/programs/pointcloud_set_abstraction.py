"""PointNet++-style classifier for variable-size point clouds: stochastic
farthest-point-like sampling, radius grouping with batch vectors and a kNN
EdgeConv stem. Clouds come from a small synthetic shape generator."""
import argparse
import math

import torch
import torch.nn.functional as F

from torch_geometric.data import Data
from torch_geometric.loader import DataLoader
from torch_geometric.nn import (MLP, EdgeConv, PointNetConv, fps, global_max_pool,
                                global_mean_pool, knn_graph, radius)
from torch_geometric.transforms import BaseTransform
from torch_geometric.utils import degree


def make_clouds(num_per_class, gen):
    labels = torch.arange(3).repeat_interleave(num_per_class)
    clouds = []
    for y in labels.tolist():
        n = int(torch.randint(200, 600, (1,), generator=gen))
        pts = torch.randn(n, 3, generator=gen)
        if y == 0:
            pos = pts / pts.norm(dim=-1, keepdim=True)
        elif y == 1:
            pos = pts / pts.abs().max(dim=-1, keepdim=True).values
        else:
            ang = 2 * math.pi * torch.rand(n, generator=gen)
            pos = torch.stack([ang.cos(), ang.sin(), 2 * torch.rand(n, generator=gen) - 1], -1)
        clouds.append(Data(pos=pos + 0.02 * torch.randn(n, 3, generator=gen),
                           y=torch.tensor([y])))
    return clouds


class RandomPointDropout(BaseTransform):
    def __init__(self, p=0.1):
        self.p = p

    def forward(self, data):
        keep = torch.rand(data.pos.size(0)) >= self.p
        data.pos = data.pos[keep]
        return data


def stochastic_fps(pos, batch, ratio):
    """Keep points far from their cloud centroid with higher probability and
    always keep the first point of every cloud."""
    centroid = global_mean_pool(pos, batch)
    dist = (pos - centroid[batch]).norm(dim=-1)
    keep = torch.rand_like(dist) < (ratio * dist / dist.mean()).clamp(max=1.0)
    first = torch.ones_like(keep)
    first[1:] = batch[1:] != batch[:-1]
    return torch.nonzero(keep | first).view(-1)


class SetAbstraction(torch.nn.Module):
    def __init__(self, ratio, r, channels):
        super().__init__()
        self.ratio, self.r = ratio, r
        self.conv = PointNetConv(MLP(channels), add_self_loops=False)

    def forward(self, x, pos, batch, num_graphs):
        idx = stochastic_fps(pos, batch, self.ratio)
        row, col = radius(pos, pos[idx], self.r, batch, batch[idx], 64, 1, num_graphs)
        edge_index = torch.stack([col, row], dim=0)
        x = self.conv((x, x[idx]), (pos, pos[idx]), edge_index)
        return x, pos[idx], batch[idx]


class GlobalAbstraction(torch.nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.mlp = MLP(channels)

    def forward(self, x, pos, batch, num_graphs):
        x = self.mlp(torch.cat([x, pos], dim=1))
        return global_max_pool(x, batch, num_graphs)


class PointNetPP(torch.nn.Module):
    def __init__(self, num_classes, k=16):
        super().__init__()
        self.k = k
        self.stem = EdgeConv(MLP([6, 32, 32]), aggr='max')
        self.sa1 = SetAbstraction(0.5, 0.3, [32 + 3, 64, 64, 128])
        self.sa2 = SetAbstraction(0.25, 0.6, [128 + 3, 128, 128, 256])
        self.ga = GlobalAbstraction([256 + 3, 256, 512])
        self.head = MLP([512, 256, num_classes], dropout=0.5, norm=None)

    def forward(self, pos, batch, num_graphs):
        counts = degree(batch, num_graphs, dtype=torch.long)
        scale = global_max_pool(pos.norm(dim=-1, keepdim=True), batch, num_graphs)
        pos = pos / scale.repeat_interleave(counts, dim=0)
        edge_index = knn_graph(pos, self.k, batch, loop=False)
        x = self.stem(pos, edge_index)
        x, pos, batch = self.sa1(x, pos, batch, num_graphs)
        x, pos, batch = self.sa2(x, pos, batch, num_graphs)
        if not torch.compiler.is_compiling():
            assert torch.unique(batch).numel() == num_graphs, 'a cloud lost all points'
        return self.head(self.ga(x, pos, batch, num_graphs))


@torch.no_grad()
def neighbourhood_stats(loader, k, r):
    data = next(iter(loader))
    edge_index = knn_graph(data.pos, k, data.batch)
    centers = fps(data.pos, data.batch, ratio=0.25)
    row, _ = radius(data.pos, data.pos[centers], r, data.batch, data.batch[centers])
    per_center = degree(row, centers.numel())
    empty = (per_center == 0).nonzero().view(-1)
    print(f'knn edges {edge_index.size(1)}, {centers.numel()} centers, '
          f'{empty.numel()} empty balls at r={r}')


@torch.no_grad()
def test(model, loader):
    model.eval()
    hits = torch.zeros(3)
    seen = torch.zeros(3)
    for data in loader:
        pred = model(data.pos, data.batch, data.num_graphs).argmax(dim=-1)
        for c in range(3):
            hits[c] += (pred[data.y == c] == c).sum()
            seen[c] += (data.y == c).sum()
    return hits / seen.clamp(min=1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--epochs', type=int, default=30)
    parser.add_argument('--batch_size', type=int, default=16)
    args = parser.parse_args()

    gen = torch.Generator().manual_seed(0)
    clouds = make_clouds(120, gen)
    perm = torch.randperm(len(clouds), generator=gen).tolist()
    train = [RandomPointDropout(0.1)(clouds[i]) for i in perm[:300]]
    test_set = [clouds[i] for i in perm[300:]]
    train_loader = DataLoader(train, batch_size=args.batch_size, shuffle=True)
    test_loader = DataLoader(test_set, batch_size=args.batch_size)
    neighbourhood_stats(train_loader, k=16, r=0.3)

    model = PointNetPP(num_classes=3)
    model.compile(dynamic=True)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(1, args.epochs + 1):
        model.train()
        for data in train_loader:
            optimizer.zero_grad()
            out = model(data.pos, data.batch, data.num_graphs)
            F.cross_entropy(out, data.y).backward()
            optimizer.step()
        if epoch % 5 == 0:
            print(f'epoch {epoch:02d} per-class acc {test(model, test_loader)}')


if __name__ == '__main__':
    main()
