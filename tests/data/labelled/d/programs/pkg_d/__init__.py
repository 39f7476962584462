"""Compiled GraphSAGE with residual gating, trained by step count.

    python -m pkg_d.model --max_steps 2000
"""
from .model import GatedSAGE

__all__ = ['GatedSAGE']
