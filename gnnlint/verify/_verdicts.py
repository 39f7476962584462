"""Give every static finding a runtime verdict from the child's events and
coverage, and list the events no finding explains."""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any

from gnnlint.finding import Finding

CONFIRMED = "confirmed"
NOT_REPRODUCED = "not-reproduced"
NOT_EXERCISED = "not-exercised"
UNEXPECTED = "unexpected"

# Which runtime events can confirm a finding of each rule. A rule not listed
# accepts any event at its line.
RULE_EVENTS: dict[str, tuple[str, ...]] = {
    "GNN001": ("graph_break", "host_sync", "compile_error"),
    "GNN002": ("recompile",),
    "GNN003": ("graph_break", "recompile", "compile_error"),
    "GNN004": ("graph_break", "host_sync", "compile_error"),
    "GNN005": ("graph_break", "compile_error"),
    "GNN006": ("cudagraph_rerecord",),
    "GNN007": ("recompile",),
    "GNN008": ("graph_break", "host_sync", "compile_error"),
    "GNN009": ("graph_break", "host_sync", "compile_error"),
    "GNN010": ("compile_unused",),
    "GNN011": ("compile_error",),
    "GNN012": ("graph_break", "recompile", "compile_error"),
    "GNN013": ("host_sync",),
    "GNN014": ("graph_break",),
    "GNN015": ("recompile",),
    "GNN016": ("graph_break", "compile_error"),
    "GNN018": ("compiled_state_dict",),
    "GNN019": ("graph_break",),
    "GNN020": ("graph_break", "recompile"),
}
# Rules anchored on a torch.compile call: the compile site (an event's context)
# counts as the event's place for them.
SITE_RULES = {"GNN006", "GNN007", "GNN012"}
# Rules that flag the op wherever it runs: a sync in the program's setup,
# before any compiled code ran (``setup`` events), is evidence for them only.
SETUP_RULES = {"GNN004"}


@dataclass
class Verdict:
    finding: Finding
    verdict: str
    evidence: list[dict] = field(default_factory=list)
    note: str | None = None


@dataclass
class Unexpected:
    code: str | None
    event: dict
    path: str
    line: int


def _real(p: str) -> str:
    return os.path.realpath(p)


_TRAINING_GUARD = re.compile(r"\btraining\b")
# a recompile on the train/eval switch is expected once per mode; more at one
# place means it keeps happening (a hazard of its own, reported as unexpected)
TRAINING_SWITCH_BENIGN = 2


def benign_class(ev: dict) -> str | None:
    """Events that are never evidence and never "unexpected": by design in
    torch, or caused by verify itself. Returns the class's name."""
    if ev["kind"] == "graph_break" and "torch/optim/optimizer.py" in str((ev.get("origin") or [""])[0]) \
            and "graph_break()" in (ev.get("reason") or ""):
        return "the by-design graph break in a compiled optimizer step (torch/optim/optimizer.py)"
    if ev["kind"] != "recompile" or ev.get("limit_hit") or ev.get("lr_guard") or ev.get("shape_guard"):
        return None
    r = ev.get("reason") or ""
    if "gnnlint" in r or "FunctionMode" in r or "DispatchMode" in r or "torch_function_mode" in r:
        return "recompiles caused by verify's own harness"
    if "GLOBAL_STATE changed" in r and ("grad_mode" in r or "autocast" in r or "deterministic" in r):
        return "grad-mode recompiles (training, then evaluation under no_grad)"
    if "requires_grad mismatch" in r:
        return "requires_grad recompiles"
    if "dispatch key set mismatch" in r:
        return "no_grad / inference_mode recompiles"
    if _TRAINING_GUARD.search(r) and ev.get("count", 1) <= TRAINING_SWITCH_BENIGN:
        return "training-flag recompiles (train()/eval() switch)"
    return None


def is_automatic_dynamic_once(ev: dict) -> bool:
    """The one recompile torch 2.13 spends on a new input size under the
    default ``dynamic=None`` before it marks the size dynamic: the cost
    GNN007's default-dynamic finding names (it may confirm that finding), but
    no miss of the rules when no finding names it."""
    return (ev["kind"] == "recompile" and bool(ev.get("shape_guard")) and ev.get("dynamic") is None
            and ev.get("count", 1) == 1 and not ev.get("limit_hit") and not ev.get("after_break")
            and not ev.get("lr_guard"))


AUTOMATIC_DYNAMIC = "automatic-dynamic recompiles (dynamic=None: one per new input size, then dynamic)"


