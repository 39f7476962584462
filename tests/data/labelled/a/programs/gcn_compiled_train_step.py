"""Full-batch GCN node classification where the whole optimisation step is
compiled with a @torch.compile decorator (forward, loss, backward, Adam).

Class imbalance is handled with inverse-frequency class weights that are
computed once from the training split.
"""
import argparse
import time

import torch
import torch.nn.functional as F

import torch_geometric.transforms as T
from torch_geometric.datasets import FakeDataset
from torch_geometric.nn import GCNConv
from torch_geometric.utils import degree


class GCN(torch.nn.Module):
    def __init__(self, in_channels, hidden_channels, out_channels, dropout=0.5):
        super().__init__()
        self.conv1 = GCNConv(in_channels, hidden_channels, cached=True)
        self.conv2 = GCNConv(hidden_channels, out_channels, cached=True)
        self.dropout = dropout

    def forward(self, x, edge_index):
        x = F.dropout(x, p=self.dropout, training=self.training)
        x = self.conv1(x, edge_index).relu()
        x = F.dropout(x, p=self.dropout, training=self.training)
        return self.conv2(x, edge_index)


@torch.compile(dynamic=False)
def train_step(model, optimizer, x, edge_index, y, train_mask, class_weight):
    model.train()
    optimizer.zero_grad(set_to_none=True)
    out = model(x, edge_index)
    loss = F.cross_entropy(out[train_mask], y[train_mask], weight=class_weight)
    loss.backward()
    optimizer.step()
    return loss.detach()


@torch.compile(dynamic=False)
def pseudo_labels(model, x, edge_index, threshold: float):
    model.eval()
    conf, pred = model(x, edge_index).softmax(dim=-1).max(dim=-1)
    confident = torch.nonzero(conf > threshold).view(-1)
    return confident, pred[confident]


@torch.no_grad()
def evaluate(model, data):
    model.eval()
    pred = model(data.x, data.edge_index).argmax(dim=-1)
    val_acc = (pred[data.val_mask] == data.y[data.val_mask]).float().mean()
    test_acc = (pred[data.test_mask] == data.y[data.test_mask]).float().mean()
    return val_acc.item(), test_acc.item()


def class_weights(data, num_classes):
    counts = torch.bincount(data.y[data.train_mask], minlength=num_classes)
    print('training nodes per class:', counts.tolist())
    weight = counts.sum() / counts.clamp(min=1).float()
    return weight / weight.mean()


def describe_graph(data):
    deg = degree(data.edge_index[1], num_nodes=data.num_nodes)
    isolated = (deg == 0).nonzero().view(-1)
    print(f'{data.num_nodes} nodes, {data.num_edges} edges, '
          f'{isolated.numel()} isolated, max degree {int(deg.max())}')
    if data.train_mask.sum() < 20:
        print('warning: very small training split')


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--num_nodes', type=int, default=3000)
    parser.add_argument('--hidden', type=int, default=32)
    parser.add_argument('--lr', type=float, default=0.01)
    parser.add_argument('--epochs', type=int, default=200)
    parser.add_argument('--patience', type=int, default=50)
    parser.add_argument('--log_every', type=int, default=10)
    parser.add_argument('--self_train_every', type=int, default=50)
    parser.add_argument('--threshold', type=float, default=0.95)
    args = parser.parse_args()

    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
    dataset = FakeDataset(num_graphs=1, avg_num_nodes=args.num_nodes, avg_degree=5,
                          num_channels=64, num_classes=6, task='node',
                          transform=T.Compose([T.RandomNodeSplit(num_val=500, num_test=1000),
                                               T.NormalizeFeatures()]))
    data = dataset[0].to(device)
    num_classes = int(data.y.max()) + 1
    describe_graph(data)
    weight = class_weights(data, num_classes).to(device)

    model = GCN(dataset.num_features, args.hidden, num_classes).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr, weight_decay=5e-4)

    # Self-training: confident predictions are added as pseudo-labels.
    train_mask, y_train = data.train_mask.clone(), data.y.clone()
    history = []
    best_val = best_test = 0.0
    best_epoch = bad_epochs = 0
    start = time.perf_counter()
    for epoch in range(1, args.epochs + 1):
        loss = train_step(model, optimizer, data.x, data.edge_index, y_train,
                          train_mask, weight)
        history.append(loss.item())
        val_acc, test_acc = evaluate(model, data)
        if val_acc > best_val:
            best_val, best_test, best_epoch, bad_epochs = val_acc, test_acc, epoch, 0
        else:
            bad_epochs += 1
        if epoch % args.self_train_every == 0:
            with torch.no_grad():
                idx, pseudo = pseudo_labels(model, data.x, data.edge_index, args.threshold)
            idx_new = ~train_mask[idx] & ~data.val_mask[idx] & ~data.test_mask[idx]
            y_train[idx] = torch.where(idx_new, pseudo, y_train[idx])
            train_mask[idx] |= idx_new
            print(f'epoch {epoch}: {idx.numel()} confident predictions')
        if epoch % args.log_every == 0:
            print(f'Epoch {epoch:03d}  loss {loss:.4f}  val {val_acc:.4f}  test {test_acc:.4f}')
        if bad_epochs >= args.patience:
            print(f'early stopping at epoch {epoch}')
            break

    elapsed = time.perf_counter() - start
    print(f'{len(history)} epochs in {elapsed:.1f}s, final loss {history[-1]:.4f}')
    print(f'best epoch {best_epoch}: val {best_val:.4f}, test {best_test:.4f}')


if __name__ == '__main__':
    main()
