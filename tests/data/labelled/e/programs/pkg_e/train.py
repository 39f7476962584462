"""Train the pkg_e node classifier with NeighborLoader, then fit a temperature
on the validation logits.  python -m pkg_e.train"""
import argparse

import torch
import torch.nn.functional as F

import torch_geometric.transforms as T
from torch_geometric.datasets import FakeDataset
from torch_geometric.loader import NeighborLoader

from .model import build_model, build_optimizer


class TemperatureScaling(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.log_t = torch.nn.Parameter(torch.zeros(()))

    def forward(self, logits):
        return logits / self.log_t.exp()


@torch.no_grad()
def collect_logits(model, loader, device):
    model.eval()
    logits, labels = [], []
    for batch in loader:
        batch = batch.to(device)
        logits.append(model(batch.x, batch.edge_index)[:batch.batch_size])
        labels.append(batch.y[:batch.batch_size])
    return torch.cat(logits), torch.cat(labels)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--hidden', type=int, default=128)
    parser.add_argument('--lr', type=float, default=0.01)
    parser.add_argument('--epochs', type=int, default=20)
    parser.add_argument('--no-cuda-graphs', action='store_true')
    args = parser.parse_args()

    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
    dataset = FakeDataset(num_graphs=1, avg_num_nodes=20_000, avg_degree=10,
                          num_channels=40, num_classes=7, task='node',
                          transform=T.RandomNodeSplit(num_val=0.1, num_test=0.1))
    data = dataset[0]
    train_loader = NeighborLoader(data, input_nodes=data.train_mask,
                                  num_neighbors=[10, 10], batch_size=1024, shuffle=True)
    val_loader = NeighborLoader(data, input_nodes=data.val_mask,
                                num_neighbors=[10, 10], batch_size=1024)

    model = build_model(args.hidden, dataset.num_classes, device,
                        cuda_graphs=not args.no_cuda_graphs)
    optimizer, scheduler, opt_step = build_optimizer(model, args.lr)

    for epoch in range(1, args.epochs + 1):
        model.train()
        total = torch.zeros((), device=device)
        for batch in train_loader:
            batch = batch.to(device)
            optimizer.zero_grad(set_to_none=True)
            out = model(batch.x, batch.edge_index)[:batch.batch_size]
            loss = F.cross_entropy(out, batch.y[:batch.batch_size])
            loss.backward()
            opt_step()
            total += loss.detach()
        scheduler.step()
        print(f'epoch {epoch:02d}  mean loss {total / len(train_loader):.4f}')

    # Post-hoc calibration on the (fixed) set of validation logits.
    val_logits, val_y = collect_logits(model, val_loader, device)
    temp = TemperatureScaling().to(device)
    torch.compile(temp)
    lbfgs = torch.optim.LBFGS(temp.parameters(), lr=0.01, max_iter=100)

    def closure():
        lbfgs.zero_grad()
        nll = F.cross_entropy(temp(val_logits), val_y)
        nll.backward()
        return nll

    lbfgs.step(closure)
    print(f'fitted temperature {temp.log_t.exp():.3f}')


if __name__ == '__main__':
    main()