EAGER_DATA_DEPENDENT = "data-dependent-shape ops in eager code (a sync on a GPU, no compile hazard)"


def is_eager_data_dependent(ev: dict) -> bool:
    """Boolean-mask indexing, nonzero, unique... outside compiled code: they
    may confirm a finding at their line (a skipped frame runs eagerly), but
    are no miss of the compile rules."""
    return ev["kind"] == "host_sync" and (ev.get("reason") or "").startswith("data-dependent shape")


def is_training_switch_storm(ev: dict) -> bool:
    r = ev.get("reason") or ""
    return (ev["kind"] == "recompile" and bool(_TRAINING_GUARD.search(r)) and not ev.get("shape_guard")
            and not ev.get("lr_guard") and (ev.get("count", 1) > TRAINING_SWITCH_BENIGN or ev.get("limit_hit")))


def benign_counts(events: list[dict], child: dict[str, int] | None = None,
                  verdicts: list["Verdict"] = ()) -> dict[str, int]:  # type: ignore[assignment]
    """How many benign events of each class the run had (an automatic-dynamic
    recompile only when no finding was confirmed by it)."""
    out: dict[str, int] = dict(child or {})
    used = {(e["kind"], e["reason"], e.get("line")) for v in verdicts for e in v.evidence}
    for ev in events:
        c = benign_class(ev)
        if c is None and (is_automatic_dynamic_once(ev) or is_eager_data_dependent(ev)):
            if not any(k == ev["kind"] and r == ev["reason"] for k, r, _ in used):
                c = AUTOMATIC_DYNAMIC if ev["kind"] == "recompile" else EAGER_DATA_DEPENDENT
        if c:
            out[c] = out.get(c, 0) + ev.get("count", 1)
    return out


def _accepts(f: Finding, ev: dict) -> bool:
    kinds = RULE_EVENTS.get(f.code)
    kind = ev["kind"]
    if kind == "recompile" and ev.get("after_break"):
        # a guard on a value that crossed a graph break: a cost of that break
        kind = "graph_break"
    if kinds is not None and kind not in kinds:
        return False
    if f.code == "GNN002" and not ev.get("lr_guard"):
        return False
    if f.code == "GNN007" and (ev.get("lr_guard") or (ev["kind"] == "recompile" and not _shape_guard(ev))):
        return False  # GNN007 is about input sizes; other guards are other hazards
    if f.code == "GNN015" and _shape_guard(ev) and "parameter" not in (ev.get("reason") or "") \
            and not ev.get("limit_hit"):
        return False  # a new input size is GNN007's; GNN015's storms guard on values, parameters, lengths
    if f.code == "GNN014" and kind != "graph_break":
        return False  # a layer's break, not an error that happens to pass through the same PyG file
    return True


def _shape_guard(ev: dict) -> bool:
    r = ev.get("reason") or ""
    return bool(ev.get("shape_guard")) or any(k in r for k in ("size mismatch", "stride mismatch", ".size()"))


def _in_span(f: Finding, path: str, line: int) -> bool:
    if path != _real(f.path):
        return False
    start = min(f.line, f.noqa_line or f.line)
    return start <= line <= max(f.end_line, f.line)


_PYG_SITE = re.compile(r"`((?:[\w]+/)*[\w]+\.py):(\d+)`")
_CALLED_AS = re.compile(r"every call of `(self\.\w+)`")


def _line_text(path: str, line: int) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            for i, text in enumerate(fh, 1):
                if i == line:
                    return text
    except OSError:
        pass
    return ""


def _layer_break_matches(f: Finding, ev: dict) -> bool:
    """GNN014 points at a layer's constructor; its break happens inside PyG
    (the file the message names) when the layer is called from the same
    file's compiled code (through the attribute the message names)."""
    if ev["kind"] != "graph_break":
        return False
    origin = (ev.get("origin") or [None])[0] or ""
    origin = origin.replace("\\", "/")
    sites = _PYG_SITE.findall(f.message)
    if not sites or not any(origin.endswith("/torch_geometric/" + file) for file, _ in sites):
        return False
    path = _real(f.path)
    user = [fr for fr in list(ev.get("frames") or []) + list(ev.get("context") or []) if fr[0] == path]
    if not user:
        return False
    called = _CALLED_AS.search(f.message)
    if called is None:
        return True
    return any(called.group(1) in _line_text(fr[0], fr[1]) for fr in user)


