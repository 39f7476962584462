"""Parent side of ``gnnlint verify``: resolve targets, run one child process per
target (with a timeout), collect the child's JSON result. Never imports torch."""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from gnnlint.verify import _procs

_GNNLINT_PARENT = str(Path(__file__).resolve().parents[2])
_DOTTED = re.compile(r"^[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*$")


@dataclass
class Target:
    spec: str
    # "file" / "module": an example function (gnnlint_example() or the one
    # named); "script": run the file as __main__; "run_module": python -m
    kind: str
    path: str | None = None
    module: str | None = None
    function: str | None = None
    argv: list[str] = field(default_factory=list)

    def as_job(self) -> dict:
        return {"kind": self.kind, "path": self.path, "module": self.module, "function": self.function}

    @property
    def runs_program(self) -> bool:
        return self.kind in ("script", "run_module") or (
            self.function is not None and self.function != "gnnlint_example")


@dataclass
class TargetResult:
    target: Target
    data: dict = field(default_factory=dict)
    error: dict | None = None
    seconds: float = 0.0
    log_path: str | None = None  # the target's stdout and stderr

    @property
    def ok(self) -> bool:
        return self.error is None


def resolve_targets(specs: list[str], cwd: Path, *, modules: list[str] = (),  # type: ignore[assignment]
                    argv: list[str] = (), as_script: bool = False) -> list[Target | TargetResult]:  # type: ignore[assignment]
    """Targets from command-line specs; a spec that names nothing becomes an
    error result.

    - ``PATH.py``: its ``gnnlint_example()`` when it defines one (unless
      ``as_script``), else the file run as ``__main__`` with ``argv``;
    - ``PATH.py:func`` / ``pkg.mod:func``: the function, called;
    - ``pkg.mod``: its ``gnnlint_example()``;
    - a directory: every ``*.py`` in it defining ``gnnlint_example``;
    - ``modules`` (``-m NAME``): ``python -m NAME argv``.
    """
    out: list[Target | TargetResult] = []
    argv = [str(a) for a in argv]
    for spec in specs:
        path_part, func = spec, None
        m = re.match(r"^(.*\.py):([A-Za-z_]\w*)$", spec)
        if m:
            path_part, func = m.group(1), m.group(2)
        p = Path(path_part)
        if not p.is_absolute():
            p = cwd / p
        if p.is_dir():
            found = sorted(q for q in p.glob("*.py") if "def gnnlint_example" in _read(q))
            if not found:
                out.append(_error(Target(spec, "file", path=str(p)), "not-found",
                                  f"{spec}: no file in this directory defines gnnlint_example(); "
                                  "name a script to run it"))
            out += [Target(str(q), "file", path=str(q.resolve())) for q in found]
            continue
        if path_part.endswith(".py") or os.sep in path_part or "/" in path_part:
            t = Target(spec, "file", path=str(p.resolve()), function=func, argv=argv)
            if not p.is_file():
                out.append(_error(t, "not-found", f"{spec}: no such file"))
                continue
            if func is None and (as_script or "def gnnlint_example" not in _read(p)):
                t.kind = "script"
                t.path = str(p.absolute())
            out.append(t)
            continue
        mod, _, func = spec.partition(":")
        if not _DOTTED.match(mod) or (func and not func.isidentifier()):
            out.append(_error(Target(spec, "module", module=mod), "not-found",
                              f"{spec}: not a file, a directory or module:function"))
            continue
        out.append(Target(spec, "module", module=mod, function=func or None, argv=argv))
    for mod in modules:
        if not _DOTTED.match(mod):
            out.append(_error(Target(f"-m {mod}", "run_module", module=mod), "not-found",
                              f"-m {mod}: not a module name"))
            continue
        out.append(Target(f"-m {mod}", "run_module", module=mod, argv=argv))
    return out


def _read(p: Path) -> str:
    try:
        return p.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _error(t: Target, kind: str, message: str) -> TargetResult:
    return TargetResult(t, error={"kind": kind, "message": message})


