"""The user's files, their frames in a stack, line coverage and dynamo's
reasons: the helpers every phase of the verify child uses (no torch needed)."""
from __future__ import annotations

import os
import re
import sys
import traceback
from pathlib import Path
from typing import Any

from gnnlint.verify.child.loops import Iterations, loop_header_lines

# --------------------------------------------------------------------------
# user-file predicate and frame helpers (no torch needed)
# --------------------------------------------------------------------------

_GNNLINT_DIR = str(Path(__file__).resolve().parents[2]) + os.sep
_LIB_MARKERS = (os.sep + "site-packages" + os.sep, os.sep + "dist-packages" + os.sep)


class UserFiles:
    """Which files are "the user's": under one of the roots, not a library."""

    def __init__(self, roots: list[str], extra_files: list[str] = ()):  # type: ignore[assignment]
        self.roots = [os.path.join(os.path.realpath(r), "") for r in roots]
        self.extra = {os.path.realpath(f) for f in extra_files}
        self._cache: dict[str, bool] = {}

    def __contains__(self, filename: str) -> bool:
        hit = self._cache.get(filename)
        if hit is None:
            hit = self._cache[filename] = self._check(filename)
        return hit

    def _check(self, filename: str) -> bool:
        if not filename or filename.startswith("<"):
            return False
        real = os.path.realpath(filename)
        if real in self.extra:
            return True
        if real.startswith(_GNNLINT_DIR) or any(m in real for m in _LIB_MARKERS):
            return False
        return any(real.startswith(r) for r in self.roots)

    def add_root(self, root: str) -> None:
        self.roots.append(os.path.join(os.path.realpath(root), ""))
        self._cache.clear()


USER: UserFiles = UserFiles([])


def real_path(filename: str) -> str:
    return os.path.realpath(filename)


def live_user_frames(skip: int = 1, limit: int = 8) -> list[list]:
    """User frames of the live Python stack, innermost first."""
    out: list[list] = []
    f = sys._getframe(skip)
    while f is not None and len(out) < limit:
        fn = f.f_code.co_filename
        if fn in USER:
            out.append([real_path(fn), f.f_lineno, f.f_code.co_name])
        f = f.f_back
    return out


# Library code whose tensors live on the host even in a CUDA run: a DataLoader
# collating CPU samples, an optimizer reading its CPU step counters
# (capturable=False). Their `.item()`s are not device syncs.
_HOST_SIDE_LIBRARIES = ("/torch/utils/data/", "/torch/optim/", "/torch_geometric/loader/",
                        "/torch_geometric/data/")


def in_host_side_library(skip: int = 1) -> bool:
    """Is the innermost non-gnnlint frame of the live stack host-side library
    code (reached before any user frame)?"""
    f = sys._getframe(skip)
    while f is not None:
        fn = f.f_code.co_filename
        if fn in USER:
            return False
        if any(m in fn.replace("\\", "/") for m in _HOST_SIDE_LIBRARIES):
            return True
        f = f.f_back
    return False


def summary_user_frames(stack) -> list[list]:
    """User frames of a list of FrameSummary (outermost first), innermost first."""
    out = []
    for fs in reversed(list(stack or [])):
        if fs.filename in USER and fs.lineno:
            out.append([real_path(fs.filename), fs.lineno, fs.name])
    return out


def tb_user_frames(tb) -> list[list]:
    return summary_user_frames(traceback.extract_tb(tb))


def innermost_frame(stack) -> list | None:
    stack = list(stack or [])
    if not stack:
        return None
    fs = stack[-1]
    return [fs.filename, fs.lineno, fs.name]


# --------------------------------------------------------------------------
# coverage: sys.settrace limited to user files + lines dynamo traced
# --------------------------------------------------------------------------

