"""Mini-batch GraphSAGE on a large synthetic product graph (ogbn-products
style). Training uses NeighborLoader; evaluation uses layer-wise inference over
all nodes, which is exact and cheaper than sampling for every layer.
"""
import argparse
import time

import torch
import torch.nn.functional as F

import torch_geometric.transforms as T
from torch_geometric.datasets import FakeDataset
from torch_geometric.loader import NeighborLoader
from torch_geometric.nn import SAGEConv


class SAGE(torch.nn.Module):
    def __init__(self, in_channels, hidden_channels, out_channels, num_layers=3):
        super().__init__()
        self.convs = torch.nn.ModuleList()
        self.convs.append(SAGEConv(in_channels, hidden_channels))
        for _ in range(num_layers - 2):
            self.convs.append(SAGEConv(hidden_channels, hidden_channels))
        self.convs.append(SAGEConv(hidden_channels, out_channels))

    def forward(self, x, edge_index):
        for i, conv in enumerate(self.convs):
            x = conv(x, edge_index)
            if i < len(self.convs) - 1:
                x = x.relu_()
                x = F.dropout(x, p=0.5, training=self.training)
        return x

    @torch.no_grad()
    def inference(self, x_all, subgraph_loader, device):
        # Compute representations layer by layer over *all* nodes.
        for i, conv in enumerate(self.convs):
            xs = []
            for batch in subgraph_loader:
                x = x_all[batch.n_id.to(x_all.device)].to(device)
                x = conv(x, batch.edge_index.to(device))
                if i < len(self.convs) - 1:
                    x = x.relu_()
                xs.append(x[:batch.batch_size].cpu())
            x_all = torch.cat(xs, dim=0)
        return x_all


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--num_nodes', type=int, default=100_000)
    parser.add_argument('--epochs', type=int, default=10)
    parser.add_argument('--batch_size', type=int, default=1024)
    parser.add_argument('--hidden', type=int, default=256)
    parser.add_argument('--log_every', type=int, default=100)
    args = parser.parse_args()

    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
    dataset = FakeDataset(num_graphs=1, avg_num_nodes=args.num_nodes, avg_degree=12,
                          num_channels=100, num_classes=47, task='node',
                          transform=T.RandomNodeSplit(num_val=0.05, num_test=0.2))
    data = dataset[0]
    print(data)
    print(f'train/val/test: {int(data.train_mask.sum())}/{data.val_mask.sum().item()}'
          f'/{data.test_mask.sum().item()}')

    train_loader = NeighborLoader(data, input_nodes=data.train_mask,
                                  num_neighbors=[15, 10, 5], shuffle=True,
                                  batch_size=args.batch_size, num_workers=4,
                                  persistent_workers=True)
    subgraph_loader = NeighborLoader(data, input_nodes=None, num_neighbors=[-1],
                                     batch_size=4096, num_workers=4)

    model = SAGE(dataset.num_features, args.hidden, dataset.num_classes).to(device)
    model.compile(dynamic=True)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.003)

    def train(epoch):
        model.train()
        total_loss = total_correct = total_examples = 0
        for step, batch in enumerate(train_loader):
            batch = batch.to(device)
            optimizer.zero_grad()
            out = model(batch.x, batch.edge_index)[:batch.batch_size]
            y = batch.y[:batch.batch_size]
            loss = F.cross_entropy(out, y)
            loss.backward()
            optimizer.step()
            total_loss += float(loss) * batch.batch_size
            total_correct += int(out.argmax(dim=-1).eq(y).sum())
            total_examples += batch.batch_size
            if step % args.log_every == 0:
                print(f'Epoch {epoch:02d} | step {step:05d} | loss {loss.item():.4f}')
        return total_loss / total_examples, total_correct / total_examples

    @torch.no_grad()
    def test():
        model.eval()
        out = model.inference(data.x, subgraph_loader, device)
        y_pred = out.argmax(dim=-1)
        accs = []
        for mask in [data.train_mask, data.val_mask, data.test_mask]:
            accs.append(int((y_pred[mask] == data.y[mask]).sum()) / int(mask.sum()))
        return accs

    best_val = final_test = 0.0
    for epoch in range(1, args.epochs + 1):
        start = time.time()
        loss, approx_acc = train(epoch)
        print(f'Epoch {epoch:02d} | loss {loss:.4f} | approx. train acc {approx_acc:.4f} '
              f'| {time.time() - start:.1f}s')
        if epoch % 2 == 0 or epoch == args.epochs:
            train_acc, val_acc, test_acc = test()
            if val_acc > best_val:
                best_val, final_test = val_acc, test_acc
            print(f'        train {train_acc:.4f} | val {val_acc:.4f} | test {test_acc:.4f}')
    print(f'final test accuracy @ best val: {final_test:.4f}')


if __name__ == '__main__':
    main()
