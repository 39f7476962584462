"""Worker processes that die with the run and never take it down.

- A worker ignores Ctrl-C (the terminal sends SIGINT to the whole process
  group; the parent decides) and is killed by the kernel when its parent
  dies, however it dies (``PR_SET_PDEATHSIG`` on Linux; elsewhere a thread
  that notices the worker was re-parented): no orphan keeps parsing after
  ``kill PID`` or a crash.
- When the run is interrupted, the workers are killed at once instead of
  finishing their files (``ProcessPoolExecutor.shutdown`` waits for them).
- A worker holds one job at a time, so a worker that dies (a segfault in a
  native parser, the OOM killer) names the job it held: that job runs once
  more on a fresh worker, and if it kills that one too it is reported as
  such; the other results are kept.
- A ``Pool`` lives for a whole check: a job keyed by a path a worker ran
  before goes back to that worker, which still holds the module it parsed
  (gnnlint/kept_modules.py), so a file linted again for other files' facts
  is not parsed twice.
"""
from __future__ import annotations

import os
import signal
import sys
from typing import Callable, Iterable, Optional


def _set_parent_death_signal(parent: int) -> None:
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            _watch_parent(parent)
    else:  # macOS, the BSDs: no parent-death signal
        _watch_parent(parent)
    if os.getppid() != parent:  # the parent died before the signal was set
        os._exit(1)


def _watch_parent(parent: int, interval: float = 1.0) -> None:
    """End this process once its parent is gone (it is then re-parented):
    the portable stand-in for a parent-death signal, checked every
    ``interval`` seconds by a daemon thread."""
    import threading
    import time

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(interval)
        os._exit(1)

    threading.Thread(target=watch, name="gnnlint-parent-watch", daemon=True).start()


def _init(parent: int, initializer: Optional[Callable]) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _set_parent_death_signal(parent)
    if initializer is not None:
        initializer()


def kill(pool) -> None:
    """End an executor now: kill its workers (they may be deep in a parse),
    then let the executor notice."""
    for process in list((getattr(pool, "_processes", None) or {}).values()):
        try:
            process.kill()
        except (OSError, AttributeError, ValueError):
            pass
    pool.shutdown(wait=False, cancel_futures=True)


class Pool:
    """``size`` worker processes, started on first use and kept until ``close``.
    ``initializer`` runs in each worker when it starts."""

    def __init__(self, size: int, initializer: Optional[Callable] = None):
        self.size = size
        self._initializer = initializer
        self._executors: list = [None] * size  # one single-process executor per worker
        self._owner: dict = {}  # job key -> the worker that last ran it

    def __enter__(self) -> Pool:
        return self

    def __exit__(self, kind, value, traceback) -> None:
        self.close(kill_now=kind is not None)

    def owns_any(self, keys: Iterable) -> bool:
        """Whether some worker ran a job with one of ``keys`` (and may hold its module)."""
        return any(key in self._owner for key in keys)

    def close(self, kill_now: bool = False) -> None:
        for executor in self._executors:
            if executor is not None:
                kill(executor) if kill_now else executor.shutdown(wait=True)
        self._executors = [None] * self.size
        self._owner.clear()

    def _executor(self, worker: int):
        if self._executors[worker] is None:
            import multiprocessing
            from concurrent.futures import (
                ProcessPoolExecutor,  # 20 ms: only when a pool runs
            )

            context = multiprocessing.get_context("fork") if hasattr(os, "fork") else None
            self._executors[worker] = ProcessPoolExecutor(max_workers=1, mp_context=context, initializer=_init,
                                                          initargs=(os.getpid(), self._initializer))
        return self._executors[worker]

    def _replace(self, worker: int) -> None:
        """Drop a worker that died (its executor is broken); the next job starts a fresh one."""
        kill(self._executors[worker])
        self._executors[worker] = None
        self._owner = {key: w for key, w in self._owner.items() if w != worker}

    def run(self, func: Callable, args: list, on_result: Callable[[int, object], None],
            on_crash: Callable[[int], object], side_jobs: Iterable[Callable[[], None]] = (),
            keys: Optional[list] = None) -> None:
        """``on_result(i, func(args[i]))`` for every i, in completion order.
        ``on_crash(i)``: the result for a job that killed its worker twice.
        ``side_jobs``: work for this process meanwhile (the workers are fed
        between them). ``keys[i]``: job i's key; a job goes to the worker
        that ran its key before, when there is one. An interrupt kills the
        workers and propagates."""
        batch = _Batch(self, func, args, on_result, on_crash, keys)
        try:
            batch.feed()
            for side_job in side_jobs:
                side_job()
                batch.collect(block=False)
                batch.feed()
            while batch.running or batch.waiting():
                batch.collect(block=True)
                batch.feed()
        except BaseException:
            self.close(kill_now=True)
            raise


