"""Helpers shared by the verify tests."""
from __future__ import annotations

import os


def shared(tmp_path_factory, name: str, compute):
    """Compute once per test session, also under pytest-xdist (the workers
    share the base temp dir's parent): the first worker computes, the others
    wait on the lock and load the pickled result."""
    import fcntl
    import pickle

    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent
    data = root / f"gnnlint-verify-{name}.pickle"
    with open(root / f"gnnlint-verify-{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if data.exists():
                return pickle.loads(data.read_bytes())
            value = compute()
            data.write_bytes(pickle.dumps(value))
            return value
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def settings(root, **overrides):
    from gnnlint.config import load_settings

    s = load_settings(cwd=root)
    for k, v in overrides.items():
        setattr(s, k, v)
    return s
