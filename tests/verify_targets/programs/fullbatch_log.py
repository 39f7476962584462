"""Full-batch training of a compiled GCN; the loss is printed every 5 epochs."""
import torch
import torch.nn.functional as F
from torch_geometric.datasets import FakeDataset
from torch_geometric.nn import GCNConv


class GCN(torch.nn.Module):
    def __init__(self, c_in, c_out):
        super().__init__()
        self.conv1 = GCNConv(c_in, 16)
        self.conv2 = GCNConv(16, c_out)

    def forward(self, x, edge_index):
        return self.conv2(self.conv1(x, edge_index).relu(), edge_index)


def main():
    data = FakeDataset(num_graphs=1, avg_num_nodes=50, num_channels=8, num_classes=3)[0]
    sizes = torch.tensor([20, 30])
    data.part = torch.arange(2).repeat_interleave(sizes)  # a sync in the setup, before any compiled code
    model = torch.compile(GCN(8, 3))
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    for epoch in range(40):
        opt.zero_grad()
        loss = F.cross_entropy(model(data.x, data.edge_index), data.y)
        loss.backward()
        opt.step()
        if epoch % 5 == 0:
            print(f"epoch {epoch}: {loss.item():.4f}")


if __name__ == "__main__":
    main()
