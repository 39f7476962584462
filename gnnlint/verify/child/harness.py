"""The harness of the verify child: torch set up with a function and a
dispatch mode that see host syncs and sparse tensors, the events it
records, and every compiled object's calls (compile records, counting
backend). The hooks into torch and dynamo are in :mod:`.patches`."""
from __future__ import annotations

import functools
import sys
from contextlib import contextmanager
from typing import Any

from gnnlint.verify.child.frames import (
    Coverage,
    TargetError,
    dedupe_frames,
    is_torch_internal,
    in_host_side_library,
    innermost_frame,
    live_user_frames,
    short_reason,
    summary_user_frames,
)
from gnnlint.verify.child.patches import install_patches
from gnnlint.verify.child.values import describe, iter_tensors, jsonable, shape_sig

# Syncs recorded even in the program's setup, before any compiled code ran:
# those a rule flags wherever they run (GNN004's repeat_interleave).
SETUP_SYNCS = ("host sync: repeat_interleave",)

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
        self.coverage.loops.clock = lambda: self.total_calls  # loops count compiled calls per iteration
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
        install_patches(self)

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
        setup = self.program_mode and not any(r["calls"] for r in self.compiles)
        if setup and not what.startswith(SETUP_SYNCS):
            return  # setup before any compiled code ran (data loading, preprocessing)
        if in_host_side_library(3):
            self.count_benign("host-side library sync (DataLoader collation, optimizer step counters)")
            return
        frames = live_user_frames(3)
        if not frames:
            return
        extra: dict[str, Any] = {"at_call": self.total_calls}
        if setup:
            extra["setup"] = True  # evidence only for the rules that flag the op anywhere (GNN004)
        self.add_event("host_sync", what, frames[:1], context=frames[1:], extra=extra)

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
        frames = dedupe_frames(frames)
        context = [f for f in dedupe_frames(context) if f not in frames]
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
        if not frames and origin and is_torch_internal(origin[0]):
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
            "target": describe(model),
            "options": {k: jsonable(v) for k, v in kw.items() if k != "backend"},
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
            self.current_sparse_frames = sparse_frames(self, (args, kwargs))
        outer_sink = self.graph_sink
        if not self.active:
            self.total_calls += 1
        if rec is not None:
            rec["calls"] += 1
            try:
                rec["shapes"].add(shape_sig(self.torch, (args, kwargs)))
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


def sparse_frames(h: Harness, inp) -> list[list]:
    frames: list[list] = []
    for t in iter_tensors(h.torch, inp):
        site = h.sparse_sites.get(id(t))
        if site is not None and site[0] is t:
            frames += site[1][:1]
    return frames
