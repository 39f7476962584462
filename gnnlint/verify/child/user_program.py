"""Running the user's own program in the verify child (a script, ``-m``
module or ``file.py:func``) under the instrumentation and the budgets, and
deciding whether its end is a target error. The budgets and ``__main__``
themselves are in :mod:`gnnlint.verify._program`."""
from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gnnlint.verify.child.frames import USER, TargetError, live_user_frames, tb_user_frames
from gnnlint.verify.child.metrics import cudagraph_events
from gnnlint.verify.child.result import memory_message
from gnnlint.verify.child.target import import_target, module_origin

if TYPE_CHECKING:
    from gnnlint.verify.child.harness import Harness


def run_user_code(h: Harness, job: dict, result: dict) -> tuple[dict, Any]:
    """Run the user's program (script, ``-m`` module) or function under the
    instrumentation and the budgets; returns (how it ended, what it returned).
    The program's own exit or exception is part of the result, not an error."""
    from gnnlint.verify._program import describe_exit, run_as_main

    target = job["target"]
    kind = target["kind"]
    argv = [str(a) for a in job.get("argv") or []]
    USER.add_root(os.getcwd())
    result["function"] = None
    if kind == "script":
        path = Path(target["path"]).resolve()
        if not path.is_file():
            raise TargetError("not-found", f"{path}: no such file")
        USER.add_root(str(path.parent))
        USER.extra.add(str(path))
        result["target_path"] = str(path)

        def thunk():
            return run_as_main("script", str(path), argv, job.get("argv0"))
    elif kind == "run_module":
        name = target["module"]
        origin = module_origin(name)
        USER.extra.add(origin)
        result["target_path"] = origin

        def thunk():
            return run_as_main("run_module", name, argv)
    else:  # PATH.py:func or module:func, called like the program would call it
        def thunk():
            sys.argv = [target.get("path") or target.get("module") or "", *argv]
            mod, fn, path = import_target(h, target)
            result["target_path"] = str(path)
            result["function"] = fn.__name__
            return fn()

    budget = h.budget
    h.program_mode = True
    h.recording = True
    h.tracking_sparse = True
    exc: BaseException | None = None
    frames: list[list] = []
    value = None
    restore_warn = _watch_cuda_sync_warnings(h) if h.device == "cuda" else None
    if h.device == "cuda":
        try:
            h.torch.cuda.set_sync_debug_mode("warn")
        except Exception:
            pass
    budget.arm()
    h.modes_enter()
    h.coverage.start()
    try:
        value = thunk()
    except TargetError:
        raise
    except BaseException as e:  # SystemExit, a budget, the program's own exception
        exc = e
        frames = tb_user_frames(e.__traceback__)
    finally:
        budget.disarm()
        h.coverage.stop()
        h.modes_exit()
        h.recording = False
        if restore_warn is not None:
            restore_warn()
    if h.device == "cuda":
        cudagraph_events(h)
    return describe_exit(exc, budget, frames), value


def _watch_cuda_sync_warnings(h: Harness):
    """On CUDA, torch's sync-debug mode warns at each synchronizing call:
    record those (at the user's line) and let every other warning through."""
    orig = warnings.showwarning

    def show(message, category, filename, lineno, file=None, line=None):
        msg = str(message)
        if "synchroniz" in msg.lower():
            frames = live_user_frames(2)
            if frames:
                h.add_event("host_sync", f"CUDA sync: {msg[:200]}", frames[:1], context=frames[1:])
            return
        return orig(message, category, filename, lineno, file, line)

    warnings.showwarning = show

    def restore():
        warnings.showwarning = orig

    return restore


def program_failed(h: Harness, result: dict, info: dict) -> None:
    """The program failed before it ran any compiled code (or ran out of
    memory): a target error with what it said. After compiled code ran, its
    own exit or exception is only reported."""
    if info.get("memory"):
        raise TargetError("memory", memory_message(h.job, MemoryError(info.get("message", "")),
                                                    ""))
    ran = any(r["calls"] for r in h.compiles)
    if ran:
        return
    if info["status"] == "exception":
        raise TargetError("program", f"the program raised before running any compiled code: {info['message']}")
    if info["status"] == "exit" and info.get("exit_code") not in (0, None):
        raise TargetError("program", f"the program exited with status {info['exit_code']} "
                          "before running any compiled code")
