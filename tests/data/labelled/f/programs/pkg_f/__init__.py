"""Graph classification with score-based top-k node selection."""
