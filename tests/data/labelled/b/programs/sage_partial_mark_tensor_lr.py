"""Products-style node classification with NeighborLoader, a compiled
GraphSAGE and a compiled optimizer update whose learning rate is a tensor, so
that the exponential decay does not retrigger compilation.
"""
import argparse

import torch
import torch.nn.functional as F

from torch_geometric.datasets import FakeDataset
from torch_geometric.loader import NeighborLoader
from torch_geometric.nn import GraphSAGE
from torch_geometric.transforms import RandomNodeSplit

c = torch.compile


def get_data(num_nodes):
    dataset = FakeDataset(num_graphs=1, avg_num_nodes=num_nodes, avg_degree=15,
                          num_channels=100, num_classes=47, task='node',
                          transform=RandomNodeSplit(num_val=0.1, num_test=0.3))
    return dataset[0], dataset.num_classes


@torch.no_grad()
def evaluate(model, loader, device):
    model.eval()
    correct = total = 0
    for batch in loader:
        batch = batch.to(device)
        pred = model(batch.x, batch.edge_index)[:batch.batch_size].argmax(dim=-1)
        correct += int((pred == batch.y[:batch.batch_size]).sum())
        total += batch.batch_size
    return correct / total


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--lr', type=float, default=0.003)
    parser.add_argument('--gamma', type=float, default=0.9)
    parser.add_argument('--epochs', type=int, default=8)
    parser.add_argument('--num_nodes', type=int, default=200_000)
    args = parser.parse_args()

    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
    data, num_classes = get_data(args.num_nodes)
    train_loader = NeighborLoader(data, input_nodes=data.train_mask,
                                  num_neighbors=[15, 10], batch_size=1024,
                                  shuffle=True, num_workers=6)
    val_loader = NeighborLoader(data, input_nodes=data.val_mask,
                                num_neighbors=[15, 10], batch_size=4096)
    test_loader = NeighborLoader(data, input_nodes=data.test_mask,
                                 num_neighbors=[15, 10], batch_size=4096)

    net = GraphSAGE(-1, 256, num_layers=2, out_channels=num_classes).to(device)
    model = torch.compile(net)
    with torch.no_grad():  # warm-up: triggers compilation before timing
        warm = next(iter(train_loader)).to(device)
        model(warm.x, warm.edge_index)

    optimizer = torch.optim.Adam(net.parameters(), lr=torch.tensor(args.lr),
                                 capturable=torch.cuda.is_available())
    scheduler = torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=args.gamma)

    @torch.compile(fullgraph=False)
    def apply_updates():
        optimizer.step()
        scheduler.step()

    for epoch in range(1, args.epochs + 1):
        model.train()
        for step, batch in enumerate(train_loader):
            batch = batch.to(device)
            torch._dynamo.mark_dynamic(batch.x, 0)
            optimizer.zero_grad()
            out = model(batch.x, batch.edge_index)[:batch.batch_size]
            loss = F.cross_entropy(out, batch.y[:batch.batch_size])
            loss.backward()
            apply_updates()
        val_acc = evaluate(net, val_loader, device)
        print(f'Epoch {epoch:02d} | val acc {val_acc:.4f}')

    infer = c(net, dynamic=True, mode='reduce-overhead')
    test_acc = evaluate(infer, test_loader, device)
    print(f'Test acc {test_acc:.4f}')


if __name__ == '__main__':
    main()
