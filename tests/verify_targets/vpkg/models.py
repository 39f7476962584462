import torch


class Scorer(torch.nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.lin = torch.nn.Linear(channels, 1)

    def forward(self, x):
        h = self.lin(x)
        scale = h.abs().max().item()
        return h / (scale + 1.0)