_GUARD_SUBJECT = re.compile(r"^(?:not\s+)?(?:len\()?([A-Za-z_][\w.]*)\)?\s*(?:==|!=|<=|>=|<|>|$)")


def guard_subject(ev: dict) -> str | None:
    """The value a recompile's failed guard checks: ``self.epoch`` for
    ``self.epoch == 7``, ``self.history`` for ``len(self.history) == 2``,
    ``p`` for ``p == 0.25``; None for tensor, parameter and shape guards."""
    if ev["kind"] != "recompile" or _shape_guard(ev):
        return None
    m = _GUARD_SUBJECT.match((ev.get("reason") or "").strip())
    return m.group(1) if m else None


def _storm_matches(f: Finding, ev: dict) -> bool:
    """GNN015's value storms: the guard checks the value the finding names,
    in the finding's file -- on its line (``self.calls += 1``, ``p=p``) or
    read in the forward the message names (``model.epoch = ep`` in the loop,
    "reads `self.epoch`"). Dynamo puts the guard's own user line on the
    event only for some guards (``p`` of a forward is an input: no line)."""
    subject = guard_subject(ev)
    if not subject:
        return False
    path = _real(f.path)
    places = list(ev.get("frames") or []) + list(ev.get("context") or []) + [ev.get("origin") or [None]]
    if not any(fr and fr[0] and _real(fr[0]) == path for fr in places):
        return False
    token = re.compile(r"(?<![\w.])" + re.escape(subject) + r"(?![\w])")
    return bool(token.search(_line_text(path, f.line))) or f"reads `{subject}`" in f.message


def _matches(f: Finding, ev: dict) -> bool:
    if not _accepts(f, ev):
        return False
    frames = list(ev.get("frames") or [])
    if f.code in SITE_RULES:
        frames += ev.get("context") or []
    if any(_in_span(f, fr[0], fr[1]) for fr in frames):
        return True
    if f.code == "GNN015" and ev["kind"] == "recompile":
        return _storm_matches(f, ev)
    return f.code == "GNN014" and _layer_break_matches(f, ev)


def evidence_entry(ev: dict, finding: Finding | None = None) -> dict[str, Any]:
    """``kind, reason, count`` and the runtime frame (``file``, ``line``): the
    frame inside the finding's span when there is one, else the event's own."""
    frames = list(ev.get("frames") or []) + list(ev.get("context") or [])
    fr = (ev.get("frames") or [[None, None]])[0]
    if finding is not None:
        for cand in frames:
            if _in_span(finding, cand[0], cand[1]):
                fr = cand
                break
    e = {"kind": ev["kind"], "reason": ev["reason"], "count": ev.get("count", 1),
         "file": fr[0], "line": fr[1]}
    if ev.get("origin") and ev["origin"][0] and ev["origin"][0] != fr[0]:
        e["origin"] = {"file": ev["origin"][0], "line": ev["origin"][1]}
    if ev.get("kind") == "recompile":
        e["dynamic"] = ev.get("dynamic")
        if ev.get("after_break"):
            e["after_graph_break"] = True
        if ev.get("limit_hit"):
            e["limit_hit"] = True
        e["summary"] = recompile_summary(ev)
    return e


def recompile_summary(ev: dict, limit: int = 8) -> str:
    """Words for a recompile event: how many, and what torch does next."""
    n = ev.get("count", 1)
    dyn = ev.get("dynamic")
    what = "recompile" if n == 1 else "recompiles"
    if ev.get("limit_hit"):
        return (f"{n} {what}" + (" with dynamic=False" if dyn is False else "")
                + f"; the recompile limit ({ev.get('limit', limit)}) was hit and the frame now runs eagerly")
    if ev.get("after_break"):
        return f"{n} {what} of the code after a graph break (it guards on a value computed across the break)"
    if dyn is False:
        return f"{n} {what} with dynamic=False: one per change, until the recompile limit ({limit}), then eager"
    if dyn is None:
        return (f"{n} {what} with the default dynamic=None: "
                "torch marks the value dynamic after the first recompile")
    return f"{n} {what}"


