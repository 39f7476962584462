"""Full-batch GAT with the "label reuse" trick (ogbn-arxiv style).

In every epoch a random subset of the training nodes exposes its one-hot label
as an extra input feature while the remaining training nodes are supervised.
Both the model and the masked loss are compiled.
"""
import argparse
import copy

import torch
import torch.nn.functional as F

import torch_geometric.transforms as T
from torch_geometric.datasets import FakeDataset
from torch_geometric.nn import GATConv


class LabelReuseGAT(torch.nn.Module):
    def __init__(self, in_channels, hidden, num_classes, heads=4, use_labels=True):
        super().__init__()
        self.num_classes = num_classes
        self.use_labels = use_labels
        in_dim = in_channels + (num_classes if use_labels else 0)
        self.conv1 = GATConv(in_dim, hidden, heads=heads)
        self.conv2 = GATConv(hidden * heads, hidden, heads=heads)
        self.conv3 = GATConv(hidden * heads, num_classes, heads=1, concat=False)
        self.norms = torch.nn.ModuleList(
            [torch.nn.BatchNorm1d(hidden * heads), torch.nn.BatchNorm1d(hidden * heads)])

    def forward(self, x, edge_index, y, label_mask):
        if self.use_labels:
            onehot = x.new_zeros(x.size(0), self.num_classes)
            onehot[label_mask] = F.one_hot(y[label_mask], self.num_classes).to(x.dtype)
            x = torch.cat([x, onehot], dim=-1)
        x = F.dropout(x, p=0.25, training=self.training)
        x = F.elu(self.norms[0](self.conv1(x, edge_index)))
        x = F.dropout(x, p=0.5, training=self.training)
        x = F.elu(self.norms[1](self.conv2(x, edge_index)))
        x = F.dropout(x, p=0.5, training=self.training)
        return self.conv3(x, edge_index)


def masked_nll(logits, y, mask):
    logp = logits.log_softmax(dim=-1).gather(1, y.view(-1, 1)).squeeze(1)
    return -torch.masked_select(logp, mask).mean()


def masked_accuracy(logits, y, mask):
    correct = (logits.argmax(dim=-1) == y) & mask
    return correct.sum() / mask.sum()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--num_nodes', type=int, default=8000)
    parser.add_argument('--hidden', type=int, default=64)
    parser.add_argument('--epochs', type=int, default=300)
    parser.add_argument('--mask_rate', type=float, default=0.5)
    parser.add_argument('--log_every', type=int, default=20)
    args = parser.parse_args()

    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
    dataset = FakeDataset(num_graphs=1, avg_num_nodes=args.num_nodes, avg_degree=7,
                          num_channels=128, num_classes=40, task='node',
                          transform=T.Compose([T.ToUndirected(), T.AddSelfLoops(),
                                               T.RandomNodeSplit(num_val=0.15, num_test=0.25)]))
    data = dataset[0].to(device)
    train_idx = torch.where(data.train_mask)[0]
    n_reuse = int(args.mask_rate * train_idx.numel())

    model = LabelReuseGAT(dataset.num_features, args.hidden, dataset.num_classes).to(device)
    model = torch.compile(model)
    loss_fn = torch.compile(masked_nll)
    accuracy_fn = torch.compile(masked_accuracy)
    optimizer = torch.optim.RMSprop(model.parameters(), lr=2e-3, weight_decay=5e-4)

    losses = []
    best_val_loss, best_state, best_epoch = float('inf'), None, 0
    for epoch in range(1, args.epochs + 1):
        model.train()
        perm = train_idx[torch.randperm(train_idx.numel(), device=device)]
        reuse = torch.zeros_like(data.train_mask)
        reuse[perm[:n_reuse]] = True
        supervise = data.train_mask & ~reuse

        optimizer.zero_grad()
        out = model(data.x, data.edge_index, data.y, reuse)
        loss = loss_fn(out, data.y, supervise)
        loss.backward()
        optimizer.step()
        losses.append(float(loss.detach()))

        model.eval()
        with torch.no_grad():
            out = model(data.x, data.edge_index, data.y, data.train_mask)
        val_loss = F.cross_entropy(out[data.val_mask], data.y[data.val_mask])
        val_acc = accuracy_fn(out, data.y, data.val_mask)
        if val_loss < best_val_loss:
            best_val_loss, best_epoch = val_loss, epoch
            best_state = copy.deepcopy(model.state_dict())
        if epoch % args.log_every == 0:
            print(f'Epoch {epoch:03d}  val loss {val_loss:.4f}  val acc {val_acc:.4f}  '
                  f'train loss {losses[-1]:.4f}')

    model.load_state_dict(best_state)
    model.eval()
    with torch.no_grad():
        out = model(data.x, data.edge_index, data.y, data.train_mask | data.val_mask)
    test_pred = out.argmax(dim=-1)[data.test_mask]
    test_acc = (test_pred == data.y[data.test_mask]).float().mean().item()
    print(f'best epoch {best_epoch}, test accuracy {test_acc:.4f}')
    print('first test predictions:', test_pred[:10])


if __name__ == '__main__':
    main()
