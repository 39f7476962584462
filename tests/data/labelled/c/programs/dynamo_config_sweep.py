"""Hyper-parameter sweep over GraphSAGE graph classifiers.  Every configuration
is compiled; dynamo settings are tuned up front through module aliases."""
import argparse
import itertools

import torch
import torch._dynamo as dynamo
import torch._inductor.config as inductor_config
import torch.nn.functional as F
from torch._dynamo import config as dynamo_config

from torch_geometric.datasets import FakeDataset
from torch_geometric.loader import DataLoader
from torch_geometric.nn import SAGEConv, global_add_pool
from torch_geometric.utils import softmax

HIDDEN = [32, 64, 128]
LAYERS = [2, 3, 4]


def configure_dynamo(args):
    if args.keep_going:
        dynamo.config.suppress_errors = True
    else:
        dynamo.config.suppress_errors = False
    dynamo.config.verbose = args.verbose
    dynamo_config.capture_scalar_outputs = True
    inductor_config.fx_graph_cache = True
    old_limit = dynamo_config.cache_size_limit
    dynamo_config.cache_size_limit = max(old_limit, 4 * len(HIDDEN) * len(LAYERS))
    print(f'dynamo recompile limit {old_limit} -> {dynamo.config.cache_size_limit}')


class SAGEClassifier(torch.nn.Module):
    def __init__(self, in_channels, hidden, out_channels, num_layers):
        super().__init__()
        self.convs = torch.nn.ModuleList(
            [SAGEConv(in_channels if i == 0 else hidden, hidden) for i in range(num_layers)])
        self.gate = torch.nn.Linear(hidden, 1)
        self.out = torch.nn.Linear(2 * hidden, out_channels)

    def forward(self, x, edge_index, batch, num_graphs):
        for conv in self.convs:
            x = conv(x, edge_index).relu()
        attn = softmax(self.gate(x), batch)
        g_att = global_add_pool(attn * x, batch, size=num_graphs)
        g_sum = global_add_pool(x, batch, size=num_graphs)
        return self.out(torch.cat([g_att, g_sum], dim=-1))


def run(cfg, train_loader, test_loader, in_channels, num_classes, epochs):
    hidden, num_layers = cfg
    model = torch.compile(SAGEClassifier(in_channels, hidden, num_classes, num_layers),
                          dynamic=True)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for _ in range(epochs):
        model.train()
        for data in train_loader:
            optimizer.zero_grad()
            out = model(data.x, data.edge_index, data.batch, data.num_graphs)
            F.cross_entropy(out, data.y).backward()
            optimizer.step()
    model.eval()
    correct = torch.zeros(())
    with torch.no_grad():
        for data in test_loader:
            pred = model(data.x, data.edge_index, data.batch, data.num_graphs).argmax(-1)
            correct += (pred == data.y).sum()
    return correct / len(test_loader.dataset)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--epochs', type=int, default=10)
    parser.add_argument('--keep_going', action='store_true')
    parser.add_argument('--verbose', action='store_true')
    parser.add_argument('--strict', action='store_true')
    args = parser.parse_args()

    configure_dynamo(args)
    if args.strict:
        dynamo_config.cache_size_limit = 4
        dynamo.config.suppress_errors = False

    dataset = FakeDataset(num_graphs=1500, avg_num_nodes=30, avg_degree=4,
                          num_channels=16, num_classes=3, task='graph')
    train_loader = DataLoader(dataset[:1200], batch_size=64, shuffle=True)
    test_loader = DataLoader(dataset[1200:], batch_size=128)

    results = {}
    for cfg in itertools.product(HIDDEN, LAYERS):
        results[cfg] = run(cfg, train_loader, test_loader, dataset.num_features,
                           dataset.num_classes, args.epochs)
        print(cfg, f'{results[cfg].item():.4f}')
        dynamo.reset()

    best = max(results, key=lambda k: results[k].item())
    print('best config', best, 'recompile limit was', dynamo.config.cache_size_limit)

    with dynamo.config.patch(suppress_errors=True):
        final = run(best, train_loader, test_loader, dataset.num_features,
                    dataset.num_classes, 2 * args.epochs)
    print(f'final accuracy {final.item():.4f}')
    torch._dynamo.config.cache_size_limit = 8


if __name__ == '__main__':
    main()