def guess_code(ev: dict) -> str | None:
    """The rule an unexplained event would belong to."""
    r = (ev.get("reason") or "").lower()
    kind = ev["kind"]
    origin = ((ev.get("origin") or [""])[0] or "").replace("\\", "/")
    in_pyg = "/torch_geometric/" in origin
    if kind == "recompile":
        if ev.get("lr_guard"):
            return "GNN002"
        if is_training_switch_storm(ev):
            return None  # its own hazard, not dynamic shapes (the reason says so)
        if in_pyg and str((ev.get("origin") or ["", 0, ""])[2]).startswith("torch_dynamo_resume_in_"):
            return "GNN014"  # PyG code after a graph break inside it, re-specialised per size
        if "size mismatch" in r or "stride mismatch" in r or "dimension" in r:
            return "GNN007"
        return None
    if kind == "cudagraph_rerecord":
        return "GNN006"
    if "sparse" in r:
        return "GNN005"
    if "lazy" in r or "uninitializedparameter" in r:
        return "GNN012"
    if "repeat_interleave" in r:
        return "GNN004"
    data_dep = any(k in r for k in ("nonzero", "unique", "masked_select", "boolean-mask", "one-argument where",
                                    "bincount", "dynamic shape operator", "data-dependent", "data dependent"))
    sync = any(k in r for k in ("host sync", "item", "_local_scalar_dense", "tolist", "tensor.__bool__",
                                "generic_jump", "data-dependent branching", "float(tensor)", "int(tensor)"))
    if in_pyg and data_dep and not sync:
        return "GNN014"  # a PyG layer or utility with a data-dependent shape
    if in_pyg and (data_dep or sync):
        return "GNN009"
    if data_dep:
        return "GNN008"
    if sync:
        return "GNN001"
    return None


def judge(findings: list[Finding], events: list[dict], coverage: dict[str, list[int]],
          versions: dict, exercised_sites: list[tuple[str, int]] = (),  # type: ignore[assignment]
          compiled_ran: bool = True, device: str = "cpu",
          loops: dict | None = None) -> tuple[list[Verdict], list[Unexpected]]:
    """``compiled_ran=False``: the program never called compiled code, so no
    finding about compiled code was exercised, whatever lines ran.
    ``loops``: the child's per-loop iteration counts (``{file: {line:
    {"hits", "calls": {compiled calls: iterations}}}}``), for findings that
    name their step loop."""
    cov = {(_real(p)): set(ls) for p, ls in coverage.items()}
    loops = {_real(p): v for p, v in (loops or {}).items()}
    for p, line in exercised_sites:
        cov.setdefault(_real(p), set()).add(line)
    explained: set[int] = set()
    verdicts: list[Verdict] = []
    vtext = f"torch {versions.get('torch', '?')}, torch_geometric {versions.get('torch_geometric', '?')}"
    # once-per-epoch syncs in the user's own loop, and benign events: evidence for nothing
    rare = {i for i, ev in enumerate(events) if ev.get("rare")}
    benign = {i for i, ev in enumerate(events) if benign_class(ev)}
    setup = {i for i, ev in enumerate(events) if ev.get("setup")}
    for f in findings:
        matched = [i for i, ev in enumerate(events) if i not in rare and i not in benign and _matches(f, ev)
                   and (i not in setup or f.code in SETUP_RULES)]
        if matched:
            explained.update(matched)
            verdicts.append(Verdict(f, CONFIRMED, [evidence_entry(events[i], f) for i in matched]))
            continue
        lines = cov.get(_real(f.path), set())
        start = min(f.line, f.noqa_line or f.line)
        ran = any(start <= ln <= max(f.end_line, f.line) for ln in lines)
        seldom = [i for i in rare if _matches(f, events[i])]
        if seldom:
            verdict = _seldom_verdict(f, [events[i] for i in seldom], loops)
            if verdict.verdict == CONFIRMED:
                explained.update(seldom)
            verdicts.append(verdict)
            continue
        if ran and not compiled_ran:
            verdicts.append(Verdict(f, NOT_EXERCISED, [], "the line ran, but the program never called compiled code"))
        elif ran and device == "cpu" and f.code in ("GNN001", "GNN013") and _copy_to_host(f):
            verdicts.append(Verdict(f, NOT_REPRODUCED, [], (
                "the line ran; on CPU a copy to the host is a plain copy, so this device sync can only "
                "be observed on CUDA")))
        elif ran:
            note = f"the line ran and nothing happened on {vtext}"
            if f.code == "GNN006":
                note += " (CUDA graph re-recordings can only be observed on CUDA)"
            verdicts.append(Verdict(f, NOT_REPRODUCED, [], note))
        else:
            verdicts.append(Verdict(f, NOT_EXERCISED, [], "the run never reached this line"))
    unexpected = []
    for i, ev in enumerate(events):
        if i in explained or i in rare or i in benign or i in setup or ev.get("confirm_only"):
            continue
        if is_automatic_dynamic_once(ev) or is_eager_data_dependent(ev):
            continue  # counted as benign by benign_counts
        fr = ev["frames"][0]
        if is_training_switch_storm(ev):
            ev = dict(ev, reason=f"recompiles on every train()/eval() switch ({ev.get('count', 1)}): {ev['reason']}")
        unexpected.append(Unexpected(guess_code(ev), ev, fr[0], fr[1]))
    return verdicts, unexpected


