"""Worker processes that die with the run and never take it down.

- A worker ignores Ctrl-C (the terminal sends SIGINT to the whole process
  group; the parent decides) and is killed by the kernel when its parent
  dies, however it dies (``PR_SET_PDEATHSIG`` on Linux; elsewhere a thread
  that notices the worker was re-parented): no orphan keeps parsing after
  ``kill PID`` or a crash.
- When the run is interrupted, the workers are killed at once instead of
  finishing their files (``ProcessPoolExecutor.shutdown`` waits for them).
- A worker that dies (a segfault in a native parser, the OOM killer) does not
  lose the other results: the jobs it did not finish run again in a new
  pool, and the job it held -- found through a shared array of job states --
  runs alone once more; if that kills its worker too, it is reported as such.
"""
from __future__ import annotations

import os
import signal
import sys
from typing import Callable, Iterable, Optional

_PENDING, _STARTED, _DONE = 0, 1, 2
_states = None  # in a worker: the shared job states of its pool


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


def _init(parent: int, states, initializer: Optional[Callable]) -> None:
    global _states
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _set_parent_death_signal(parent)
    _states = states
    if initializer is not None:
        initializer()


def _tracked(func: Callable, index: int, arg):
    _states[index] = _STARTED
    result = func(arg)
    _states[index] = _DONE
    return result


def _pool(jobs: int, states, initializer: Optional[Callable]):
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor  # 20 ms: only when a pool runs

    context = multiprocessing.get_context("fork") if hasattr(os, "fork") else None
    return ProcessPoolExecutor(max_workers=jobs, mp_context=context, initializer=_init,
                               initargs=(os.getpid(), states, initializer))


def kill(pool) -> None:
    """End a pool now: kill its workers (they may be deep in a parse), then
    let the executor notice."""
    for process in list((getattr(pool, "_processes", None) or {}).values()):
        try:
            process.kill()
        except (OSError, AttributeError, ValueError):
            pass
    pool.shutdown(wait=False, cancel_futures=True)


def run(jobs: int, func: Callable, args: list, on_result: Callable[[int, object], None],
        on_crash: Callable[[int], object], while_waiting: Optional[Callable[[], None]] = None,
        initializer: Optional[Callable] = None) -> None:
    """``on_result(i, func(args[i]))`` for every i, computed in ``jobs`` worker
    processes (in completion order). ``on_crash(i)``: the result for a job
    whose worker died again when it ran alone. ``while_waiting``: work for
    this process once the jobs are handed out. An interrupt kills the
    workers and propagates."""
    import multiprocessing
    from concurrent.futures import as_completed
    from concurrent.futures.process import BrokenProcessPool

    context = multiprocessing.get_context("fork") if hasattr(os, "fork") else multiprocessing
    done: set[int] = set()
    todo = list(range(len(args)))  # the next batch for a shared pool
    alone: list[int] = []  # jobs a dead worker held: each runs in its own pool
    while todo or alone:
        isolated = not todo
        batch, todo = (todo, []) if not isolated else ([alone.pop(0)], todo)
        states = context.Array("b", len(args), lock=False)
        pool = _pool(min(jobs, len(batch)), states, initializer)
        finished = len(done)
        try:
            futures = {pool.submit(_tracked, func, i, args[i]): i for i in batch}
            if while_waiting is not None:
                while_waiting()
                while_waiting = None
            for future in as_completed(futures):
                try:
                    result = future.result()
                except BrokenProcessPool:
                    continue
                done.add(futures[future])
                on_result(futures[future], result)
        except BaseException:
            kill(pool)
            raise
        pool.shutdown(wait=True)
        lost = [i for i in batch if i not in done]
        if isolated:
            for i in lost:
                done.add(i)
                on_result(i, on_crash(i))
            continue
        held = [i for i in lost if states[i] == _STARTED]
        if not held and len(done) == finished:
            held = lost  # nothing ran (a pool that cannot start): one by one
        alone += held
        todo += [i for i in lost if i not in held]
