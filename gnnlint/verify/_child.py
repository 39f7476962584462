"""The verify child process: imports one target, compiles it with
instrumentation, runs it, and writes what happened as JSON.

Run as ``python -m gnnlint.verify._child JOB.json``. This is the only entry
point of gnnlint that imports torch, and only inside :func:`main`. Nothing
here is imported by the parent process.

The child never writes to its stdout/stderr on purpose (user code may); the
result goes to ``job["result_path"]``. It leaves with ``os._exit`` because a
process that ran many compiles can hang at interpreter exit on torch 2.13.

The phases live in :mod:`gnnlint.verify.child`, one module each:

- ``frames``: the user's files, frames, coverage, dynamo's reasons;
- ``harness`` (and ``patches``, its hooks into torch and dynamo): what the
  run records -- compiles, calls, graph breaks, host syncs;
- ``target``: importing the target, reading an example, compile sites;
- ``user_program``: running the user's own program within the budgets;
- ``example``: compiling and running a ``gnnlint_example()``;
- ``metrics``: recompilations, skipped frames, compiled calls, grouping;
- ``result``: the JSON result, error results, leaving.
"""
from __future__ import annotations

import json
import os
import sys
import time
import warnings
from pathlib import Path
from typing import Any

from gnnlint.verify.child.example import call_example, run_example
from gnnlint.verify.child.frames import USER, TargetError, guard_user_frames  # noqa: F401  (re-exported)
from gnnlint.verify.child.harness import Harness
from gnnlint.verify.child.result import error_result, finish, give_up, leave, limit_memory, write_result
from gnnlint.verify.child.target import looks_like_example, parse_example
from gnnlint.verify.child.user_program import program_failed, run_user_code

# --------------------------------------------------------------------------
# main run
# --------------------------------------------------------------------------


def run(job: dict) -> dict:
    t0 = time.time()
    h = Harness(job)
    result: dict[str, Any] = {"target": job["target"], "events": [], "internal": []}
    target = job["target"]
    program = target["kind"] in ("script", "run_module")
    call = target["kind"] in ("file", "module") and target.get("function") not in (None, "gnnlint_example")
    _quiet(show_warnings=program or call)
    lap = _stopwatch(result)
    _start_torch(h, result)
    lap("import_torch")

    from gnnlint.verify._program import Budget

    h.budget = budget = Budget(h, job.get("max_calls"), job.get("max_seconds"),
                               on_give_up=lambda: give_up(h, job, result, t0))
    result["budget"] = budget
    if program or call:
        exit_info, raw = run_user_code(h, job, result)
        lap("program")
        ex = None
        if call and exit_info["status"] == "completed" and looks_like_example(raw):
            ex = parse_example(h.torch, raw)
        if ex is None:
            program_failed(h, result, exit_info)
            result["program"] = exit_info
            return finish(h, result, t0, lap, steps="the program's own")
        h.program_mode = False
        path = Path(result["target_path"])
        fn_name = result["function"]
    else:
        raw, path, fn_name = call_example(h, target, budget)
        lap("example")
        ex = parse_example(h.torch, raw)
    result["target_path"] = str(path)
    result["function"] = fn_name
    return run_example(h, job, result, ex, path, t0, lap)


def _quiet(show_warnings: bool) -> None:
    """torch's log off; an example's own warnings are noise here (a
    program's are its own: they go to its log)."""
    os.environ.setdefault("TORCHDYNAMO_VERBOSE", "0")
    if not show_warnings:
        warnings.simplefilter("ignore")
    import logging

    logging.getLogger("torch").setLevel(logging.ERROR)


def _stopwatch(result: dict):
    """``lap(name)``: the seconds since the previous lap, in ``result["timing"]``."""
    timing: dict[str, float] = {}
    mark = [time.time()]

    def lap(name: str) -> None:
        now = time.time()
        timing[name] = round(now - mark[0], 2)
        mark[0] = now

    result["timing"] = timing
    return lap


def _start_torch(h: Harness, result: dict) -> None:
    try:
        import torch  # noqa: F401
        import torch_geometric
    except ImportError as e:
        raise TargetError("missing-dependency", f"gnnlint verify needs torch and torch_geometric "
                          f"(pip install 'gnnlint[verify]'): {e}") from None
    h.setup_torch()
    result["versions"] = {"torch": h.torch.__version__, "torch_geometric": torch_geometric.__version__,
                          "python": sys.version.split()[0]}
    result["device"] = h.device
    result["backend"] = h.backend


def zygote() -> None:
    """A pre-warmed parent: imports torch and PyG once, then forks one fresh
    process per job (``job path`` lines on stdin). Reports ``pid N`` when a
    job starts and ``exit N`` when it ends, so the runner can time it out.

    Each job still runs in its own process; this only saves the imports.
    CUDA is never touched here (a CUDA context does not survive a fork).
    """
    import torch  # noqa: F401
    import torch._dynamo  # noqa: F401
    import torch._dynamo.utils  # noqa: F401
    import torch.overrides  # noqa: F401
    import torch.utils._python_dispatch  # noqa: F401
    import torch_geometric  # noqa: F401

    try:
        import gnnlint.project_index  # noqa: F401  (libcst + context)
    except Exception:
        pass
    out = sys.stdout
    out.write("ready\n")
    out.flush()
    for line in sys.stdin:
        job_path = line.strip()
        if not job_path:
            continue
        pid = os.fork()
        if pid == 0:  # the job's own process
            try:
                os.setsid()
                with open(job_path) as f:
                    job = json.load(f)
                log = job.get("log_path")
                if log:
                    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                    os.dup2(fd, 1)
                    os.dup2(fd, 2)
                    os.close(fd)
                devnull = os.open(os.devnull, os.O_RDONLY)
                os.dup2(devnull, 0)
                sys.stdin = open(os.devnull)
                main([sys.argv[0], job_path])
            finally:
                os._exit(70)
        out.write(f"pid {pid}\n")
        out.flush()
        _, status = os.waitpid(pid, 0)
        code = os.waitstatus_to_exitcode(status)
        out.write(f"exit {code}\n")
        out.flush()
    os._exit(0)


def main(argv: list[str]) -> None:
    if len(argv) > 1 and argv[1] == "--zygote":
        zygote()
        return
    job_path = argv[1]
    with open(job_path) as f:
        job = json.load(f)
    limit_memory(job.get("max_memory"), job.get("device"))
    if job.get("cwd"):
        os.chdir(job["cwd"])
    if "pythonpath" in job:  # the program sees the user's environment, not ours
        if job["pythonpath"] is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = job["pythonpath"]
    try:
        result = run(job)
    except BaseException as e:  # user code raised: a per-target error
        result = error_result(job, e)
    try:
        write_result(job, result)
    finally:
        leave(0)


if __name__ == "__main__":
    main(sys.argv)