# A step runs at most this many top-level compiled calls: the model in
# training and in evaluation, a compiled loss, a compiled optimizer step.
STEP_CALLS = 4


def step_loop_calls(f: Finding, loops: dict) -> tuple[float, int] | None:
    """(median compiled calls per iteration, iterations that ran compiled
    code) of the step loop the finding names, or None when it names none or
    that loop ran compiled code in fewer than two iterations."""
    if not f.step_loop:
        return None
    stats = loops.get(_real(f.path), {}).get(str(f.step_loop))
    if not stats:
        return None
    per = sorted((int(d), n) for d, n in (stats.get("calls") or {}).items())
    total = sum(n for _, n in per)
    if total < 2:
        return None
    seen = 0
    for calls, n in per:
        seen += n
        if 2 * seen >= total:
            return float(calls), total
    return None


def _seldom_verdict(f: Finding, seldom: list[dict], loops: dict) -> Verdict:
    """A sync at the finding's line that ran less often than the compiled
    code: the finding's step loop decides. When each iteration of that loop
    runs a step's worth of compiled calls, the sync runs per step (under a
    condition: ``if epoch % 10 == 0: print(loss.item())`` in a full-batch
    loop); when an iteration runs many (a batch loop inside it), or the
    finding names no loop, it is once per epoch."""
    count = sum(ev.get("count", 1) for ev in seldom)
    times = f"{count} time{'s' if count != 1 else ''}"
    step = step_loop_calls(f, loops)
    if step is not None and step[0] <= STEP_CALLS:
        calls, iters = step
        return Verdict(f, CONFIRMED, [evidence_entry(ev, f) for ev in seldom], (
            f"it synced {times} in {iters} iterations of the step loop at line {f.step_loop}, each running "
            f"{calls:g} compiled call{'s' if calls != 1 else ''}: per step"))
    if step is not None:
        return Verdict(f, NOT_REPRODUCED, [], (
            f"it synced {times} while each iteration of the loop at line {f.step_loop} ran {step[0]:g} compiled "
            "calls: once per epoch, not per step"))
    return Verdict(f, NOT_REPRODUCED, [], (
        f"it synced {times} while the model ran {seldom[0].get('steps')} times: once per epoch, not per step"))


def _copy_to_host(f: Finding) -> bool:
    """A finding about `.cpu()` / `.to("cpu")` (not `.item()` & co., which
    are observable on CPU too)."""
    head = f.message.split(" ", 1)[0]
    return "`.cpu()`" in head or "`.to(" in head


def _library_part(path: str) -> str | None:
    p = (path or "").replace("\\", "/")
    for lib, name in (("/torch_geometric/", "PyG"), ("/torch/", "torch")):
        if lib in p:
            return f"{name}'s {p.split(lib, 1)[1]}"
    return None


def miss_summary(unexpected: list[Unexpected], display=lambda p: p) -> list[str]:
    """One line per class of miss: kind, where in a library it happened
    (if it did) and the user line it was reached from."""
    groups: dict[tuple, dict] = {}
    for u in unexpected:
        ev = u.event
        origin = ev.get("origin") or [None, None, None]
        lib = _library_part(origin[0]) if origin and origin[0] else None
        func = origin[2] if origin and len(origin) > 2 and origin[2] not in (None, "?") else None
        key = (ev["kind"], lib, func if lib else None, u.path, u.line)
        g = groups.setdefault(key, {"n": 0, "code": u.code})
        g["n"] += ev.get("count", 1)
    lines = []
    for (kind, lib, func, path, line), g in sorted(groups.items(), key=lambda kv: -kv[1]["n"]):
        what = kind.replace("_", " ") + ("s" if g["n"] != 1 and not kind.endswith("s") else "")
        where = f" inside {lib}" + (f" ({func})" if func else "") if lib else ""
        rule = f" [{g['code']}]" if g["code"] else " [no rule]"
        lines.append(f"{g['n']} {what}{where} reached from {display(path)}:{line}{rule}")
    return lines