class Coverage:
    """The user's lines that ran, and how their loops iterated (``loops``)."""

    def __init__(self) -> None:
        self.lines: dict[str, set[int]] = {}
        self.loops = Iterations()
        self._tracers: dict[str, Any] = {}

    def _local_for(self, fn: str):
        """The line tracer for one file: records its lines, and each time a
        loop header of it is reached."""
        tracer = self._tracers.get(fn)
        if tracer is not None:
            return tracer
        lines = self.lines.setdefault(fn, set())
        headers = loop_header_lines(fn)
        hit = self.loops.hit

        def local(frame, event, arg):
            if event == "line":
                line = frame.f_lineno
                lines.add(line)
                if line in headers:
                    hit(fn, line)
            return local

        self._tracers[fn] = local
        return local

    def _global(self, frame, event, arg):
        fn = frame.f_code.co_filename
        if fn in USER:
            self.lines.setdefault(fn, set()).add(frame.f_lineno)
            return self._local_for(fn)
        return None

    def add(self, filename: str, line: int) -> None:
        if filename in USER:
            self.lines.setdefault(filename, set()).add(line)

    def start(self) -> None:
        if os.environ.get("GNNLINT_VERIFY_NO_SETTRACE"):
            return
        sys.settrace(self._global)

    def stop(self) -> None:
        sys.settrace(None)

    def as_json(self) -> dict[str, list[int]]:
        merged: dict[str, set[int]] = {}
        for fn, ls in self.lines.items():
            merged.setdefault(real_path(fn), set()).update(ls)
        return {fn: sorted(l for l in ls if l > 0) for fn, ls in merged.items()}


# --------------------------------------------------------------------------
# reason helpers
# --------------------------------------------------------------------------

_PREFIX = re.compile(r"^\s*\d+/\d+:\s*")


def short_reason(reason: str, limit: int = 400) -> str:
    """First line of a dynamo reason plus its Explanation line, if any."""
    if not reason:
        return ""
    lines = [l.rstrip() for l in str(reason).splitlines() if l.strip()]
    if not lines:
        return ""
    head = _PREFIX.sub("", lines[0]).strip()
    for l in lines[1:4]:
        s = l.strip()
        if s.startswith("Explanation:"):
            head = f"{head}: {s[len('Explanation:'):].strip()}"
            break
    # strip dynamo's source comment on guard failures
    head = re.sub(r"\s{2,}#.*$", "", head)
    return head[:limit]


_GUARD_STACK = re.compile(r'^\s*File "([^"]+)", line (\d+), in (\S+)', re.M)


def guard_user_frames(reason: str) -> list[list]:
    """The user lines a failed guard was installed at: dynamo appends a "User
    stack trace" to a recompile reason whose guard came from user code
    (``self.step == 3`` at ``self.step += 1``, ``len(self.history) == 2`` at
    the ``.append``). Innermost first; only the user's files."""
    text = str(reason or "")
    if "User stack trace" not in text:
        return []
    text = text.split("User stack trace", 1)[1]
    frames = [[real_path(m.group(1)), int(m.group(2)), m.group(3)] for m in _GUARD_STACK.finditer(text)
              if m.group(1) in USER]
    return frames[::-1]


def reason_key(reason: str) -> str:
    r = re.sub(r"expected \d+, actual \d+", "expected N, actual M", reason)
    r = re.sub(r"tensor '.*?' size mismatch at index \d+", "tensor size mismatch", r)
    r = re.sub(r"== [-+0-9.e]+", "== <value>", r)
    return r


def is_torch_internal(filename: str) -> bool:
    f = filename.replace("\\", "/")
    return "/torch/" in f and "/torch_geometric/" not in f


def dedupe_frames(frames) -> list[list]:
    seen = set()
    out = []
    for f in frames or []:
        if not f:
            continue
        key = (f[0], f[1])
        if key in seen:
            continue
        seen.add(key)
        out.append(list(f))
    return out


class TargetError(Exception):
    def __init__(self, kind: str, message: str, tb: str | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.tb = tb
