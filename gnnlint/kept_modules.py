"""Parsed modules a run keeps from one lint of a file for the next (engine.check_files).

A file parsed in the first pass and linted again because other files' facts land on it
(``torch_geometric/edge_index.py`` is told that the ``softmax`` it imports returns a tensor)
need not be parsed twice: the libcst module depends on the bytes only, never on the facts
(the ``FileContext`` built on it is made anew). Within ``keeping()``, ``lint_bytes`` keeps
each module it parses, up to ``KEEP_SOURCE_BYTES`` of source (a module holds ~30-100
bytes per source byte); after each round of fact joins the engine keeps only the modules
of the files it will lint again (``retain``). A worker process forked inside ``keeping()``
keeps nothing of its parent's; a worker of the run's pool keeps its own (``keep_in_worker``):
the pool sends a file linted again to the worker that parsed it (gnnlint/workers.py).
"""
from __future__ import annotations

import os
import threading
from contextlib import contextmanager
from typing import Iterable, Optional

KEEP_SOURCE_BYTES = 2 << 20

_run = threading.local()  # per thread: the language server may run two checks at a time


@contextmanager
def keeping():
    """Within this block, ``keep`` remembers parsed modules and ``take`` hands them back."""
    outer = getattr(_run, "kept", None), getattr(_run, "room", 0), getattr(_run, "pid", None)
    _run.kept, _run.room, _run.pid = {}, KEEP_SOURCE_BYTES, os.getpid()
    try:
        yield
    finally:
        _run.kept, _run.room, _run.pid = outer


def keep_in_worker() -> None:
    """Keep this worker process's modules for its life (a pool's initializer)."""
    _run.kept, _run.room, _run.pid = {}, KEEP_SOURCE_BYTES, os.getpid()


def keep(path: str, source: bytes, parsed: bytes, module) -> None:
    """Remember ``module``, parsed from ``parsed`` (``source`` with its constant tables elided)."""
    kept = getattr(_run, "kept", None)
    if kept is None or path in kept or len(source) > _run.room or _run.pid != os.getpid():
        return
    kept[path] = (source, parsed, module)
    _run.room -= len(source)


def take(path: str, source: bytes) -> Optional[tuple[bytes, object]]:
    """(parsed bytes, module) kept for exactly these bytes of ``path``, or None."""
    kept = getattr(_run, "kept", None)
    entry = kept.get(path) if kept else None
    if entry is None or entry[0] != source:
        return None
    return entry[1], entry[2]


def retain(paths: Iterable[str]) -> None:
    """Forget every module but those of ``paths`` (the files linted again next)."""
    kept = getattr(_run, "kept", None)
    if not kept:
        return
    wanted = set(paths)
    for path in [p for p in kept if p not in wanted]:
        _run.room += len(kept.pop(path)[0])
