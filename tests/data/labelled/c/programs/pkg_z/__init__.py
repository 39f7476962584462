"""pkg_z: attention-readout graph classification (model in models.py, compiled
training script in train.py)."""
from .models import AttentionReadout, GraphClassifier

__all__ = ['AttentionReadout', 'GraphClassifier']
