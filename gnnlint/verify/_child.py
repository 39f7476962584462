"""The verify child process: imports one target, compiles it with
instrumentation, runs it, and writes what happened as JSON.

Run as ``python -m gnnlint.verify._child JOB.json``. This is the only module
of gnnlint that imports torch, and only inside :func:`main`. Nothing here is
imported by the parent process.

The child never writes to its stdout/stderr on purpose (user code may); the
result goes to ``job["result_path"]``. It leaves with ``os._exit`` because a
process that ran many compiles can hang at interpreter exit on torch 2.13.
"""
from __future__ import annotations

import functools
import importlib
import importlib.util
import inspect
import json
import os
import re
import sys
import time
import traceback
import warnings
import weakref
from contextlib import contextmanager
from pathlib import Path
from typing import Any

# --------------------------------------------------------------------------
# user-file predicate and frame helpers (no torch needed)
# --------------------------------------------------------------------------

_GNNLINT_DIR = str(Path(__file__).resolve().parents[1]) + os.sep
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


def _real(filename: str) -> str:
    return os.path.realpath(filename)


def live_user_frames(skip: int = 1, limit: int = 8) -> list[list]:
    """User frames of the live Python stack, innermost first."""
    out: list[list] = []
    f = sys._getframe(skip)
    while f is not None and len(out) < limit:
        fn = f.f_code.co_filename
        if fn in USER:
            out.append([_real(fn), f.f_lineno, f.f_code.co_name])
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
            out.append([_real(fs.filename), fs.lineno, fs.name])
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
    def __init__(self) -> None:
        self.lines: dict[str, set[int]] = {}

    def _local(self, frame, event, arg):
        if event == "line":
            self.lines.setdefault(frame.f_code.co_filename, set()).add(frame.f_lineno)
        return self._local

    def _global(self, frame, event, arg):
        fn = frame.f_code.co_filename
        if fn in USER:
            self.lines.setdefault(fn, set()).add(frame.f_lineno)
            return self._local
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
            merged.setdefault(_real(fn), set()).update(ls)
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
    frames = [[_real(m.group(1)), int(m.group(2)), m.group(3)] for m in _GUARD_STACK.finditer(text)
              if m.group(1) in USER]
    return frames[::-1]


def reason_key(reason: str) -> str:
    r = re.sub(r"expected \d+, actual \d+", "expected N, actual M", reason)
    r = re.sub(r"tensor '.*?' size mismatch at index \d+", "tensor size mismatch", r)
    r = re.sub(r"== [-+0-9.e]+", "== <value>", r)
    return r


# --------------------------------------------------------------------------
# the harness
# --------------------------------------------------------------------------

