"""Heterogeneous node classification written as a flat, notebook-style script
(no main function). Every node type has its own feature width, so the GNN
uses lazy (-1, -1) SAGEConv layers and is converted with to_hetero; training
and validation run over NeighborLoader mini-batches at module level."""
import torch
import torch.nn.functional as F

import torch_geometric
import torch_geometric.transforms as T
from torch_geometric.datasets import FakeHeteroDataset
from torch_geometric.loader import NeighborLoader
from torch_geometric.nn import SAGEConv, to_hetero

EPOCHS = 10
HIDDEN = 64
TARGET = 'v0'
NUM_CLASSES = 5


class GNN(torch.nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.conv1 = SAGEConv((-1, -1), hidden)
        self.conv2 = SAGEConv((-1, -1), hidden)

    def forward(self, x, edge_index):
        x = self.conv1(x, edge_index).relu()
        return self.conv2(x, edge_index)


torch.manual_seed(12345)
device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')

dataset = FakeHeteroDataset(num_graphs=1, num_node_types=3, num_edge_types=6,
                            avg_num_nodes=5000, avg_degree=6, avg_num_channels=32,
                            num_classes=NUM_CLASSES, task='node', transform=T.ToUndirected())
data = dataset[0]

num_target = data[TARGET].num_nodes
perm = torch.randperm(num_target)
train_idx = perm[:int(0.8 * num_target)]
val_idx = perm[int(0.8 * num_target):]

train_loader = NeighborLoader(data, num_neighbors=[10, 10], batch_size=512,
                              input_nodes=(TARGET, train_idx), shuffle=True)
val_loader = NeighborLoader(data, num_neighbors=[10, 10], batch_size=2048,
                            input_nodes=(TARGET, val_idx))

model = to_hetero(GNN(HIDDEN), data.metadata(), aggr='sum').to(device)
model = torch.compile(model, mode='max-autotune-no-cudagraphs')

head = torch.nn.Linear(HIDDEN, NUM_CLASSES).to(device)
head = torch_geometric.compile(head, dynamic=True)

optimizer = torch.optim.Adam(list(model.parameters()) + list(head.parameters()),
                             lr=0.005, weight_decay=1e-4)

for epoch in range(1, EPOCHS + 1):
    model.train()
    head.train()
    total_loss = torch.zeros((), device=device)
    total_examples = 0
    for batch in train_loader:
        batch = batch.to(device)
        bs = batch[TARGET].batch_size
        optimizer.zero_grad()
        h = model(batch.x_dict, batch.edge_index_dict)[TARGET][:bs]
        loss = F.cross_entropy(head(h.relu()), batch[TARGET].y[:bs])
        loss.backward()
        optimizer.step()
        total_loss += loss.detach() * bs
        total_examples += bs

    model.eval()
    head.eval()
    correct = torch.zeros((), dtype=torch.long, device=device)
    with torch.no_grad():
        for batch in val_loader:
            batch = batch.to(device)
            bs = batch[TARGET].batch_size
            h = model(batch.x_dict, batch.edge_index_dict)[TARGET][:bs]
            correct += (head(h.relu()).argmax(-1) == batch[TARGET].y[:bs]).sum()

    print(f'epoch {epoch:02d}  loss {total_loss / total_examples:.4f}  '
          f'val acc {correct / val_idx.numel():.4f}')
