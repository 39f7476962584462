"""Link prediction package: `python -m pkg_y.train`."""
from .models import EdgeEncoder, build_encoder, build_scorer

__all__ = ['EdgeEncoder', 'build_encoder', 'build_scorer']
