"""Model and optimizer factories for pkg_e.train.

The encoder takes lazily-sized inputs (in_channels=-1) so the same factory
works for any feature width; the classifier head is sized from the config."""
import torch

from torch_geometric.nn import GraphSAGE


class NodeEncoderClassifier(torch.nn.Module):
    def __init__(self, hidden, num_classes, num_layers=2, dropout=0.2):
        super().__init__()
        self.gnn = GraphSAGE(in_channels=-1, hidden_channels=hidden,
                             num_layers=num_layers, dropout=dropout)
        self.cls = torch.nn.Linear(hidden, num_classes)

    def forward(self, x, edge_index):
        return self.cls(self.gnn(x, edge_index).relu())


def build_model(hidden, num_classes, device, cuda_graphs=True):
    model = NodeEncoderClassifier(hidden, num_classes).to(device)
    if cuda_graphs:
        return torch.compile(model, mode='reduce-overhead')
    return torch.compile(model)


def build_optimizer(model, lr, gamma=0.9, weight_decay=5e-4):
    optimizer = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=weight_decay)
    scheduler = torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=gamma)
    step = torch.compile(optimizer.step)
    return optimizer, scheduler, step
