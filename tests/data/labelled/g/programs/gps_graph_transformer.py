"""GPS-style graph transformer for graph classification: local GIN message
passing plus global multi-head attention over each graph's nodes. The dense
padded batch and its key-padding mask are built inside the compiled forward."""
import argparse
import random

import torch
import torch.nn.functional as F
from torch.nn import LayerNorm, Linear, MultiheadAttention

from torch_geometric.data import Data
from torch_geometric.loader import DataLoader
from torch_geometric.nn import GINConv, global_add_pool
from torch_geometric.utils import degree, to_dense_batch


class GPSLayer(torch.nn.Module):
    def __init__(self, hidden, heads, dropout):
        super().__init__()
        mlp = torch.nn.Sequential(Linear(hidden, hidden), torch.nn.ReLU(), Linear(hidden, hidden))
        self.local = GINConv(mlp)
        self.attn = MultiheadAttention(hidden, heads, dropout=dropout, batch_first=True)
        self.norm1 = LayerNorm(hidden)
        self.norm2 = LayerNorm(hidden)
        self.dropout = float(dropout)

    def forward(self, x, edge_index, batch, num_graphs: int, max_nodes: int):
        h_local = self.local(x, edge_index)
        h_dense, mask = to_dense_batch(x, batch, batch_size=num_graphs, max_num_nodes=max_nodes)
        if not mask.any(dim=1).all():
            raise ValueError('batch contains an empty graph')
        h_attn, _ = self.attn(h_dense, h_dense, h_dense, key_padding_mask=~mask,
                              need_weights=False)
        h_attn = h_attn[mask]
        h = self.norm1(x + F.dropout(h_local, self.dropout, self.training))
        return self.norm2(h + F.dropout(h_attn, self.dropout, self.training))


class GPS(torch.nn.Module):
    def __init__(self, in_channels, hidden, num_classes, num_layers=3, heads=4, dropout=0.1,
                 debug=False):
        super().__init__()
        self.debug = debug
        self.lin_in = Linear(in_channels, hidden)
        self.pe_lin = Linear(1, hidden)
        self.layers = torch.nn.ModuleList(
            [GPSLayer(hidden, heads, dropout) for _ in range(num_layers)])
        self.head = Linear(hidden, num_classes)

    def forward(self, x, edge_index, batch, num_graphs: int, max_nodes: int):
        deg = degree(edge_index[1], num_nodes=x.size(0)).unsqueeze(-1)
        h = self.lin_in(x) + self.pe_lin(torch.log1p(deg))
        h = torch.where(deg > 0, h, torch.zeros_like(h))
        for layer in self.layers:
            h = layer(h, edge_index, batch, num_graphs, max_nodes)
        if self.debug and not torch.compiler.is_compiling():
            print('node embedding norm', h.norm())
        return self.head(global_add_pool(h, batch, size=num_graphs))


def synthetic(n, num_classes, rng):
    graphs = []
    for _ in range(n):
        k = rng.randint(8, 40)
        label = rng.randrange(num_classes)
        edge_index = torch.randint(0, k, (2, 4 * k))
        graphs.append(Data(x=torch.randn(k, 16) + 0.3 * label, edge_index=edge_index,
                           y=torch.tensor([label])))
    return graphs


def train(model, loader, optimizer, device):
    model.train()
    total_loss = torch.zeros((), device=device)
    for data in loader:
        data = data.to(device)
        max_nodes = int(data.batch.bincount().max())
        optimizer.zero_grad()
        out = model(data.x, data.edge_index, data.batch, data.num_graphs, max_nodes)
        loss = F.cross_entropy(out, data.y)
        loss.backward()
        optimizer.step()
        total_loss += loss.detach() * data.num_graphs
    return total_loss / len(loader.dataset)


@torch.no_grad()
def evaluate(model, loader, device):
    model.eval()
    correct = 0
    preds = []
    for data in loader:
        data = data.to(device)
        max_nodes = int(data.batch.bincount().max())
        pred = model(data.x, data.edge_index, data.batch, data.num_graphs, max_nodes).argmax(-1)
        correct += (pred == data.y).sum()
        preds.append(pred)
    preds = torch.cat(preds)
    print('predicted class histogram:', torch.bincount(preds).tolist())
    return float(correct) / len(loader.dataset)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--epochs', type=int, default=30)
    parser.add_argument('--hidden', type=int, default=64)
    args = parser.parse_args()

    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
    rng = random.Random(12345)
    dataset = synthetic(1200, 3, rng)
    classes = torch.unique(torch.cat([d.y for d in dataset]))
    num_classes = int(classes.numel())
    train_loader = DataLoader(dataset[:1000], batch_size=32, shuffle=True)
    val_loader = DataLoader(dataset[1000:], batch_size=64)

    model = GPS(16, args.hidden, num_classes).to(device)
    model = torch.compile(model, dynamic=True)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-5)

    best_val = 0.0
    for epoch in range(1, args.epochs + 1):
        loss = train(model, train_loader, optimizer, device)
        val_acc = evaluate(model, val_loader, device)
        if val_acc > best_val:
            best_val = val_acc
            torch.save(model.state_dict(), 'gps_best.pt')
        print(f'Epoch {epoch:02d} loss {loss:.4f} val acc {val_acc:.4f}')
    print(f'best val acc {best_val:.4f}')


if __name__ == '__main__':
    main()
