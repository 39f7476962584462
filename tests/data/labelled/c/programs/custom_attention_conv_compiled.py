"""Node classification with two hand-written attention convolutions (a GAT-like
additive attention and a dot-product gated conv), compiled full-batch.
After training, attention scores are recomputed eagerly for inspection."""
import argparse
import math

import torch
import torch.nn.functional as F

from torch_geometric.datasets import FakeDataset
from torch_geometric.nn import MessagePassing, global_mean_pool
from torch_geometric.transforms import RandomNodeSplit
from torch_geometric.utils import add_self_loops, degree, scatter, softmax, to_dense_adj


class AdditiveAttnConv(MessagePassing):
    def __init__(self, in_channels, out_channels, heads=4, dropout=0.2):
        super().__init__(aggr='add', node_dim=0)
        self.heads, self.out_channels, self.dropout = heads, out_channels, dropout
        self.lin = torch.nn.Linear(in_channels, heads * out_channels, bias=False)
        self.att_src = torch.nn.Parameter(torch.empty(1, heads, out_channels))
        self.att_dst = torch.nn.Parameter(torch.empty(1, heads, out_channels))
        self.head_bias = torch.nn.Parameter(torch.zeros(heads))
        torch.nn.init.xavier_uniform_(self.att_src)
        torch.nn.init.xavier_uniform_(self.att_dst)

    def forward(self, x, edge_index):
        H, C = self.heads, self.out_channels
        x = self.lin(x).view(-1, H, C)
        alpha_src = (x * self.att_src).sum(dim=-1)
        alpha_dst = (x * self.att_dst).sum(dim=-1)
        out = self.propagate(edge_index, x=x, alpha=(alpha_src, alpha_dst))
        out = out.view(-1, H * C) + self.head_bias.repeat_interleave(C)
        return out

    def message(self, x_j, alpha_j, alpha_i, index, ptr, size_i):
        alpha = F.leaky_relu(alpha_j + alpha_i, negative_slope=0.2)
        alpha = softmax(alpha, index)
        alpha = F.dropout(alpha, p=self.dropout, training=self.training)
        return x_j * alpha.unsqueeze(-1)


class GatedDotConv(MessagePassing):
    def __init__(self, in_channels, out_channels):
        super().__init__(aggr='add')
        self.q = torch.nn.Linear(in_channels, out_channels)
        self.k = torch.nn.Linear(in_channels, out_channels)
        self.v = torch.nn.Linear(in_channels, out_channels)
        self.scale = 1.0 / math.sqrt(out_channels)

    def forward(self, x, edge_index):
        return self.propagate(edge_index, x=x) + self.v(x)

    def message(self, x_i, x_j, index, ptr, size_i):
        score = (self.q(x_i) * self.k(x_j)).sum(dim=-1) * self.scale
        score = softmax(score, index, ptr, size_i)
        return self.v(x_j) * score.unsqueeze(-1)

    def aggregate(self, inputs, index, ptr=None, dim_size=None):
        return scatter(inputs, index, dim=0, dim_size=dim_size, reduce='sum')


class Net(torch.nn.Module):
    def __init__(self, in_channels, hidden, out_channels, heads=4):
        super().__init__()
        self.conv1 = AdditiveAttnConv(in_channels, hidden, heads=heads)
        self.conv2 = GatedDotConv(heads * hidden, hidden)
        self.ctx = torch.nn.Linear(hidden, hidden)
        self.out = torch.nn.Linear(hidden, out_channels)

    def forward(self, x, edge_index):
        x = F.elu(self.conv1(x, edge_index))
        x = F.dropout(x, p=0.5, training=self.training)
        x = F.elu(self.conv2(x, edge_index))
        g = global_mean_pool(x, None)
        x = x + self.ctx(g)
        return F.log_softmax(self.out(x), dim=-1)


class SGC(torch.nn.Module):
    """Simplified graph convolution baseline on a row-normalised adjacency."""

    def __init__(self, in_channels, out_channels, K=2):
        super().__init__()
        self.lin = torch.nn.Linear(in_channels, out_channels)
        self.K = K

    def forward(self, x, adj):
        for _ in range(self.K):
            x = torch.sparse.mm(adj, x)
        return F.log_softmax(self.lin(x), dim=-1)


@torch.no_grad()
def explain_attention(conv, x, edge_index):
    """Eager: recompute the first layer's attention for every edge."""
    H, C = conv.heads, conv.out_channels
    h = conv.lin(x).view(-1, H, C)
    row, col = edge_index
    raw = F.leaky_relu((h * conv.att_src).sum(-1)[row] + (h * conv.att_dst).sum(-1)[col], 0.2)
    att = softmax(raw, col)
    in_deg = degree(col)
    entropy = -(att * att.clamp_min(1e-12).log()).sum(-1)
    return scatter(entropy, col, dim=0, reduce='mean'), in_deg


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--epochs', type=int, default=200)
    parser.add_argument('--hidden', type=int, default=16)
    args = parser.parse_args()

    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
    dataset = FakeDataset(num_graphs=1, avg_num_nodes=2500, avg_degree=5, num_channels=32,
                          num_classes=6, task='node',
                          transform=RandomNodeSplit(num_val=0.15, num_test=0.25))
    data = dataset[0].to(device)
    edge_index, _ = add_self_loops(data.edge_index, num_nodes=data.num_nodes)

    net = Net(dataset.num_features, args.hidden, dataset.num_classes).to(device)
    model = torch.compile(net)
    optimizer = torch.optim.Adam(model.parameters(), lr=5e-3, weight_decay=5e-4)

    for epoch in range(1, args.epochs + 1):
        model.train()
        optimizer.zero_grad()
        out = model(data.x, edge_index)
        loss = F.nll_loss(out[data.train_mask], data.y[data.train_mask])
        loss.backward()
        optimizer.step()

    model.eval()
    with torch.no_grad():
        pred = model(data.x, edge_index).argmax(dim=-1)
    accs = [(pred[m] == data.y[m]).float().mean() for m in (data.val_mask, data.test_mask)]
    print('val/test acc', torch.stack(accs).tolist())

    dense = to_dense_adj(edge_index, max_num_nodes=data.num_nodes)[0]
    adj = (dense / dense.sum(dim=-1, keepdim=True).clamp(min=1)).to_sparse()
    sgc = torch.compile(SGC(dataset.num_features, dataset.num_classes).to(device))
    sgc_opt = torch.optim.Adam(sgc.parameters(), lr=0.2)
    for _ in range(100):
        sgc_opt.zero_grad()
        F.nll_loss(sgc(data.x, adj)[data.train_mask], data.y[data.train_mask]).backward()
        sgc_opt.step()
    sgc_pred = sgc(data.x, adj).argmax(dim=-1)
    print('SGC test acc', (sgc_pred[data.test_mask] == data.y[data.test_mask]).float().mean().item())

    node_entropy, in_deg = explain_attention(net.conv1, data.x, edge_index)
    probs = torch.softmax(node_entropy, dim=0)
    print('mean attention entropy', node_entropy.mean().item(),
          'max in-degree', in_deg.max().item(), 'top node', probs.argmax().item())


if __name__ == '__main__':
    main()
