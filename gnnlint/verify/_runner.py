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

_GNNLINT_PARENT = str(Path(__file__).resolve().parents[2])
_DOTTED = re.compile(r"^[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*$")


@dataclass
class Target:
    spec: str
    kind: str  # "file" | "module"
    path: str | None = None
    module: str | None = None
    function: str | None = None

    def as_job(self) -> dict:
        return {"kind": self.kind, "path": self.path, "module": self.module, "function": self.function}


@dataclass
class TargetResult:
    target: Target
    data: dict = field(default_factory=dict)
    error: dict | None = None
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.error is None


def resolve_targets(specs: list[str], cwd: Path) -> list[Target | TargetResult]:
    """Targets from command-line specs; a spec that names nothing becomes an
    error result. A directory means every ``*.py`` in it defining
    ``gnnlint_example``."""
    out: list[Target | TargetResult] = []
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
                                  f"{spec}: no file in this directory defines gnnlint_example()"))
            out += [Target(str(q), "file", path=str(q.resolve())) for q in found]
            continue
        if path_part.endswith(".py") or os.sep in path_part or "/" in path_part:
            t = Target(spec, "file", path=str(p.resolve()), function=func)
            if not p.is_file():
                out.append(_error(t, "not-found", f"{spec}: no such file"))
            else:
                out.append(t)
            continue
        mod, _, func = spec.partition(":")
        if not _DOTTED.match(mod) or (func and not func.isidentifier()):
            out.append(_error(Target(spec, "module", module=mod), "not-found",
                              f"{spec}: not a file, a directory or module:function"))
            continue
        out.append(Target(spec, "module", module=mod, function=func or None))
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
        pid = int(line.split()[1])
        line = self._readline(max(0.0, timeout - (time.time() - t0)))
        if line is None:
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            self._readline(30.0)  # the "exit" line
            return "timeout", None
        if not line.startswith("exit "):
            return "dead", None
        return "ok", int(line.split()[1])

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


def _finish(target: Target, result_path: str, stderr: str, returncode: int | None, t0: float) -> TargetResult:
    if not os.path.exists(result_path):
        how = f"exit code {returncode}"
        if returncode is not None and returncode < 0:
            try:
                how = f"killed by {signal.Signals(-returncode).name}"
            except ValueError:
                pass
        return TargetResult(target, error={
            "kind": "crash", "message": f"{target.spec}: the verify process died ({how}) before reporting",
            "stderr": stderr}, seconds=time.time() - t0)
    with open(result_path) as f:
        data = json.load(f)
    res = TargetResult(target, data=data, seconds=time.time() - t0)
    if data.get("error"):
        res.error = dict(data["error"])
        res.error["stderr"] = stderr
        msg = res.error.get("message", "")
        if not msg.startswith(target.spec):
            res.error["message"] = f"{target.spec}: {msg}"
    return res


def _timeout_error(target: Target, timeout: float, stderr: str, t0: float) -> TargetResult:
    return TargetResult(target, error={
        "kind": "timeout",
        "message": f"{target.spec}: no result after {timeout:g} s (timeout); the target was stopped",
        "stderr": stderr}, seconds=time.time() - t0)


def run_target(target: Target, *, backend: str, device: str, timeout: float, cwd: Path,
               train_steps: int | None = None, zygote: Zygote | None = None,
               threads: int | None = None) -> TargetResult:
    """Run one target in a fresh child process (forked from ``zygote`` when given)."""
    t0 = time.time()
    with tempfile.TemporaryDirectory(prefix="gnnlint-verify-") as tmp:
        job_path = os.path.join(tmp, "job.json")
        result_path = os.path.join(tmp, "result.json")
        log_path = os.path.join(tmp, "log.txt")
        job = {"target": target.as_job(), "backend": backend, "device": device,
               "result_path": result_path, "cwd": str(cwd), "train_steps": train_steps,
               "log_path": log_path, "threads": threads}
        with open(job_path, "w") as f:
            json.dump(job, f)
        if zygote is not None:
            state, code = zygote.run(job_path, timeout)
            if state != "dead":
                log = _tail(_read_bytes(log_path))
                if state == "timeout":
                    return _timeout_error(target, timeout, log, t0)
                return _finish(target, result_path, log, code, t0)
            # the zygote died: fall back to a plain child process
        env = _child_env(threads)
        proc = subprocess.Popen(
            [sys.executable, "-m", "gnnlint.verify._child", job_path],
            cwd=str(cwd), env=env, stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
        )
        try:
            stdout, stderr = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            stdout, stderr = proc.communicate()
            return _timeout_error(target, timeout, _tail(stderr), t0)
        return _finish(target, result_path, _tail(stderr), proc.returncode, t0)


def _read_bytes(p: str) -> bytes:
    try:
        with open(p, "rb") as f:
            return f.read()
    except OSError:
        return b""


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, OSError):
        try:
            proc.kill()
        except OSError:
            pass


def _tail(data: bytes | None, n: int = 4000) -> str:
    if not data:
        return ""
    return data[-n:].decode("utf-8", errors="replace")


def run_all(items: list[Target | TargetResult], *, backend: str, device: str, timeout: float, cwd: Path,
            jobs: int = 1, on_done: Callable[[TargetResult], None] | None = None,
            train_steps: int | None = None, use_zygote: bool | None = None) -> list[TargetResult]:
    """Run every target (``jobs`` at a time); results in the order of ``items``.

    With several targets, each worker forks its targets from a pre-warmed
    zygote process (POSIX only; ``GNNLINT_VERIFY_ZYGOTE=0`` turns it off)."""
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

    def get_zygote() -> Zygote | None:
        if not use_zygote:
            return None
        z = getattr(local, "zygote", None)
        if z is None or z.proc.poll() is not None:
            try:
                z = Zygote(cwd, threads, start_timeout=max(60.0, timeout))
            except (OSError, RuntimeError):
                z = None
            local.zygote = z
            if z is not None:
                with lock:
                    zygotes.append(z)
        return z

    def work(i: int) -> None:
        it = items[i]
        r = it if isinstance(it, TargetResult) else run_target(
            it, backend=backend, device=device, timeout=timeout, cwd=cwd, train_steps=train_steps,
            zygote=get_zygote(), threads=threads)
        results[i] = r
        if on_done is not None:
            on_done(r)

    try:
        if jobs <= 1 or len(items) <= 1:
            for i in range(len(items)):
                work(i)
        else:
            with ThreadPoolExecutor(max_workers=jobs) as ex:
                list(ex.map(work, range(len(items))))
    finally:
        for z in zygotes:
            z.close()
    return [r for r in results if r is not None]
