"""gnnlint: find the code patterns that make torch.compile slow or wrong in GNN code."""

__version__ = "0.1.0"