class _Batch:
    """One ``Pool.run``: the jobs waiting (per worker: those whose key it ran; the rest for anyone),
    the one job each busy worker holds, and the jobs that killed a worker once."""

    def __init__(self, pool: Pool, func: Callable, args: list, on_result: Callable, on_crash: Callable,
                 keys: Optional[list]) -> None:
        from collections import deque

        self.pool, self.func, self.args, self.keys = pool, func, args, keys
        self.on_result, self.on_crash = on_result, on_crash
        self.own = [deque() for _ in range(pool.size)]
        self.anyone: deque = deque()
        for i in range(len(args)):
            worker = pool._owner.get(keys[i]) if keys is not None else None
            (self.own[worker] if worker is not None else self.anyone).append(i)
        self.running: dict = {}  # future -> (worker, job)
        self.idle = set(range(pool.size))
        self.crashed_once: set[int] = set()

    def waiting(self) -> bool:
        return bool(self.anyone) or any(self.own)

    def _next_job(self, worker: int) -> Optional[int]:
        if self.own[worker]:
            return self.own[worker].popleft()
        if self.anyone:
            return self.anyone.popleft()
        # steal from a worker with more than its current job's worth left (parsing anew
        # costs less than waiting behind a long queue)
        other = max(range(self.pool.size), key=lambda w: len(self.own[w]))
        return self.own[other].pop() if len(self.own[other]) > 1 else None

    def _crash(self, worker: int, job: int) -> None:
        self.pool._replace(worker)
        if job in self.crashed_once:
            self.on_result(job, self.on_crash(job))
        else:  # once more, on a fresh worker
            self.crashed_once.add(job)
            self.own[worker].appendleft(job)

    def feed(self) -> None:
        """Hand each idle worker its next job."""
        from concurrent.futures.process import BrokenProcessPool

        for worker in sorted(self.idle):
            job = self._next_job(worker)
            if job is None:
                continue
            try:
                future = self.pool._executor(worker).submit(self.func, self.args[job])
            except (OSError, RuntimeError, BrokenProcessPool):  # a worker that cannot start
                self._crash(worker, job)
                continue
            self.running[future] = (worker, job)
            self.idle.discard(worker)

    def collect(self, block: bool) -> None:
        """Report the jobs done (waiting for one when ``block``)."""
        from concurrent.futures import FIRST_COMPLETED, wait
        from concurrent.futures.process import BrokenProcessPool

        if not self.running:
            return
        done, _ = wait(self.running, timeout=None if block else 0, return_when=FIRST_COMPLETED)
        for future in done:
            worker, job = self.running.pop(future)
            self.idle.add(worker)
            try:
                result = future.result()
            except BrokenProcessPool:
                self._crash(worker, job)
                continue
            if self.keys is not None:
                self.pool._owner[self.keys[job]] = worker
            self.on_result(job, result)


def run(jobs: int, func: Callable, args: list, on_result: Callable[[int, object], None],
        on_crash: Callable[[int], object]) -> None:
    """``Pool(jobs).run(...)`` once: the pool ends with the jobs."""
    with Pool(jobs) as pool:
        pool.run(func, args, on_result, on_crash)
