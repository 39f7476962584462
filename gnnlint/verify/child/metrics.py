"""What the verify child reads after the run: dynamo's compilation metrics
(recompilations, frames it skipped or failed), per compiled object how many
calls ran compiled, CUDA graph re-recordings, once-per-epoch syncs, and the
events grouped and counted."""
from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING

from gnnlint.verify.child.frames import (
    USER,
    guard_user_frames,
    is_torch_internal,
    real_path,
    reason_key,
    short_reason,
)

if TYPE_CHECKING:
    from gnnlint.verify.child.harness import Harness


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
            d = {"frame": c[2], "file": real_path(c[0]) if c[0] != "?" else None, "line": c[1], "reason": reason}
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
    path = real_path(code[0])
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


def cover_code(h: Harness, code: tuple) -> None:
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


def cudagraph_events(h: Harness) -> None:
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
        if m.recompile_reason:
            _recompile_event(h, m, ctx, rec, code, limit)
        elif m.fail_type:
            _failure_event(h, m, ctx, rec, code)


def _code_frames(code: tuple | None) -> list[list]:
    return [[real_path(code[0]), code[1], code[2]]] if code and code[0] in USER else []


def _recompile_event(h: Harness, m, ctx: dict, rec: dict | None, code: tuple | None, limit: int) -> None:
    """One recompilation: placed at the user line whose value the failed guard
    checks, the optimizer an lr guard belongs to, or the compile site."""
    live = ctx.get("frames") or []
    code_frames = _code_frames(code)
    site = [rec["site"]] if rec and rec.get("site") else []
    fail = m.fail_type
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


def _failure_event(h: Harness, m, ctx: dict, rec: dict | None, code: tuple | None) -> None:
    """A frame dynamo could not compile: skipped (runs eagerly, a graph break)
    or a compile error (unless the harness already saw it raised)."""
    live = ctx.get("frames") or []
    code_frames = _code_frames(code)
    site = [rec["site"]] if rec and rec.get("site") else []
    fail = m.fail_type
    fr = []
    if m.fail_user_frame_filename and m.fail_user_frame_filename in USER:
        fr.append([real_path(m.fail_user_frame_filename), m.fail_user_frame_lineno, "?"])
    reason = short_reason(m.fail_reason or fail)
    if fail not in ("Unsupported", "SkipFrame") and any(
            reason.split(":")[0] in r or (m.fail_reason or "")[:80] in r for r in h.raised):
        return  # the same error reached the harness as an exception
    if fail in ("Unsupported", "SkipFrame") and code:
        h.skipped.append(code)
    if "sparse" in reason.lower() or fail not in ("Unsupported", "SkipFrame"):
        fr += ctx.get("sparse") or []
    context = site + code_frames + live
    kind = "graph_break" if fail in ("Unsupported", "SkipFrame") else "compile_error"
    origin = [m.fail_user_frame_filename, m.fail_user_frame_lineno, "?"] if m.fail_user_frame_filename else \
        (list(code) if code else None)
    if not fr and not context and origin and origin[0] and is_torch_internal(origin[0]):
        h.internal.append({"kind": kind, "reason": reason, "frames": [], "context": [], "origin": origin,
                           "compile": None})
        return
    h.add_event(kind, f"{reason} (frame skipped, runs eagerly)" if kind == "graph_break" else reason,
                fr, context=context, origin=origin, rec=rec)


def mark_rare_syncs(h: "Harness") -> None:
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
        if ev["kind"] == "host_sync" and ev["frames"] and not ev.get("setup"):
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
        if ev["kind"] == "host_sync" and ev["frames"] and not ev.get("setup") \
                and tuple(ev["frames"][0][:2]) in rare_sites:
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
            if not ev.get("setup"):
                g.pop("setup", None)  # setup only when every occurrence was
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