class Harness:
    def __init__(self, job: dict) -> None:
        self.job = job
        self.events: list[dict] = []
        self.internal: list[dict] = []
        self.compiles: list[dict] = []  # compile records
        self.optimizers: dict[int, dict] = {}
        self.active: list[dict] = []  # stack of active compile records
        self.compile_ctx: dict[str, dict] = {}  # compile_id -> {frames, rec}
        self.sparse_sites: dict[int, tuple[Any, list]] = {}
        self.current_sparse_frames: list[list] = []
        self.coverage = Coverage()
        self.recording = False  # host-sync recording (run phase only)
        self.modes_on = False
        self.in_sync_op = 0
        self.notes: list[str] = []
        self.raised: list[str] = []
        self.skipped: list[tuple] = []
        self.backend = job.get("backend") or "eager"
        self.device = job.get("device") or "auto"
        self.budget = None  # a _program.Budget once the user's code runs under it
        self.program_mode = False  # the user's own program/function drives the run
        self.benign: dict[str, int] = {}  # events that are never evidence, by class
        self.finish_cb = None  # writes the result and leaves (a budget giving up)
        self.break_sites: dict[str, dict] = {}  # dynamo frame id -> its first graph break
        self.total_calls = 0  # top-level calls of compiled code so far (spaces syncs apart)

    # ------------------------------------------------------------ torch setup
    def setup_torch(self) -> None:
        import torch
        import torch._dynamo
        import torch._dynamo.utils
        from torch.overrides import TorchFunctionMode
        from torch.utils._python_dispatch import TorchDispatchMode

        self.torch = torch
        if self.job.get("threads"):
            try:
                torch.set_num_threads(int(self.job["threads"]))
            except Exception:
                pass
        torch._dynamo.reset()
        torch._dynamo.utils.clear_compilation_metrics()
        try:
            torch._dynamo.utils.set_compilation_metrics_limit(100000)
        except Exception:
            pass
        if self.device in ("auto", "", None):
            self.device = "cuda" if torch.cuda.is_available() else "cpu"
        if self.device == "cuda" and not torch.cuda.is_available():
            raise TargetError("device", "--device cuda requested but CUDA is not available")
        harness = self

        sync_methods = {
            "item", "tolist", "__bool__", "__float__", "__int__", "__index__",
            "nonzero", "unique", "unique_consecutive", "masked_select", "numpy",
        }

        class FunctionMode(TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                kwargs = kwargs or {}
                what = None
                if harness.recording and not harness.in_sync_op:
                    what = harness.classify_sync(func, args, kwargs)
                if what is None:
                    out = func(*args, **kwargs)
                else:
                    harness.record_sync(what)
                    harness.in_sync_op += 1
                    try:
                        out = func(*args, **kwargs)
                    finally:
                        harness.in_sync_op -= 1
                if harness.tracking_sparse and isinstance(out, torch.Tensor):
                    try:
                        if out.layout != torch.strided:
                            harness.sparse_sites[id(out)] = (out, live_user_frames(2))
                    except Exception:
                        pass
                return out

        class DispatchMode(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                if harness.recording and not harness.in_sync_op:
                    name = str(func)
                    if "_local_scalar_dense" in name:
                        harness.record_sync(f"host sync ({name})")
                    elif name.startswith("aten.nonzero"):
                        harness.record_sync(f"data-dependent shape ({name})")
                return func(*args, **(kwargs or {}))

        self.sync_methods = sync_methods
        self.tracking_sparse = True
        self.fmode = FunctionMode()
        self.dmode = DispatchMode()
        self._install_patches()

    def classify_sync(self, func, args, kwargs) -> str | None:
        torch = self.torch
        name = getattr(func, "__name__", "")
        if name in ("__bool__", "__float__", "__int__", "__index__", "item", "tolist", "numpy"):
            pretty = {"__bool__": "bool(tensor)", "__float__": "float(tensor)",
                      "__int__": "int(tensor)", "__index__": "tensor used as index"}.get(name, f".{name}()")
            return f"host sync: {pretty}"
        if name in ("nonzero", "unique", "unique_consecutive", "masked_select", "argwhere"):
            return f"data-dependent shape: {name}"
        if name == "where" and len(args) + len(kwargs) == 1:
            return "data-dependent shape: one-argument where"
        if name == "repeat_interleave":
            repeats = kwargs.get("repeats", args[1] if len(args) > 1 else None)
            if isinstance(repeats, torch.Tensor) and repeats.numel() > 1 and kwargs.get("output_size") is None:
                return "host sync: repeat_interleave with tensor repeats and no output_size"
            return None
        if name == "bincount" and kwargs.get("minlength") is None and len(args) < 3:
            return "data-dependent shape: bincount without minlength"
        if name == "__getitem__" and len(args) >= 2:
            idx = args[1]
            items = idx if isinstance(idx, tuple) else (idx,)
            for it in items:
                if isinstance(it, torch.Tensor) and it.dtype == torch.bool:
                    return "data-dependent shape: boolean-mask indexing"
            return None
        if name in ("cpu", "to") and args and isinstance(args[0], torch.Tensor):
            t = args[0]
            if t.device.type != "cpu":
                dest = kwargs.get("device", args[1] if len(args) > 1 else None)
                if name == "cpu" or (dest is not None and str(dest).startswith("cpu")):
                    return "host sync: device-to-host copy"
        return None

    def count_benign(self, what: str, n: int = 1) -> None:
        self.benign[what] = self.benign.get(what, 0) + n

    def record_sync(self, what: str) -> None:
        if self.program_mode and not any(r["calls"] for r in self.compiles):
            return  # setup before any compiled code ran (data loading, preprocessing)
        if in_host_side_library(3):
            self.count_benign("host-side library sync (DataLoader collation, optimizer step counters)")
            return
        frames = live_user_frames(3)
        if not frames:
            return
        self.add_event("host_sync", what, frames[:1], context=frames[1:], extra={"at_call": self.total_calls})

    # ------------------------------------------------------------ modes
    def modes_enter(self) -> None:
        if not self.modes_on:
            self.fmode.__enter__()
            self.dmode.__enter__()
            self.modes_on = True

    def modes_exit(self) -> None:
        if self.modes_on:
            self.dmode.__exit__(None, None, None)
            self.fmode.__exit__(None, None, None)
            self.modes_on = False

    @contextmanager
    def modes_suspended(self):
        was = self.modes_on
        if was:
            self.modes_exit()
        try:
            yield
        finally:
            if was:
                self.modes_enter()

    # ------------------------------------------------------------ events
    def add_event(self, kind: str, reason: str, frames: list[list], *, context=(), origin=None,
                  rec: dict | None = None, extra: dict | None = None) -> None:
        """``frames``: where the event is attributed (findings match these);
        ``context``: where it was seen from (call stack, compile site)."""
        frames = _dedupe_frames(frames)
        context = [f for f in _dedupe_frames(context) if f not in frames]
        if not frames and context:
            frames, context = context[:1], context[1:]
        ev = {"kind": kind, "reason": reason, "frames": frames, "context": context,
              "origin": origin, "compile": rec["id"] if rec else None}
        if extra:
            ev.update(extra)
        if not ev["frames"]:
            self.internal.append(ev)
        else:
            self.events.append(ev)

    # ------------------------------------------------------------ patches
    def _install_patches(self) -> None:
        torch = self.torch
        harness = self
        orig_compile = torch.compile
        self.orig_compile = orig_compile
        from torch._dynamo.eval_frame import OptimizedModule

        self.OptimizedModule = OptimizedModule
        self.module_recs: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()

        @functools.wraps(orig_compile)
        def compile(model=None, **kw):
            if model is None:
                return lambda m: compile(m, **kw)
            frames = live_user_frames(2)
            site = frames[0] if frames else None
            return harness.compile_with_record(model, kw, site=site, origin="user")

        torch.compile = compile

        orig_call = OptimizedModule.__call__

        def om_call(self_, *args, **kwargs):
            rec = harness.module_recs.get(self_)
            return harness.run_compiled(rec, functools.partial(orig_call, self_), args, kwargs)

        OptimizedModule.__call__ = om_call

        opt_init = torch.optim.Optimizer.__init__

        def optimizer_init(self_, params, defaults, *a, **k):
            lr = defaults.get("lr") if isinstance(defaults, dict) else None
            frames = live_user_frames(2)
            harness.optimizers[id(self_)] = {
                "frames": frames, "cls": type(self_).__name__,
                "lr_kind": "tensor" if isinstance(lr, torch.Tensor) else type(lr).__name__,
                "lr": float(lr) if isinstance(lr, (int, float)) else None,
                "ref": self_,
            }
            return opt_init(self_, params, defaults, *a, **k)

        torch.optim.Optimizer.__init__ = optimizer_init

        # dynamo hooks: compile start (live stack), graph breaks, traced lines
        from torch._dynamo.callback import callback_handler

        def on_start(args):
            try:
                cid = str(args.compile_id)
                rec = harness.active[-1] if harness.active else None
                harness.compile_ctx[cid] = {
                    "frames": live_user_frames(2, limit=6),
                    "rec": rec,
                    "sparse": list(harness.current_sparse_frames),
                }
                if rec is not None:
                    rec["frames_tried"].add(cid.split("/")[0])
            except Exception:
                pass

        callback_handler.register_start_callback(on_start)
        _keep_callback_across_reset(torch, callback_handler, on_start)

        from torch._dynamo import output_graph, symbolic_convert

        gcr = output_graph.GraphCompileReason
        orig_post = gcr.__post_init__

        def post_init(self_):
            orig_post(self_)
            if self_.graph_break:
                try:
                    harness.on_graph_break(self_.reason, self_.user_stack)
                except Exception:
                    pass

        gcr.__post_init__ = post_init

        orig_starts_line = symbolic_convert.InstructionTranslatorBase.starts_line
        cov = self.coverage

        def starts_line(self_, lineno):
            try:
                cov.add(self_.f_code.co_filename, lineno)
            except Exception:
                pass
            return orig_starts_line(self_, lineno)

        symbolic_convert.InstructionTranslatorBase.starts_line = starts_line

    def current_compile_ctx(self) -> dict:
        try:
            cid = str(self.torch._guards.CompileContext.current_compile_id())
        except Exception:
            cid = None
        return self.compile_ctx.get(cid or "", {}) | {"compile_id": cid}

    def on_graph_break(self, reason: str, user_stack) -> None:
        ctx = self.current_compile_ctx()
        chain = summary_user_frames(user_stack)
        live = ctx.get("frames") or []
        rec = ctx.get("rec")
        frames = chain[:1] or live[:1]
        origin_pre = innermost_frame(user_stack)
        in_pyg = bool(origin_pre and "/torch_geometric/" in str(origin_pre[0]).replace("\\", "/"))
        if "sparse" in str(reason).lower() or in_pyg:
            # PyG takes its sparse code path because an input is sparse
            frames += ctx.get("sparse") or []
        origin = innermost_frame(user_stack)
        if not frames and origin and _is_torch_internal(origin[0]):
            # torch's own machinery (e.g. the lr_scheduler wrapper around
            # opt.step): nothing the user can change
            self.internal.append({"kind": "graph_break", "reason": short_reason(reason),
                                  "frames": [], "context": [], "origin": origin, "compile": rec["id"] if rec else None})
            return
        context = chain[1:] + live + ([rec["site"]] if rec and rec.get("site") else [])
        fid = str(ctx.get("compile_id") or "").split("/")[0]
        if fid and frames:
            self.break_sites.setdefault(fid, {"at": frames[0], "origin": origin, "reason": short_reason(reason)})
        self.add_event("graph_break", short_reason(reason), frames, context=context, origin=origin, rec=rec,
                       extra={"compile_id": ctx.get("compile_id")})

    # ------------------------------------------------------------ compiling
    def compile_with_record(self, model, kw: dict, *, site, origin: str, static_site=None):
        torch = self.torch
        kw = dict(kw)
        user_backend = kw.get("backend")
        if user_backend is None or isinstance(user_backend, str):
            kw["backend"] = self.counting_backend(self.backend)
        if kw.get("backend") != "inductor":
            kw.pop("mode", None)
            kw.pop("options", None)
        rec = {
            "id": len(self.compiles),
            "site": site,
            "origin": origin,
            "target": _describe(model),
            "options": {k: _jsonable(v) for k, v in kw.items() if k != "backend"},
            "backend": (self.backend if getattr(kw.get("backend"), "__name__", None) == self.backend
                        else kw.get("backend") if isinstance(kw.get("backend"), str) else repr(kw.get("backend"))),
            "counted": callable(kw.get("backend")) and getattr(kw.get("backend"), "__name__", None) == self.backend,
            "calls": 0,
            "shapes": set(),
            "optimizer": None,
            # which dynamo frames this object's calls tried to compile, and
            # per call, the frames whose compiled graphs ran (None: unknown)
            "frames_tried": set(),
            "call_graphs": [],
        }
        if static_site:
            rec["options"].update({k: v for k, v in static_site.items() if k in ("mode",) and v})
        bound = getattr(model, "__self__", None)
        if bound is not None and isinstance(bound, torch.optim.Optimizer):
            rec["optimizer"] = id(bound)
        self.compiles.append(rec)
        with self.modes_suspended():
            compiled = self.orig_compile(model, **kw)
        if isinstance(compiled, self.OptimizedModule):
            self.module_recs[compiled] = rec
            return compiled
        harness = self

        @functools.wraps(compiled)
        def run(*args, **kwargs):
            return harness.run_compiled(rec, compiled, args, kwargs)

        run._gnnlint_rec = rec  # type: ignore[attr-defined]
        return run

    def counting_backend(self, name: str):
        """The backend ``name`` with each compiled graph's runs counted for the
        compiled object being called (one wrapper per backend, shared by every
        compile, so verify adds no backend guard). Inductor is used as is."""
        if name not in ("eager", "aot_eager"):
            return name
        cached = getattr(self, "_counting", {}).get(name)
        if cached is not None:
            return cached
        from torch._dynamo.backends.registry import lookup_backend

        inner = lookup_backend(name)
        harness = self

        def counting(gm, example_inputs, **kw):
            try:
                fid = str(self.torch._guards.CompileContext.current_compile_id()).split("/")[0]
            except Exception:
                fid = None
            fn = inner(gm, example_inputs, **kw)
            if fid is None:
                return fn

            def note():
                cur = harness.graph_sink
                if cur is not None:
                    cur.add(fid)

            if getattr(fn, "_boxed_call", False):
                def run_boxed(args):
                    note()
                    return fn(args)

                run_boxed._boxed_call = True  # type: ignore[attr-defined]
                return run_boxed

            def run(*args):
                note()
                return fn(*args)

            return run

        counting.__name__ = f"{name}"
        self._counting = {**getattr(self, "_counting", {}), name: counting}
        self.counted = True
        return counting

    graph_sink: "set | None" = None  # frame ids whose graphs ran in the current top-level call
    counted = False

    def run_compiled(self, rec, fn, args, kwargs):
        budget = self.budget
        if budget is not None and not self.active:
            budget.before_call(rec)
        if self.program_mode and not self.active:
            self.current_sparse_frames = _sparse_frames(self, (args, kwargs))
        outer_sink = self.graph_sink
        if not self.active:
            self.total_calls += 1
        if rec is not None:
            rec["calls"] += 1
            try:
                rec["shapes"].add(_shape_sig(self.torch, (args, kwargs)))
            except Exception:
                pass
            self.active.append(rec)
            self.graph_sink = set()
            rec["call_graphs"].append(self.graph_sink)
        tracer = sys.gettrace()
        if tracer is not None:
            # dynamo's traced lines cover compiled code; tracing dynamo itself
            # would only slow compilation down
            sys.settrace(None)
        try:
            with self.modes_suspended():
                return fn(*args, **kwargs)
        finally:
            if tracer is not None:
                sys.settrace(tracer)
            if rec is not None:
                self.active.pop()
                if outer_sink is not None:
                    outer_sink.update(self.graph_sink or ())
                self.graph_sink = outer_sink
            if budget is not None and not self.active:
                budget.after_call()


def _keep_callback_across_reset(torch, callback_handler, on_start) -> None:
    """``torch._dynamo.reset()`` (GNN015's fix for a sweep: one per
    configuration; ``torch.compiler.reset()`` calls it) clears dynamo's
    callbacks, so verify would stop seeing which compiled object a compile
    belongs to and count its calls as eager. Register ours again after it."""
    orig_reset = torch._dynamo.reset

    def reset(*args, **kwargs):
        out = orig_reset(*args, **kwargs)
        callback_handler.register_start_callback(on_start)
        return out

    reset.__wrapped__ = orig_reset  # type: ignore[attr-defined]
    torch._dynamo.reset = reset


class TargetError(Exception):
    def __init__(self, kind: str, message: str, tb: str | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.tb = tb


def _is_torch_internal(filename: str) -> bool:
    f = filename.replace("\\", "/")
    return "/torch/" in f and "/torch_geometric/" not in f


def _dedupe_frames(frames) -> list[list]:
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


def _describe(obj) -> str:
    try:
        if hasattr(obj, "__self__") and hasattr(obj, "__func__"):
            return f"{type(obj.__self__).__name__}.{obj.__func__.__name__}"
        if isinstance(obj, type) or callable(obj) and hasattr(obj, "__qualname__"):
            return getattr(obj, "__qualname__", repr(obj))
        return type(obj).__name__
    except Exception:
        return "?"


def _jsonable(v):
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    return repr(v)


def _iter_tensors(torch, obj, depth=0):
    if depth > 6:
        return
    if isinstance(obj, torch.Tensor):
        yield obj
    elif isinstance(obj, (list, tuple)):
        for o in obj:
            yield from _iter_tensors(torch, o, depth + 1)
    elif isinstance(obj, dict):
        for o in obj.values():
            yield from _iter_tensors(torch, o, depth + 1)
    elif hasattr(obj, "to_dict") and callable(getattr(obj, "to_dict")):
        try:
            d = obj.to_dict()
        except Exception:
            return
        yield from _iter_tensors(torch, d, depth + 1)
    elif type(obj).__name__ == "SparseTensor":  # torch_sparse
        yield obj


def _shape_sig(torch, obj) -> str:
    parts = []
    for t in _iter_tensors(torch, obj):
        try:
            parts.append("x".join(str(int(s)) for s in t.size()))
        except Exception:
            parts.append("?")
    return ",".join(parts)


def _move(obj, device):
    if device == "cpu":
        return obj
    if hasattr(obj, "to"):
        try:
            return obj.to(device)
        except Exception:
            return obj
    if isinstance(obj, tuple):
        return tuple(_move(o, device) for o in obj)
    if isinstance(obj, list):
        return [_move(o, device) for o in obj]
    if isinstance(obj, dict):
        return {k: _move(v, device) for k, v in obj.items()}
    return obj


# --------------------------------------------------------------------------
# target import and example parsing
# --------------------------------------------------------------------------

def package_root(path: Path) -> tuple[Path, str]:
    """(sys.path root, dotted module name) of a file, walking up __init__.py."""
    path = path.resolve()
    parts = [path.stem]
    d = path.parent
    while (d / "__init__.py").exists():
        parts.append(d.name)
        d = d.parent
    if path.name == "__init__.py":
        parts = parts[1:]
    return d, ".".join(reversed(parts))


def import_target(h: Harness, target: dict):
    kind = target["kind"]
    if kind == "file":
        path = Path(target["path"]).resolve()
        if not path.is_file():
            raise TargetError("not-found", f"{path}: no such file")
        root, modname = package_root(path)
        USER.add_root(str(root if root != path.parent else path.parent))
        USER.extra.add(str(path))
        sys.path.insert(0, str(root))
        if root != path.parent:
            mod = importlib.import_module(modname)
        else:
            spec = importlib.util.spec_from_file_location(modname, path)
            mod = importlib.util.module_from_spec(spec)
            sys.modules[modname] = mod
            spec.loader.exec_module(mod)
        func_name = target.get("function") or "gnnlint_example"
    else:
        modname = target["module"]
        top = modname.split(".")[0]
        cwd = os.getcwd()
        if cwd not in sys.path:
            sys.path.insert(0, cwd)
        try:
            spec = importlib.util.find_spec(top)
        except (ImportError, ValueError):
            spec = None
        if spec is None:
            raise TargetError("not-found", f"module {modname!r} not found (sys.path starts {sys.path[:3]})")
        origin = spec.origin or (list(spec.submodule_search_locations or [None])[0])
        if origin:
            o = Path(origin).resolve()
            root = o.parent.parent if o.name == "__init__.py" or spec.submodule_search_locations else o.parent
            USER.add_root(str(root))
        try:
            mod = importlib.import_module(modname)
        except ModuleNotFoundError as e:
            if e.name and modname.startswith(e.name):
                raise TargetError("not-found", f"module {modname!r} not found") from None
            raise
        path = Path(getattr(mod, "__file__", "") or "").resolve()
        USER.extra.add(str(path))
        func_name = target.get("function") or "gnnlint_example"
    fn = getattr(mod, func_name, None)
    if fn is None or not callable(fn):
        raise TargetError("not-found", f"{path}: no function {func_name}() to verify")
    return mod, fn, path


def parse_example(torch, result) -> dict:
    """Normalise what gnnlint_example() returned."""
    ex: dict[str, Any] = {}
    if isinstance(result, dict):
        ex = dict(result)
    elif hasattr(result, "model") and hasattr(result, "inputs"):
        ex = {k: getattr(result, k) for k in ("model", "inputs", "optimizer", "scheduler",
                                              "loss_fn", "step", "run", "steps") if hasattr(result, k)}
    elif isinstance(result, (tuple, list)) and len(result) in (2, 3):
        ex = {"model": result[0], "inputs": result[1]}
        if len(result) == 3 and result[2] is not None:
            extra = result[2]
            if not isinstance(extra, dict):
                extra = {k: getattr(extra, k) for k in ("optimizer", "scheduler", "loss_fn", "step", "run", "steps")
                         if hasattr(extra, k)}
            ex.update(extra)
    else:
        raise TargetError("bad-example", "gnnlint_example() must return (model, [inputs...]) "
                          "or (model, [inputs...], {optimizer, scheduler, loss_fn})")
    if ex.get("run") is not None and not callable(ex["run"]):
        raise TargetError("bad-example", "gnnlint_example(): 'run' must be a callable taking the model")
    if ex.get("model") is None or not callable(ex["model"]):
        raise TargetError("bad-example", "gnnlint_example(): the model is missing or not callable")
    inputs = ex.get("inputs")
    if ex.get("run") is not None and inputs is None:
        inputs = []
    if not isinstance(inputs, (list, tuple)) or (not inputs and ex.get("run") is None):
        raise TargetError("bad-example", "gnnlint_example(): inputs must be a non-empty list")
    ex["inputs"] = list(inputs)
    return ex


def call_args(inp, model=None) -> tuple[tuple, dict]:
    if isinstance(inp, tuple):
        return inp, {}
    if isinstance(inp, list):
        return tuple(inp), {}
    if model is not None and _is_pyg_data(inp):
        return data_args(inp, model)
    return (inp,), {}


def _is_pyg_data(obj) -> bool:
    try:
        from torch_geometric.data.data import BaseData
    except ImportError:
        return False
    return isinstance(obj, BaseData)


_WHOLE_NAMES = {"data", "batch", "graph", "g", "inputs", "input", "sample", "hetero_data", "mini_batch"}
_MISSING = object()


def _data_attr(data, name: str):
    try:
        return getattr(data, name)
    except (AttributeError, KeyError):
        return _MISSING


def data_args(data, model) -> tuple[tuple, dict]:
    """A ``Data``/``HeteroData``/``Batch`` input passed the way the model's
    ``forward`` asks: ``forward(data)`` gets the object, ``forward(x,
    edge_index, batch)`` its attributes by name."""
    fwd = getattr(_unwrap(model), "forward", None)
    try:
        sig = inspect.signature(fwd)
    except (TypeError, ValueError):
        return (data,), {}
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD,
             inspect.Parameter.KEYWORD_ONLY)
    params = [p for p in sig.parameters.values() if p.kind in kinds]
    if not params:
        return (data,), {}
    first = params[0]
    ann = str(first.annotation)
    required = [p for p in params if p.default is p.empty]
    if (first.name in _WHOLE_NAMES or "Data" in ann or "Batch" in ann
            or (_data_attr(data, first.name) is _MISSING and len(required) <= 1)):
        return (data,), {}
    args: list = []
    kwargs: dict = {}
    for p in params:
        val = _data_attr(data, p.name)
        if val is _MISSING:
            if p.default is p.empty:
                raise TargetError("bad-example", (
                    f"the model's forward{sig} asks for `{p.name}`, which the {type(data).__name__} input "
                    f"does not have (it has: {', '.join(sorted(map(str, data.keys())))}); pass a tuple of "
                    "arguments instead"))
            continue
        if p.kind == inspect.Parameter.KEYWORD_ONLY or kwargs or len(args) != params.index(p):
            kwargs[p.name] = val
        else:
            args.append(val)
    return tuple(args), kwargs


# --------------------------------------------------------------------------
# compile sites from the project's source
# --------------------------------------------------------------------------

def project_files(h: Harness, target_path: Path, model) -> list[Path]:
    files: list[Path] = [target_path]
    root, modname = package_root(target_path)
    if root != target_path.parent:
        top = root / modname.split(".")[0]
        files += sorted(p for p in top.rglob("*.py") if p != target_path)
    try:
        mf = Path(inspect.getfile(type(_unwrap(model)))).resolve()
        if str(mf) in USER and mf not in files:
            files.append(mf)
    except (TypeError, OSError):
        pass
    return files


def _unwrap(model):
    return getattr(model, "_orig_mod", model)


def _site_dict(cs, via: str) -> dict:
    return {"path": str(Path(cs.path).resolve()), "line": cs.line, "mode": cs.mode,
            "dynamic": cs.dynamic, "fullgraph": bool(cs.fullgraph),
            "mark_dynamic": bool(cs.mark_dynamic), "options": {k: None for k in cs.options} or None,
            "via": via}


def find_sites(files: list[Path], model, target_path: Path) -> tuple[dict | None, dict | None, bool]:
    """(site for the model's class, site compiling an optimizer step, anything compiled)."""
    from gnnlint.verify import _sites

    cls = type(_unwrap(model))
    try:
        cls_file = str(Path(inspect.getfile(cls)).resolve())
    except (TypeError, OSError):
        cls_file = ""
    scan = _sites.scan_files(files)
    site = step = None
    try:
        from gnnlint.project_index import build_index  # the real index, when present

        index = build_index(files)
        cs = index.compile_site_for_class(cls_file, cls.__name__)
        if cs is not None:
            site = _site_dict(cs, "project_index")
        sites = list(getattr(index, "sites", []) or [])
        steps = [s for s in sites if getattr(s, "target_kind", "") == "optimizer_step"]
        if steps:
            step = _site_dict(steps[0], "project_index")
        if site is None:
            # e.g. to_hetero(GNN(...)) is an fx GraphModule at runtime: use the
            # one model compile of the target file, if there is exactly one
            want = str(target_path.resolve())
            classes = [s for s in sites if getattr(s, "target_kind", "") == "class"
                       and str(Path(s.path).resolve()) == want]
            if len(classes) == 1:
                site = _site_dict(classes[0], "project_index (the file's only model compile)")
        if sites:
            scan["any"] = True
    except ImportError:
        pass
    except Exception as e:  # a broken index must not kill verification
        scan["notes"].append(f"project index failed: {type(e).__name__}: {e}")
    if site is None:
        site = scan["classes"].get(cls.__name__)
    if site is None and len(scan["classes"]) == 1:
        only = next(iter(scan["classes"].values()))
        if only["path"] == str(target_path.resolve()):
            site = dict(only, via="ast (the file's only model compile)")
    return site, step or scan["step"], scan["any"]


# --------------------------------------------------------------------------
# main run
# --------------------------------------------------------------------------

def run(job: dict) -> dict:
    t0 = time.time()
    h = Harness(job)
    result: dict[str, Any] = {"target": job["target"], "events": [], "internal": []}
    os.environ.setdefault("TORCHDYNAMO_VERBOSE", "0")
    target = job["target"]
    program = target["kind"] in ("script", "run_module")
    call = target["kind"] in ("file", "module") and target.get("function") not in (None, "gnnlint_example")
    if not (program or call):
        warnings.simplefilter("ignore")  # the example's own warnings are noise here
    import logging

    logging.getLogger("torch").setLevel(logging.ERROR)
    timing: dict[str, float] = {}
    mark = [time.time()]

    def lap(name: str) -> None:
        now = time.time()
        timing[name] = round(now - mark[0], 2)
        mark[0] = now

    result["timing"] = timing
    try:
        import torch  # noqa: F401
        import torch_geometric
    except ImportError as e:
        raise TargetError("missing-dependency", f"gnnlint verify needs torch and torch_geometric "
                          f"(pip install 'gnnlint[verify]'): {e}") from None
    h.setup_torch()
    torch = h.torch

    lap("import_torch")

    result["versions"] = {"torch": torch.__version__, "torch_geometric": torch_geometric.__version__,
                          "python": sys.version.split()[0]}
    result["device"] = h.device
    result["backend"] = h.backend

    from gnnlint.verify._program import Budget, BudgetStop

    h.budget = budget = Budget(h, job.get("max_calls"), job.get("max_seconds"),
                               on_give_up=lambda: _give_up(h, job, result, t0))
    result["budget"] = budget
    if program or call:
        exit_info, raw = run_user_code(h, job, result)
        lap("program")
        ex = None
        if call and exit_info["status"] == "completed" and _looks_like_example(raw):
            ex = parse_example(torch, raw)
        if ex is None:
            _program_failed(h, result, exit_info)
            result["program"] = exit_info
            return finish(h, result, t0, lap, steps="the program's own")
        h.program_mode = False
        path = Path(result["target_path"])
        fn_name = result["function"]
    else:
        budget.arm()
        h.modes_enter()
        h.coverage.start()
        try:
            mod, fn, path = import_target(h, target)
            raw = fn()
        except BudgetStop:
            raise TargetError("timeout", f"the example did not return within --max-seconds "
                              f"{budget.max_seconds:g} s; it was stopped") from None
        finally:
            h.coverage.stop()
        lap("example")
        ex = parse_example(torch, raw)
        fn_name = fn.__name__
    result["target_path"] = str(path)
    result["function"] = fn_name
    model = ex["model"]
    inputs = [_move(i, h.device) for i in ex["inputs"]]
    if h.device != "cpu" and hasattr(model, "to"):
        model = model.to(h.device)

    files = project_files(h, path, model)
    site, step_site, anything = find_sites(files, model, path)
    result["model_site"] = site
    lap("sites")
    result["step_site"] = step_site

    # ---- compile the model the way the user's code does
    already = isinstance(model, h.OptimizedModule) or getattr(model, "_gnnlint_rec", None) is not None \
        or getattr(model, "_compiled_call_impl", None) is not None
    if already:
        compiled = model
        how = "given compiled by the example"
    elif site is not None:
        kw: dict[str, Any] = {"fullgraph": bool(site.get("fullgraph"))}
        if site.get("dynamic") is not None:
            kw["dynamic"] = site["dynamic"]
        if site.get("mode"):
            kw["mode"] = site["mode"]
        if site.get("options"):
            kw["options"] = site["options"]
        compiled = h.compile_with_record(model, kw, site=[site["path"], site["line"], "torch.compile"],
                                         origin="project", static_site=site)
        how = f"compiled as at {Path(site['path']).name}:{site['line']}"
        if site.get("mark_dynamic"):
            _mark_varying_dims(torch, inputs)
    elif not anything:
        compiled = h.compile_with_record(model, {}, site=None, origin="default")
        how = "compiled with torch's defaults (the code compiles nothing)"
    else:
        compiled = model
        how = "run eagerly (the code compiles other things, not this model)"
    result["model_compile"] = how
    if site and site.get("mode") == "reduce-overhead" and h.device == "cpu":
        h.notes.append("mode='reduce-overhead' uses CUDA graphs: re-recordings can only be observed on CUDA")

    # ---- optimizer step
    opt = ex.get("optimizer")
    sched = ex.get("scheduler")
    loss_fn = ex.get("loss_fn")
    user_step = ex.get("step")
    step_call = None
    if user_step is not None:
        step_call = user_step
    elif opt is not None:
        if step_site is not None:
            kw = {}
            if step_site.get("dynamic") is not None:
                kw["dynamic"] = step_site["dynamic"]
            if step_site.get("fullgraph"):
                kw["fullgraph"] = True
            step_call = h.compile_with_record(opt.step, kw, site=[step_site["path"], step_site["line"], "torch.compile"],
                                              origin="project")
        else:
            step_call = opt.step

    # ---- run
    cuda = h.device == "cuda"
    if cuda:
        try:
            torch.cuda.set_sync_debug_mode("warn")
        except Exception:
            pass
    n_steps = len(inputs)
    if opt is not None or user_step is not None:
        n_steps = max(len(inputs), int(ex.get("steps") or job.get("train_steps") or 4))
    h.recording = True
    h.tracking_sparse = False
    failures = []
    with warnings.catch_warnings(record=True) as wlist:
        warnings.simplefilter("always")
        h.coverage.start()
        try:
            user_run = ex.get("run")
            if user_run is not None:
                # the user's own loop, given the compiled model
                n_steps = 1
                h.program_mode = True
                user_run(compiled)
            for i in range(n_steps if user_run is None else 0):
                inp = inputs[i % len(inputs)]
                h.current_sparse_frames = _sparse_frames(h, inp)
                args, kwargs = call_args(inp, model)
                if opt is not None and hasattr(opt, "zero_grad"):
                    opt.zero_grad()
                try:
                    out = compiled(*args, **kwargs)
                except Exception as e:  # a compile that raises is evidence
                    if compiled is model:
                        raise
                    chain = tb_user_frames(e.__traceback__)
                    frames = chain[:1] + h.current_sparse_frames
                    rec = h.module_recs.get(compiled) if isinstance(compiled, h.OptimizedModule) else \
                        getattr(compiled, "_gnnlint_rec", None)
                    ctx = chain[1:] + ([rec["site"]] if rec and rec.get("site") else [])
                    h.add_event("compile_error", f"{type(e).__name__}: {short_reason(str(e))}", frames,
                                context=ctx, rec=rec)
                    failures.append(i)
                    h.raised.append(f"{type(e).__name__}: {e}")
                    eager = _unwrap(model)
                    was, h.recording = h.recording, False
                    try:
                        with h.modes_suspended():
                            out = eager(*args, **kwargs)
                    finally:
                        h.recording = was
                if opt is not None or user_step is not None:
                    if user_step is None:
                        loss = _loss(torch, loss_fn, out, inp)
                        if loss is not None and loss.requires_grad:
                            loss.backward()
                    if step_call is not None:
                        if user_step is not None:
                            _call_flex(step_call, compiled, inp)
                        else:
                            step_call()
                    if sched is not None and user_step is None:
                        sched.step()
                elif loss_fn is not None:
                    _loss(torch, loss_fn, out, inp)
        except BudgetStop:
            h.notes.append(f"stopped early: {budget.detail}")
        finally:
            h.coverage.stop()
            h.recording = False
            h.program_mode = False
            budget.disarm()
    for w in wlist:
        msg = str(w.message)
        if cuda and "synchroniz" in msg.lower():
            fr = [[_real(w.filename), w.lineno, "?"]] if w.filename in USER else []
            h.add_event("host_sync", f"CUDA sync: {msg[:200]}", fr)
    h.modes_exit()
    lap("run")
    if cuda:
        _cudagraph_events(h)
    return finish(h, result, t0, lap, steps=n_steps if ex.get("run") is None else "the example's run()",
                  rare=ex.get("run") is not None)


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
        origin = _module_origin(name)
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
        _cudagraph_events(h)
    return describe_exit(exc, budget, frames), value


def _module_origin(name: str) -> str:
    """The file ``python -m name`` would run (a clear error when there is none)."""
    cwd = os.getcwd()
    if not sys.path or sys.path[0] != cwd:
        sys.path.insert(0, cwd)
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError) as e:
        raise TargetError("not-found", f"module {name!r} not found ({type(e).__name__}: {e})") from None
    if spec is None:
        raise TargetError("not-found", f"module {name!r} not found (sys.path starts {sys.path[:3]})")
    if spec.submodule_search_locations:  # a package: python -m runs its __main__
        main = importlib.util.find_spec(name + ".__main__")
        if main is None or not main.origin:
            raise TargetError("not-found", f"{name!r} is a package without __main__.py")
        spec = main
    origin = str(Path(spec.origin or "").resolve())
    top = importlib.util.find_spec(name.split(".")[0])
    if top is not None and top.origin:
        o = Path(top.origin).resolve()
        root = o.parent.parent if o.name == "__init__.py" else o.parent
        if str(root) not in ("/", ""):
            USER.add_root(str(root))
    return origin


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


def _looks_like_example(raw: Any) -> bool:
    """Did a called function return a ``gnnlint_example``-style (model, inputs)?"""
    if isinstance(raw, dict):
        return callable(raw.get("model")) and ("inputs" in raw or "run" in raw)
    if isinstance(raw, (tuple, list)) and len(raw) in (2, 3):
        return callable(raw[0]) and isinstance(raw[1], (list, tuple))
    return hasattr(raw, "model") and hasattr(raw, "inputs")


def _program_failed(h: Harness, result: dict, info: dict) -> None:
    """The program failed before it ran any compiled code (or ran out of
    memory): a target error with what it said. After compiled code ran, its
    own exit or exception is only reported."""
    if info.get("memory"):
        raise TargetError("memory", _memory_message(h.job, MemoryError(info.get("message", "")),
                                                    ""))
    ran = any(r["calls"] for r in h.compiles)
    if ran:
        return
    if info["status"] == "exception":
        raise TargetError("program", f"the program raised before running any compiled code: {info['message']}")
    if info["status"] == "exit" and info.get("exit_code") not in (0, None):
        raise TargetError("program", f"the program exited with status {info['exit_code']} "
                          "before running any compiled code")


def _give_up(h: Harness, job: dict, result: dict, t0: float) -> None:
    """The program kept running after repeated budget interrupts: report what
    was seen so far and leave (called from the SIGALRM handler)."""
    budget = h.budget
    try:
        h.coverage.stop()
        h.modes_exit()
        h.recording = False
        result["program"] = {"status": "stopped", "by": budget.stopped_by if budget else "max-seconds",
                             "detail": (budget.detail if budget else "") +
                             "; the program did not stop when interrupted, so verify ended it"}
        out = finish(h, result, t0, lambda name: None, steps="the program's own")
    except BaseException as e:  # noqa: BLE001 - anything here must still leave
        out = {"target": job["target"], "error": {
            "kind": "timeout", "message": f"the program did not stop when its budget was spent ({e})"}}
    try:
        _write_result(job, out)
    finally:
        _leave(0)


def finish(h: Harness, result: dict, t0: float, lap, *, steps: Any, rare: bool = True) -> dict:
    """Turn what the harness saw into the result: metrics, events, coverage."""
    collect_metrics(h)
    for r in h.compiles:
        # a torch.compile in the user's code whose result never ran: the
        # compile was discarded (GNN010). Evidence only, never "unexpected"
        # (an example may build compiled objects it does not use).
        if r["origin"] == "user" and r["calls"] == 0 and r["site"]:
            h.add_event("compile_unused", f"the result of this compile of `{r['target']}` was never called",
                        [r["site"]], rec=r, extra={"confirm_only": True})
    for code in h.skipped:
        _cover_code(h, code)

    if rare:
        _mark_rare_syncs(h)
    result["events"] = aggregate(h.events)
    result["internal"] = aggregate(h.internal)
    result["coverage"] = h.coverage.as_json()
    stats = compiled_stats(h)
    result["compiles"] = [{
        "site": r["site"], "origin": r["origin"], "target": r["target"], "options": r["options"],
        "backend": r["backend"], "calls": r["calls"], "distinct_shapes": len(r["shapes"]), **stats[i],
    } for i, r in enumerate(h.compiles)]
    result["optimizers"] = [{k: v for k, v in o.items() if k != "ref"} for o in h.optimizers.values()]
    result["steps"] = steps
    result["notes"] = h.notes
    result["benign"] = dict(h.benign)
    budget = result.get("budget")
    if budget is not None and not isinstance(budget, dict):
        result["budget"] = budget.as_json()
    result["seconds"] = round(time.time() - t0, 2)
    return result


def compiled_stats(h: Harness) -> list[dict]:
    """Per compiled object: how many calls really ran compiled code of the
    object's own (user-level) frames, which of those frames dynamo skipped
    (falling back to eager) and which hit the recompile limit, each with the
    user line that caused it. A call "ran compiled" when a graph of one of
    those frames ran during it: a user forward that dynamo skipped runs
    eagerly even though the PyG layers it calls still run compiled pieces."""
    try:
        from torch._dynamo.utils import get_compilation_metrics

        rows = get_compilation_metrics()
    except Exception:
        rows = []
    code: dict[str, tuple] = {}
    skipped: dict[str, str] = {}
    limit: dict[str, str] = {}
    for m in rows:
        fid = str(m.compile_id or "").split("/")[0]
        if m.co_filename and fid not in code:
            code[fid] = (m.co_filename, m.co_firstlineno, m.co_name)
        fail = m.fail_type
        reason = str(m.fail_reason or "")
        if fail and "recompile limit" in reason.lower():
            limit.setdefault(fid, short_reason(m.recompile_reason or reason))
        elif fail in ("Unsupported", "SkipFrame") and not m.recompile_reason:
            skipped.setdefault(fid, short_reason(reason or fail))
    out = []
    for r in h.compiles:
        tried = set(r["frames_tried"])
        user = {f for f in tried if f in code and code[f][0] in USER}
        top = user or _library_root_frames(tried, code)
        compiled = None
        if r.get("counted"):
            compiled = sum(1 for ran in r["call_graphs"] if ran & top)

        def where(fid: str, reason: str) -> dict:
            c = code.get(fid, ("?", 0, "?"))
            d = {"frame": c[2], "file": _real(c[0]) if c[0] != "?" else None, "line": c[1], "reason": reason}
            b = h.break_sites.get(fid) or _break_inside(h, c)
            if b:
                d["at"] = b["at"][:2]
                if b.get("origin") and b["origin"][0] and b["origin"][0] not in USER:
                    d["in"] = [b["origin"][0], b["origin"][1]]
            return d

        out.append({
            "calls_compiled": compiled,
            "frames_skipped": [where(f, skipped[f]) for f in sorted(top, key=_fid_key) if f in skipped],
            "recompile_limit": [where(f, limit[f]) for f in sorted(tried, key=_fid_key) if f in limit],
        })
    return out


def _library_root_frames(tried: set, code: dict) -> set:
    """For a compiled library model with no frame in the user's files (PyG's
    ``GraphSAGE`` compiled directly): its own forward -- the first frame it
    tried -- and the resume functions of that forward. A call ran compiled
    when one of them ran a graph, not when only its layers' own frames did
    (``BasicGNN.forward`` skipped, its ``GraphNorm`` compiled on its own)."""
    known = sorted((f for f in tried if f in code), key=_fid_key)
    if not known:
        return set(tried)
    root = code[known[0]]
    resume = f"torch_dynamo_resume_in_{root[2]}_at_"
    return {f for f in known if code[f] == root or (code[f][0] == root[0] and str(code[f][2]).startswith(resume))}


def _break_inside(h: Harness, code: tuple) -> dict | None:
    """The first graph break whose user line lies in this function's code
    (a frame that failed as a whole records no break of its own)."""
    lines = _code_lines(*code)
    if not lines:
        return None
    path = _real(code[0])
    for ev in h.events:
        if ev["kind"] != "graph_break":
            continue
        for fr in ev["frames"] + ev["context"]:
            if fr[0] == path and fr[1] in lines:
                return {"at": fr, "origin": ev.get("origin")}
    return None


@functools.lru_cache(maxsize=256)
def _code_lines(filename: str, first: int, name: str) -> frozenset:
    import dis

    try:
        top = compile(Path(filename).read_text(encoding="utf-8"), filename, "exec")
    except (OSError, SyntaxError, ValueError):
        return frozenset()
    stack = [top]
    while stack:
        co = stack.pop()
        if co.co_name == name and co.co_firstlineno == first:
            return frozenset(line for _, line in dis.findlinestarts(co) if line)
        stack.extend(c for c in co.co_consts if hasattr(c, "co_code"))
    return frozenset()


def _fid_key(fid: str):
    return int(fid) if fid.isdigit() else 0


def _cover_code(h: Harness, code: tuple) -> None:
    """A frame dynamo skipped ran eagerly (without line tracing): count its lines."""
    import dis

    filename, first, name = code
    if filename not in USER:
        return
    try:
        top = compile(Path(filename).read_text(encoding="utf-8"), filename, "exec")
    except (OSError, SyntaxError, ValueError):
        return
    stack = [top]
    while stack:
        co = stack.pop()
        if co.co_name == name and co.co_firstlineno == first:
            for _, line in dis.findlinestarts(co):
                if line:
                    h.coverage.add(filename, line)
            return
        stack.extend(c for c in co.co_consts if hasattr(c, "co_code"))


def _call_flex(fn, model, inp):
    try:
        n = len(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        n = 0
    if n >= 2:
        return fn(model, inp)
    if n == 1:
        return fn(inp)
    return fn()


def _loss(torch, loss_fn, out, inp):
    if loss_fn is not None:
        try:
            n = len(inspect.signature(loss_fn).parameters)
        except (TypeError, ValueError):
            n = 2
        return loss_fn(out) if n == 1 else loss_fn(out, inp)
    tensors = [t for t in _iter_tensors(torch, out) if isinstance(t, torch.Tensor) and t.is_floating_point()]
    if not tensors:
        return None
    return sum(t.float().sum() for t in tensors)


def _sparse_frames(h: Harness, inp) -> list[list]:
    frames: list[list] = []
    for t in _iter_tensors(h.torch, inp):
        site = h.sparse_sites.get(id(t))
        if site is not None and site[0] is t:
            frames += site[1][:1]
    return frames


def _mark_varying_dims(torch, inputs) -> None:
    flat = [list(_iter_tensors(torch, i)) for i in inputs]
    if len(flat) < 2:
        return
    n = min(len(f) for f in flat)
    for pos in range(n):
        ts = [f[pos] for f in flat if isinstance(f[pos], torch.Tensor)]
        if len(ts) != len(flat) or len({t.dim() for t in ts}) != 1:
            continue
        for d in range(ts[0].dim()):
            if len({int(t.size(d)) for t in ts}) > 1:
                for t in ts:
                    try:
                        torch._dynamo.maybe_mark_dynamic(t, d)
                    except Exception:
                        pass


def _cudagraph_events(h: Harness) -> None:
    """CUDA graph (re-)recordings for reduce-overhead (CUDA only)."""
    try:
        counters = h.torch._dynamo.utils.counters
        inductor = counters.get("inductor", {})
        n = sum(v for k, v in inductor.items() if "cudagraph" in k and "record" in k)
        if n > 1:
            for r in h.compiles:
                if r["site"] and r["options"].get("mode") == "reduce-overhead":
                    h.add_event("cudagraph_rerecord", f"{n} CUDA graph recordings", [r["site"]], rec=r,
                                extra={"count": n})
    except Exception:
        pass


def collect_metrics(h: Harness) -> None:
    """Recompilations and whole-frame failures from dynamo's compilation metrics."""
    from torch._dynamo.utils import get_compilation_metrics

    torch = h.torch
    limit = getattr(torch._dynamo.config, "recompile_limit", 8)
    frame_code: dict[str, tuple] = {}
    rows = get_compilation_metrics()
    frame_rec: dict[str, dict] = {}
    for m in rows:
        cid = str(m.compile_id or "")
        fid = cid.split("/")[0]
        if m.co_filename:
            frame_code[fid] = (m.co_filename, m.co_firstlineno, m.co_name)
    for m in rows:
        cid = str(m.compile_id or "")
        fid = cid.split("/")[0]
        ctx = h.compile_ctx.get(cid, {})
        rec = ctx.get("rec") or frame_rec.get(fid)
        if rec is not None:
            frame_rec[fid] = rec
        code = frame_code.get(fid)
        live = ctx.get("frames") or []
        code_frames = [[_real(code[0]), code[1], code[2]]] if code and code[0] in USER else []
        site = [rec["site"]] if rec and rec.get("site") else []
        fail = m.fail_type
        if m.recompile_reason:
            reason = short_reason(m.recompile_reason)
            frames = []
            is_lr = "param_groups" in reason and "'lr'" in reason
            opt_frames = []
            if is_lr or (code and "/torch/optim/" in str(code[0]).replace("\\", "/")):
                opts = []
                if rec and rec.get("optimizer") in h.optimizers:
                    opts = [h.optimizers[rec["optimizer"]]]
                else:
                    opts = [o for o in h.optimizers.values() if o["lr_kind"] == "float"] or list(h.optimizers.values())
                for o in opts:
                    opt_frames += o["frames"][:1]
            frames = opt_frames + site
            context = code_frames + live
            dyn = rec["options"].get("dynamic") if rec else None
            kind = "recompile"
            extra = {"dynamic": dyn, "lr_guard": is_lr}
            shape_guard = any(k in reason for k in ("size mismatch", "stride mismatch", "dimensionality",
                                                     "dim mismatch", ".size()"))
            if (not is_lr and code and str(code[2]).startswith("torch_dynamo_resume_in_")
                    and code_frames and "mismatch at index" not in reason):
                # a guard on a value produced across a graph break: a cost of that break
                frames = code_frames
                context = site + live
                extra["after_break"] = True
            extra["shape_guard"] = shape_guard
            guard = guard_user_frames(m.recompile_reason) if not extra.get("after_break") else []
            if guard:  # the user line whose value the failed guard checks is the event's place
                frames, context = guard, frames + context
            if fail and "recompile limit" in str(m.fail_reason or "").lower():
                extra["limit_hit"] = True
                extra["limit"] = limit
            h.add_event(kind, reason, frames, context=context, origin=list(code) if code else None,
                        rec=rec, extra=extra)
            continue
        if fail:
            fr = []
            if m.fail_user_frame_filename and m.fail_user_frame_filename in USER:
                fr.append([_real(m.fail_user_frame_filename), m.fail_user_frame_lineno, "?"])
            reason = short_reason(m.fail_reason or fail)
            if fail not in ("Unsupported", "SkipFrame") and any(
                    reason.split(":")[0] in r or (m.fail_reason or "")[:80] in r for r in h.raised):
                continue  # the same error reached the harness as an exception
            if fail in ("Unsupported", "SkipFrame") and code:
                h.skipped.append(code)
            if "sparse" in reason.lower() or fail not in ("Unsupported", "SkipFrame"):
                fr += ctx.get("sparse") or []
            context = site + code_frames + live
            kind = "graph_break" if fail in ("Unsupported", "SkipFrame") else "compile_error"
            origin = [m.fail_user_frame_filename, m.fail_user_frame_lineno, "?"] if m.fail_user_frame_filename else \
                (list(code) if code else None)
            if not fr and not context and origin and origin[0] and _is_torch_internal(origin[0]):
                h.internal.append({"kind": kind, "reason": reason, "frames": [], "context": [], "origin": origin,
                                   "compile": None})
                continue
            h.add_event(kind, f"{reason} (frame skipped, runs eagerly)" if kind == "graph_break" else reason,
                        fr, context=context, origin=origin, rec=rec)


def _mark_rare_syncs(h: "Harness") -> None:
    """In the user's own loop, a sync site that runs once every several
    compiled calls is a once-per-epoch read (after the batch loop), not a
    per-step sync: evidence for nothing, never "unexpected". A site that runs
    between every one or two compiled calls is per step (an evaluation loop
    over batches; in full-batch training, the epoch loop is the step)."""
    steps = max((r["calls"] for r in h.compiles), default=0)
    if steps < 4:
        return
    at: dict[tuple, list[int]] = {}
    for ev in h.events:
        if ev["kind"] == "host_sync" and ev["frames"]:
            at.setdefault(tuple(ev["frames"][0][:2]), []).append(ev.get("at_call", 0))
    rare_sites = set()
    for site, calls in at.items():
        marks = sorted(set(calls))
        if len(marks) >= 2:
            gaps = sorted(b - a for a, b in zip(marks, marks[1:]))
            if gaps[len(gaps) // 2] > 3:
                rare_sites.add(site)
        elif len(calls) * 2 < steps:
            rare_sites.add(site)
    for ev in h.events:
        if ev["kind"] == "host_sync" and ev["frames"] and tuple(ev["frames"][0][:2]) in rare_sites:
            ev["rare"] = True
            ev["steps"] = steps


def aggregate(events: list[dict]) -> list[dict]:
    """Group equal events (kind, first frame, normalised reason) and count them."""
    groups: dict[tuple, dict] = {}
    for ev in events:
        first = tuple(ev["frames"][0][:2]) if ev["frames"] else tuple((ev.get("origin") or [None, None])[:2])
        key = (ev["kind"], first, reason_key(ev["reason"]))
        g = groups.get(key)
        if g is None:
            g = groups[key] = {k: v for k, v in ev.items() if k not in ("compile_id",)}
            g["count"] = ev.get("count", 1)
        else:
            g["count"] += ev.get("count", 1)
            for field in ("frames", "context"):
                g.setdefault(field, [])
                have = {tuple(f[:2]) for f in g[field]}
                for f in ev.get(field) or []:
                    if tuple(f[:2]) not in have:
                        g[field].append(f)
                        have.add(tuple(f[:2]))
            if ev.get("limit_hit"):
                g["limit_hit"] = True
                g["limit"] = ev.get("limit")
    return list(groups.values())


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


def _limit_memory(limit: int | None, device: str | None = None) -> None:
    """``--max-memory``: the address space the target may map (RLIMIT_AS).
    An allocation past it raises MemoryError (or torch's "can't allocate
    memory"), which is reported as a target error. CUDA reserves far more
    address space than it uses, so there the data segment is limited
    instead (RLIMIT_DATA)."""
    if not limit:
        return
    try:
        import resource

        which = resource.RLIMIT_DATA if device == "cuda" else resource.RLIMIT_AS
        soft, hard = resource.getrlimit(which)
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)
        resource.setrlimit(which, (limit, hard))
    except (ImportError, ValueError, OSError, AttributeError):
        pass


def _write_result(job: dict, result: dict) -> None:
    tmp = job["result_path"] + ".tmp"
    with open(tmp, "w") as f:
        json.dump(result, f, default=_jsonable)
    os.replace(tmp, job["result_path"])


def _leave(code: int = 0) -> None:
    """Flush what the program wrote and leave without interpreter teardown
    (a process that ran many compiles can hang there on torch 2.13)."""
    try:
        import logging

        logging.shutdown()
    except Exception:
        pass
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass
    os._exit(code)


def _error_result(job: dict, e: BaseException) -> dict:
    from gnnlint.verify._program import BudgetStop, is_memory_error

    if isinstance(e, TargetError):
        return {"target": job["target"], "error": {"kind": e.kind, "message": e.message, "traceback": e.tb}}
    tb = traceback.format_exc()
    frames = tb_user_frames(e.__traceback__)
    where = f" at {frames[0][0]}:{frames[0][1]}" if frames else ""
    if isinstance(e, BudgetStop):
        return {"target": job["target"], "error": {
            "kind": "timeout", "message": f"stopped by the budget before verify could report ({e})",
            "traceback": tb}}
    if is_memory_error(e):
        return {"target": job["target"], "error": {"kind": "memory", "message": _memory_message(job, e, where),
                                                    "traceback": tb}}
    return {"target": job["target"], "error": {
        "kind": "exception", "message": f"{type(e).__name__}: {e}{where}", "traceback": tb}}


def _memory_message(job: dict, e: BaseException, where: str = "") -> str:
    gb = (job.get("max_memory") or 0) / 2**30
    limit = f" (--max-memory {gb:.1f} GB)" if gb else ""
    return f"the target ran out of memory{limit}: {type(e).__name__}: {str(e)[:300]}{where}"


def main(argv: list[str]) -> None:
    if len(argv) > 1 and argv[1] == "--zygote":
        zygote()
        return
    job_path = argv[1]
    with open(job_path) as f:
        job = json.load(f)
    _limit_memory(job.get("max_memory"), job.get("device"))
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
        result = _error_result(job, e)
    try:
        _write_result(job, result)
    finally:
        _leave(0)


if __name__ == "__main__":
    main(sys.argv)
