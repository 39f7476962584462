"""Ending a verify target and everything it started (parent side).

A target runs in its own session (``start_new_session``). What it starts
stays in that session unless it detaches (``setsid``, a double fork), so
:class:`ProcessTree` also follows parent links in ``/proc`` while the target
runs, and the verify process makes itself a child subreaper: a detached
grandchild whose parent exits is re-parented to verify instead of init, where
:func:`orphans` finds it. :func:`end_all` ends every live tree (Ctrl-C,
SIGTERM). Linux-specific parts degrade to the process group elsewhere.
"""
from __future__ import annotations

import os
import signal
import threading

_PR_SET_CHILD_SUBREAPER = 36

_live: set["ProcessTree"] = set()
_own_children: set[int] = set()  # pids verify itself started (targets, zygotes)
_lock = threading.Lock()


def _stat(pid: int) -> tuple[int, int, int, int] | None:
    """(ppid, pgrp, session, start time) of a process, from /proc."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
    except OSError:
        return None
    try:
        rest = data[data.rindex(b")") + 2:].split()
        return int(rest[1]), int(rest[2]), int(rest[3]), int(rest[19])
    except (ValueError, IndexError):
        return None


def _table() -> dict[int, tuple[int, int, int, int]]:
    out = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return out
    for name in names:
        if name.isdigit():
            st = _stat(int(name))
            if st is not None:
                out[int(name)] = st
    return out


def become_subreaper() -> bool:
    """Orphaned descendants are re-parented to this process (Linux)."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def register_child(pid: int) -> None:
    with _lock:
        _own_children.add(pid)


def forget_child(pid: int) -> None:
    with _lock:
        _own_children.discard(pid)


def orphans() -> list[int]:
    """Processes re-parented to verify (their parent exited) that verify
    did not start itself."""
    me = os.getpid()
    with _lock:
        own = set(_own_children)
    return [pid for pid, st in _table().items() if st[0] == me and pid not in own]


class ProcessTree:
    """The target process, its session, and every descendant seen."""

    def __init__(self, pid: int, poll: float = 0.2) -> None:
        self.pid = pid
        self.known: dict[int, int] = {}
        st = _stat(pid)
        if st is not None:
            self.known[pid] = st[3]
        self._poll = poll
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=f"gnnlint-verify-tree-{pid}", daemon=True)
        with _lock:
            _live.add(self)
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.wait(self._poll):
            self.scan()

    def scan(self) -> None:
        table = _table()
        me = os.getpid()
        with _lock:
            own = set(_own_children)
        known = self.known
        for pid, (ppid, pgrp, sid, start) in table.items():
            if pid == me or pid in own and pid != self.pid:
                continue
            if sid == self.pid or pgrp == self.pid or (ppid == me and pid not in own):
                known.setdefault(pid, start)
        changed = True
        while changed:  # children of anything known (a detached session too)
            changed = False
            for pid, (ppid, _, _, start) in table.items():
                if pid not in known and ppid in known and known[ppid] is not None:
                    known[pid] = start
                    changed = True

    def end(self) -> None:
        """Kill the target's group and every descendant still alive."""
        self._stop.set()
        self.scan()
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except OSError:
            pass
        for pid, start in list(self.known.items()):
            st = _stat(pid)
            if st is not None and st[3] == start:  # the same process, not a reused pid
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
        reap()
        with _lock:
            _live.discard(self)


def reap() -> None:
    """Collect re-parented processes that have exited (not verify's own
    Popen children: subprocess waits for those)."""
    with _lock:
        own = set(_own_children)
    me = os.getpid()
    for pid, st in _table().items():
        if st[0] == me and pid not in own:
            try:
                os.waitpid(pid, os.WNOHANG)
            except OSError:
                pass


def end_orphans() -> None:
    for pid in orphans():
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    reap()


def end_all() -> None:
    """Ctrl-C / SIGTERM: end every running target and what it started, and
    the processes verify itself started (a zygote still starting up when the
    signal came is in no target's tree yet: its own session is ended here)."""
    with _lock:
        trees = list(_live)
        own = list(_own_children)
    for t in trees:
        t.end()
    for pid in own:
        try:
            os.killpg(pid, signal.SIGKILL)  # each runs in a session of its own (start_new_session)
        except OSError:
            pass
    end_orphans()
