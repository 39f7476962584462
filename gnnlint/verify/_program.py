"""Running the user's own program in the verify child: a script as
``__main__`` (``python train.py ARGS``), a module (``python -m pkg.train
ARGS``, ``-m pytest``) or a function (``file.py:main``), within the budgets.

Only the child process imports this module.

Budgets stop the program the way Ctrl-C would: :class:`BudgetStop` is a
``KeyboardInterrupt``, so ``except Exception`` in the program does not
swallow it, its ``finally`` blocks and its own Ctrl-C handling run (pytest
ends the session cleanly), and it is raised only between compiled calls
(never inside dynamo) unless the program is stuck elsewhere.
"""
from __future__ import annotations

import os
import runpy
import signal
import sys
import time
from typing import Any, Callable

# After the budget is spent, how long the program may take to wind down (its
# finally blocks, a checkpoint) before it is interrupted again, and how many
# times, before verify gives up on it and reports what it has.
GRACE_SECONDS = 10.0
MAX_INTERRUPTS = 3


class BudgetStop(KeyboardInterrupt):
    """A verify budget is spent (``--max-calls`` or ``--max-seconds``)."""


class Budget:
    """``--max-calls N``: stop once every compiled callable the program has
    called was called N times after its first (compiling) call.
    ``--max-seconds S``: stop after S seconds (SIGALRM in the main thread).
    """

    def __init__(self, h: Any, max_calls: int | None, max_seconds: float | None,
                 on_give_up: Callable[[], None] | None = None) -> None:
        self.h = h
        self.max_calls = max_calls if max_calls and max_calls > 0 else None
        self.max_seconds = max_seconds if max_seconds and max_seconds > 0 else None
        self.stopped_by: str | None = None
        self.detail = ""
        self.pending = False  # spent while a compiled call ran: stop when it returns
        self.interrupts = 0
        self.started = time.time()
        self.on_give_up = on_give_up
        self._old_handler = None

    # ------------------------------------------------------------ seconds
    def arm(self) -> None:
        if self.max_seconds is None or not hasattr(signal, "setitimer"):
            return
        try:
            self._old_handler = signal.signal(signal.SIGALRM, self._on_alarm)
            signal.setitimer(signal.ITIMER_REAL, self.max_seconds)
        except ValueError:  # not the main thread
            pass

    def disarm(self) -> None:
        if self.max_seconds is None or not hasattr(signal, "setitimer"):
            return
        try:
            signal.setitimer(signal.ITIMER_REAL, 0)
        except ValueError:
            pass

    def _again(self, seconds: float) -> None:
        try:
            signal.setitimer(signal.ITIMER_REAL, seconds)
        except ValueError:
            pass

    def _on_alarm(self, signum, frame) -> None:
        if self.stopped_by is None:
            self.stopped_by = "max-seconds"
            self.detail = f"--max-seconds {self.max_seconds:g}: stopped after {time.time() - self.started:.0f} s"
            if self.h.active:
                # inside a compiled call (maybe inside dynamo): stop when it
                # returns; interrupt it anyway if that takes too long
                self.pending = True
                self._again(GRACE_SECONDS)
                return
            self._interrupt()
            return
        # the program went on after the budget was spent
        self._interrupt()

    def _interrupt(self) -> None:
        self.interrupts += 1
        self.pending = False
        if self.interrupts > MAX_INTERRUPTS:
            if self.on_give_up is not None:
                self.on_give_up()  # writes the result and leaves the process
            return
        self._again(GRACE_SECONDS)
        raise BudgetStop(self.detail)

    # ------------------------------------------------------------ calls
    def before_call(self, rec: dict | None) -> None:
        """Called before each call of a compiled callable."""
        if self.pending:
            self._interrupt()
        if self.stopped_by is not None or self.max_calls is None or rec is None:
            return
        n = self.max_calls + 1  # the first call compiles; N more after it
        called = [r for r in self.h.compiles if r["calls"] > 0]
        if rec["calls"] >= n and all(r["calls"] >= n for r in called):
            self.stopped_by = "max-calls"
            self.detail = (f"--max-calls {self.max_calls}: every compiled callable ran {self.max_calls} times "
                           f"after its first compile ({len(called)} compiled callable"
                           f"{'s' if len(called) != 1 else ''})")
            # the program may catch the interrupt and go on (evaluation after
            # Ctrl-C): give it a little time, then interrupt again
            if self.max_seconds is None or time.time() - self.started + GRACE_SECONDS < self.max_seconds:
                if hasattr(signal, "setitimer"):
                    try:
                        signal.signal(signal.SIGALRM, self._on_alarm)
                    except ValueError:
                        pass
                self._again(GRACE_SECONDS)
            self._interrupt()

    def after_call(self) -> None:
        if self.pending and not self.h.active:
            self._interrupt()

    def as_json(self) -> dict:
        return {"max_calls": self.max_calls, "max_seconds": self.max_seconds, "stopped_by": self.stopped_by,
                "detail": self.detail}


def run_as_main(kind: str, name: str, argv: list[str], argv0: str | None = None) -> None:
    """``python PATH ARGS`` (kind "script") or ``python -m NAME ARGS`` (kind
    "run_module"), in this process: ``sys.argv``, ``sys.path[0]``,
    ``__main__`` and ``__file__`` as Python sets them."""
    if kind == "script":
        import types
        from importlib.machinery import SourceFileLoader

        path = os.path.abspath(name)
        with open(path, "rb") as f:
            code = compile(f.read(), path, "exec", dont_inherit=True)
        main = types.ModuleType("__main__")
        main.__file__ = path
        main.__loader__ = SourceFileLoader("__main__", path)
        main.__builtins__ = __builtins__
        sys.modules["__main__"] = main  # pickling classes defined in the script works
        sys.argv = [argv0 or name, *argv]
        sys.path[0] = os.path.dirname(path)
        exec(code, main.__dict__)
    else:
        sys.argv = [name, *argv]  # runpy replaces argv[0] with the module's file
        sys.path[0] = os.getcwd()
        runpy.run_module(name, run_name="__main__", alter_sys=True)


def describe_exit(exc: BaseException | None, budget: Budget, frames: list[list]) -> dict:
    """How the program ended: completed, exit (sys.exit / SystemExit),
    stopped (a budget), exception."""
    if budget.stopped_by is not None:
        out = {"status": "stopped", "by": budget.stopped_by, "detail": budget.detail}
        if isinstance(exc, SystemExit):
            out["exit_code"] = _exit_code(exc)
        return out
    if exc is None:
        return {"status": "completed"}
    if isinstance(exc, SystemExit):
        return {"status": "exit", "exit_code": _exit_code(exc)}
    where = f" at {frames[0][0]}:{frames[0][1]}" if frames else ""
    out = {"status": "exception", "type": type(exc).__name__,
           "message": f"{type(exc).__name__}: {str(exc)[:500]}{where}"}
    if frames:
        out["file"], out["line"] = frames[0][0], frames[0][1]
    if is_memory_error(exc):
        out["memory"] = True
    return out


def _exit_code(exc: SystemExit) -> int | str:
    code = exc.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    return str(code)[:200]


def is_memory_error(exc: BaseException) -> bool:
    if isinstance(exc, MemoryError):
        return True
    text = str(exc)
    return any(k in text for k in ("can't allocate memory", "Cannot allocate memory", "std::bad_alloc",
                                   "out of memory"))
