"""verify's log folder does not grow without bound: old and surplus logs are pruned."""
from __future__ import annotations

import os
import time

from gnnlint.verify._runner import prune_logs


def _log(d, name, age):
    p = d / name
    p.write_text("x")
    t = time.time() - age
    os.utime(p, (t, t))
    return p


def test_prune_keeps_the_newest(tmp_path):
    logs = [_log(tmp_path, f"run{i}.log", age=i * 10) for i in range(6)]
    other = _log(tmp_path, "notes.txt", age=10**7)
    prune_logs(tmp_path, keep=3, max_age=10**6)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt", "run0.log", "run1.log", "run2.log"]
    assert other.exists() and not logs[5].exists()


def test_prune_drops_old_logs(tmp_path):
    _log(tmp_path, "new.log", age=5)
    _log(tmp_path, "old.log", age=8 * 24 * 3600)
    prune_logs(tmp_path, keep=50, max_age=7 * 24 * 3600)
    assert [p.name for p in tmp_path.iterdir()] == ["new.log"]
