"""Graph classification where the whole training step (forward, loss,
backward, SGD update) is one compiled function rather than a compiled module.
Node features are extended by T.LocalDegreeProfile, so the GNN uses lazy
input channels that are materialised eagerly on the first batch. Node and edge
counts vary per batch and are marked dynamic; the number of graphs per
training batch is fixed by drop_last=True."""
import argparse

import torch
import torch.nn.functional as F

import torch_geometric.transforms as T
from torch_geometric.datasets import FakeDataset
from torch_geometric.loader import DataLoader
from torch_geometric.nn import GraphSAGE, global_mean_pool

BATCH_SIZE = 64


class Classifier(torch.nn.Module):
    def __init__(self, hidden, num_classes):
        super().__init__()
        self.gnn = GraphSAGE(-1, hidden, num_layers=3, jk='last', dropout=0.1)
        self.out = torch.nn.Linear(hidden, num_classes)

    def forward(self, x, edge_index, batch, num_graphs: int):
        h = self.gnn(x, edge_index)
        return self.out(global_mean_pool(h, batch, size=num_graphs))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--hidden', type=int, default=96)
    parser.add_argument('--lr', type=float, default=0.05)
    parser.add_argument('--epochs', type=int, default=25)
    args = parser.parse_args()

    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
    dataset = FakeDataset(num_graphs=3000, avg_num_nodes=25, avg_degree=3,
                          num_channels=8, num_classes=5, task='graph',
                          transform=T.LocalDegreeProfile())
    train_loader = DataLoader(dataset[:2500], batch_size=BATCH_SIZE, shuffle=True,
                              drop_last=True)
    test_loader = DataLoader(dataset[2500:], batch_size=256)

    model = Classifier(args.hidden, dataset.num_classes).to(device)
    with torch.no_grad():  # initialise the in_channels=-1 layers eagerly
        warm = next(iter(train_loader)).to(device)
        model(warm.x, warm.edge_index, warm.batch, BATCH_SIZE)

    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9,
                                nesterov=True, weight_decay=5e-4)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(
        optimizer, max_lr=args.lr, epochs=args.epochs,
        steps_per_epoch=len(train_loader))

    @torch.compile
    def train_step(batch):
        optimizer.zero_grad(set_to_none=True)
        out = model(batch.x, batch.edge_index, batch.batch, BATCH_SIZE)
        loss = F.cross_entropy(out, batch.y)
        loss.backward()
        optimizer.step()
        return loss.detach()

    @torch.no_grad()
    @torch.compile(mode='reduce-overhead', dynamic=True)
    def predict(x, edge_index, batch, num_graphs: int):
        return model(x, edge_index, batch, num_graphs).argmax(dim=-1)

    for epoch in range(1, args.epochs + 1):
        model.train()
        losses = []
        for batch in train_loader:
            batch = batch.to(device)
            torch._dynamo.mark_dynamic(batch.x, 0)
            torch._dynamo.mark_dynamic(batch.edge_index, 1)
            torch._dynamo.mark_dynamic(batch.batch, 0)
            losses.append(train_step(batch))
            scheduler.step()

        model.eval()
        correct = torch.zeros((), dtype=torch.long, device=device)
        for batch in test_loader:
            batch = batch.to(device)
            pred = predict(batch.x, batch.edge_index, batch.batch, batch.num_graphs)
            correct += (pred == batch.y).sum()
        mean_loss = torch.stack(losses).mean()
        acc = correct / len(test_loader.dataset)
        print(f'epoch {epoch:02d}  loss {mean_loss:.4f}  test acc {acc:.4f}')


if __name__ == '__main__':
    main()
