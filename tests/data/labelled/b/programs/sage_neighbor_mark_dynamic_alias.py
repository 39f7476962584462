"""Node classification on a large graph with NeighborLoader mini-batches.

The training model is compiled once; every mini-batch has a different number
of sampled nodes and edges, so the varying dimensions are marked dynamic by
hand. A separate compiled copy is used for batched inference on the test nodes.
"""
import argparse
import time

import torch as T
import torch.nn.functional as F

from torch_geometric.datasets import FakeDataset
from torch_geometric.loader import NeighborLoader
from torch_geometric.nn import GraphSAGE
from torch_geometric.transforms import RandomNodeSplit


def make_loaders(data, batch_size, num_workers):
    kwargs = dict(batch_size=batch_size, num_workers=num_workers,
                  persistent_workers=num_workers > 0)
    train_loader = NeighborLoader(data, num_neighbors=[15, 10, 5],
                                  input_nodes=data.train_mask, shuffle=True,
                                  **kwargs)
    eval_loader = NeighborLoader(data, num_neighbors=[15, 10, 5],
                                 input_nodes=data.test_mask, **kwargs)
    return train_loader, eval_loader


def mark_batch_dynamic(batch):
    # Number of sampled nodes and number of sampled edges change every batch.
    T._dynamo.mark_dynamic(batch.x, 0)
    T._dynamo.mark_dynamic(batch.edge_index, 1)
    return batch


def train_epoch(model, loader, optimizer, device):
    model.train()
    total_loss = T.zeros((), device=device)
    total_examples = 0
    for batch in loader:
        batch = mark_batch_dynamic(batch.to(device))
        optimizer.zero_grad()
        out = model(batch.x, batch.edge_index)[:batch.batch_size]
        loss = F.cross_entropy(out, batch.y[:batch.batch_size])
        loss.backward()
        optimizer.step()
        total_loss += loss.detach() * batch.batch_size
        total_examples += batch.batch_size
    return total_loss / total_examples


@T.no_grad()
def evaluate(model, loader, device):
    model.eval()
    correct = T.zeros((), dtype=T.long, device=device)
    total = 0
    for batch in loader:
        batch = batch.to(device)
        out = model(batch.x, batch.edge_index)[:batch.batch_size]
        correct += (out.argmax(dim=-1) == batch.y[:batch.batch_size]).sum()
        total += batch.batch_size
    return correct / total


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--lr', type=float, default=0.003)
    parser.add_argument('--epochs', type=int, default=10)
    parser.add_argument('--batch_size', type=int, default=1024)
    parser.add_argument('--num_workers', type=int, default=4)
    args = parser.parse_args()

    device = T.device('cuda' if T.cuda.is_available() else 'cpu')
    dataset = FakeDataset(num_graphs=1, avg_num_nodes=100_000, avg_degree=12,
                          num_channels=100, num_classes=47, task='node',
                          transform=RandomNodeSplit(num_val=0.05, num_test=0.2))
    data = dataset[0]
    train_loader, eval_loader = make_loaders(data, args.batch_size, args.num_workers)

    net = GraphSAGE(dataset.num_features, 256, num_layers=3,
                    out_channels=dataset.num_classes, dropout=0.5).to(device)
    model = T.compile(net)
    optimizer = T.optim.Adam(net.parameters(), lr=args.lr)
    scheduler = T.optim.lr_scheduler.StepLR(optimizer, step_size=3, gamma=0.5)

    for epoch in range(1, args.epochs + 1):
        start = time.perf_counter()
        loss = train_epoch(model, train_loader, optimizer, device)
        scheduler.step()
        print(f'Epoch {epoch:02d} | loss {float(loss):.4f} | '
              f'{time.perf_counter() - start:.1f}s')

    infer_model = T.compile(net, mode='reduce-overhead')
    acc = evaluate(infer_model, eval_loader, device)
    print(f'Test accuracy: {float(acc):.4f}')


if __name__ == '__main__':
    main()
