"""The verify child's phases (see :mod:`gnnlint.verify._child`, the entry point)."""