def _child_env(threads: int | None = None) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [_GNNLINT_PARENT] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env.setdefault("PYTHONUNBUFFERED", "1")
    env.pop("TORCH_LOGS", None)
    if threads:
        env.setdefault("OMP_NUM_THREADS", str(threads))
    return env


# How long a target may take, past --max-seconds, to stop by itself (the
# child interrupts the program, waits, interrupts again, then writes what it
# has) before it is killed.
HARD_GRACE = 60.0


def default_max_memory(jobs: int = 1) -> int | None:
    """Half the machine's memory, shared by the targets running at once."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None
    return max(2 * 2**30, total // 2 // max(1, jobs))


# Logs kept in log_dir(): the newest ones, none older than a week (a log is for the run that printed its path).
KEEP_LOGS = 50
KEEP_LOG_SECONDS = 7 * 24 * 3600


def log_dir() -> Path:
    d = Path(tempfile.gettempdir()) / f"gnnlint-verify-{os.getuid() if hasattr(os, 'getuid') else 'user'}"
    d.mkdir(mode=0o700, parents=True, exist_ok=True)
    return d


def prune_logs(d: Path, keep: int = KEEP_LOGS, max_age: float = KEEP_LOG_SECONDS) -> None:
    """Delete the logs of earlier runs beyond the newest ``keep`` and older than ``max_age`` seconds;
    a log another run is writing is among the newest. Errors (a file gone, no permission) are ignored."""
    logs = []
    for p in d.glob("*.log"):
        try:
            logs.append((p.stat().st_mtime, p))
        except OSError:
            continue
    logs.sort(reverse=True)
    now = time.time()
    for i, (mtime, p) in enumerate(logs):
        if i >= keep or now - mtime > max_age:
            try:
                p.unlink()
            except OSError:
                pass


def new_log_path(target: Target) -> str:
    stem = re.sub(r"[^\w.-]+", "_", Path(target.path or target.module or "target").stem)[:40] or "target"
    prune_logs(log_dir())
    fd, path = tempfile.mkstemp(prefix=f"{stem}-{time.strftime('%Y%m%d-%H%M%S')}-", suffix=".log",
                                dir=str(log_dir()))
    os.close(fd)
    return path


def tail_lines(path: str | None, n: int = 20, max_bytes: int = 64 * 1024) -> str:
    """The last ``n`` lines of a log, reading only its end."""
    if not path:
        return ""
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - max_bytes))
            data = f.read()
    except OSError:
        return ""
    lines = data.decode("utf-8", errors="replace").splitlines()
    return "\n".join(lines[-n:])


class Zygote:
    """A pre-warmed process that has imported torch and PyG and forks one
    fresh process per target (see ``_child.zygote``). Saves the ~3-4 s of
    imports per target; each target still runs in its own process."""

    def __init__(self, cwd: Path, threads: int | None = None, start_timeout: float = 120.0) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "gnnlint.verify._child", "--zygote"],
            cwd=str(cwd), env=_child_env(threads), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, start_new_session=True, text=True, bufsize=1,
        )
        _procs.register_child(self.proc.pid)
        line = self._readline(start_timeout)
        if line != "ready":
            self.close()
            raise RuntimeError(f"verify zygote did not start ({line!r})")

    def _readline(self, timeout: float | None) -> str | None:
        import select

        assert self.proc.stdout is not None
        if timeout is not None:
            r, _, _ = select.select([self.proc.stdout], [], [], max(0.0, timeout))
            if not r:
                return None
        line = self.proc.stdout.readline()
        return line.strip() if line else ""

    def run(self, job_path: str, timeout: float) -> tuple[str, int | None]:
        """("ok"|"timeout"|"dead", exit code)."""
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(job_path + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            return "dead", None
        t0 = time.time()
        line = self._readline(30.0)
        if not line or not line.startswith("pid "):
            return "dead", None
        tree = _procs.ProcessTree(int(line.split()[1]))
        try:
            line = self._readline(max(0.0, timeout - (time.time() - t0)))
            if line is None:
                tree.end()
                self._readline(30.0)  # the "exit" line
                return "timeout", None
            if not line.startswith("exit "):
                return "dead", None
            return "ok", int(line.split()[1])
        finally:
            tree.end()  # whatever the target left behind

    def close(self) -> None:
        try:
            if self.proc.stdin:
                self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            _kill_group(self.proc)
            self.proc.wait()
        _procs.forget_child(self.proc.pid)

    def kill(self) -> None:
        _kill_group(self.proc)
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        _procs.forget_child(self.proc.pid)


def _finish(target: Target, result_path: str, log_path: str, returncode: int | None, t0: float,
            max_memory: int | None = None) -> TargetResult:
    tail = tail_lines(log_path)
    if not os.path.exists(result_path):
        how = f"exit code {returncode}"
        if returncode is not None and returncode < 0:
            try:
                how = f"killed by {signal.Signals(-returncode).name}"
            except ValueError:
                pass
        kind, msg = "crash", f"{target.spec}: the verify process died ({how}) before reporting"
        if any(k in tail for k in ("bad_alloc", "Cannot allocate memory", "MemoryError", "can't allocate memory")):
            limit = f" (--max-memory {max_memory / 2**30:.1f} GB)" if max_memory else ""
            kind, msg = "memory", f"{target.spec}: the target ran out of memory{limit} ({how})"
        return TargetResult(target, error={"kind": kind, "message": msg, "stderr": tail},
                            seconds=time.time() - t0, log_path=log_path)
    with open(result_path) as f:
        data = json.load(f)
    res = TargetResult(target, data=data, seconds=time.time() - t0, log_path=log_path)
    if data.get("error"):
        res.error = dict(data["error"])
        res.error["stderr"] = tail
        msg = res.error.get("message", "")
        if not msg.startswith(target.spec):
            res.error["message"] = f"{target.spec}: {msg}"
    return res


def _timeout_error(target: Target, timeout: float, log_path: str, t0: float) -> TargetResult:
    return TargetResult(target, error={
        "kind": "timeout",
        "message": f"{target.spec}: no result {timeout:g} s after the start (it did not stop at its "
                   "--max-seconds budget); the target and everything it started were killed",
        "stderr": tail_lines(log_path)}, seconds=time.time() - t0, log_path=log_path)


def run_target(target: Target, *, backend: str, device: str, timeout: float, cwd: Path,
               train_steps: int | None = None, zygote: Zygote | None = None,
               threads: int | None = None, max_calls: int | None = None,
               max_memory: int | None = None) -> TargetResult:
    """Run one target in a fresh child process (forked from ``zygote`` when
    given). ``timeout`` is the --max-seconds budget: the child stops the
    program then; it is killed ``HARD_GRACE`` seconds later if it has not."""
    t0 = time.time()
    log_path = new_log_path(target)
    hard = timeout + HARD_GRACE
    with tempfile.TemporaryDirectory(prefix="gnnlint-verify-") as tmp:
        job_path = os.path.join(tmp, "job.json")
        result_path = os.path.join(tmp, "result.json")
        job = {"target": target.as_job(), "backend": backend, "device": device,
               "result_path": result_path, "cwd": str(cwd), "train_steps": train_steps,
               "log_path": log_path, "threads": threads, "argv": list(target.argv),
               "argv0": target.spec if target.kind == "script" else None,
               "max_seconds": timeout, "max_calls": max_calls, "max_memory": max_memory,
               "pythonpath": os.environ.get("PYTHONPATH")}
        with open(job_path, "w") as f:
            json.dump(job, f)
        if zygote is not None:
            state, code = zygote.run(job_path, hard)
            if state != "dead":
                if state == "timeout":
                    return _timeout_error(target, hard, log_path, t0)
                return _finish(target, result_path, log_path, code, t0, max_memory)
            # the zygote died: fall back to a plain child process
        env = _child_env(threads)
        with open(log_path, "ab") as log:
            proc = subprocess.Popen(
                [sys.executable, "-m", "gnnlint.verify._child", job_path],
                cwd=str(cwd), env=env, stdin=subprocess.DEVNULL,
                stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
            )
        _procs.register_child(proc.pid)
        tree = _procs.ProcessTree(proc.pid)
        try:
            try:
                proc.wait(timeout=hard)
            except subprocess.TimeoutExpired:
                tree.end()
                proc.wait()
                return _timeout_error(target, hard, log_path, t0)
        finally:
            tree.end()
            if proc.returncode is None:
                proc.wait()
            _procs.forget_child(proc.pid)
        return _finish(target, result_path, log_path, proc.returncode, t0, max_memory)


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, OSError):
        try:
            proc.kill()
        except OSError:
            pass


def run_all(items: list[Target | TargetResult], *, backend: str, device: str, timeout: float, cwd: Path,
            jobs: int = 1, on_done: Callable[[TargetResult], None] | None = None,
            train_steps: int | None = None, use_zygote: bool | None = None,
            max_calls: int | None = None, max_memory: int | None = None) -> list[TargetResult]:
    """Run every target (``jobs`` at a time); results in the order of ``items``.

    With several targets, each worker forks its targets from a pre-warmed
    zygote process (POSIX only; ``GNNLINT_VERIFY_ZYGOTE=0`` turns it off).
    On KeyboardInterrupt every running target, everything it started and the
    zygotes are ended before the interrupt propagates."""
    import threading

    results: list[TargetResult | None] = [None] * len(items)
    n_real = sum(1 for it in items if isinstance(it, Target))
    if use_zygote is None:
        use_zygote = (n_real > 1 and hasattr(os, "fork") and device != "cuda"
                      and os.environ.get("GNNLINT_VERIFY_ZYGOTE", "1") != "0")
    threads = max(1, (os.cpu_count() or 1) // max(1, jobs)) if jobs > 1 else None
    local = threading.local()
    zygotes: list[Zygote] = []
    lock = threading.Lock()
    stopping = threading.Event()
    _procs.become_subreaper()

    def get_zygote() -> Zygote | None:
        if not use_zygote or stopping.is_set():
            return None
        z = getattr(local, "zygote", None)
        if z is None or z.proc.poll() is not None:
            try:
                z = Zygote(cwd, threads, start_timeout=max(60.0, timeout))
            except (OSError, RuntimeError):
                z = None
            if z is not None and stopping.is_set():  # interrupted while it started
                z.kill()
                z = None
            local.zygote = z
            if z is not None:
                with lock:
                    zygotes.append(z)
        return z

    def work(i: int) -> None:
        if stopping.is_set():
            return
        it = items[i]
        zygote = None if isinstance(it, TargetResult) else get_zygote()
        if stopping.is_set():  # interrupted while the zygote started: run nothing more
            return
        r = it if isinstance(it, TargetResult) else run_target(
            it, backend=backend, device=device, timeout=timeout, cwd=cwd, train_steps=train_steps,
            zygote=zygote, threads=threads, max_calls=max_calls, max_memory=max_memory)
        results[i] = r
        if on_done is not None and not stopping.is_set():
            on_done(r)

    interrupted = False
    try:
        if jobs <= 1 or len(items) <= 1:
            for i in range(len(items)):
                work(i)
        else:
            ex = ThreadPoolExecutor(max_workers=jobs)
            futures = [ex.submit(work, i) for i in range(len(items))]
            try:
                for fut in futures:
                    while True:  # short waits: Ctrl-C reaches this thread at once
                        try:
                            fut.result(timeout=0.5)
                            break
                        except TimeoutError:
                            continue
            finally:
                ex.shutdown(wait=False, cancel_futures=True)
    except BaseException:
        interrupted = True
        stopping.set()
        _procs.end_all()
        for z in zygotes:
            z.kill()
        raise
    finally:
        if not interrupted:
            for z in zygotes:
                z.close()
        _procs.end_orphans()
    return [r for r in results if r is not None]
