"""MolNet: an edge-conditioned GNN for molecular property classification."""
from .layers import EdgeMLPConv, edge_dropout, check_graph
from .models import MolNet

__all__ = ['EdgeMLPConv', 'edge_dropout', 'check_graph', 'MolNet']
