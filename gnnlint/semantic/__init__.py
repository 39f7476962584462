"""The analyses behind FileContext, one family of questions per module (see README.md)."""
