"""Printing a verify report: a rich table (``full``), ``json`` (the check
format's objects plus ``verdict``/``evidence``), ``sarif`` (verdict in each
result's properties)."""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from gnnlint.finding import Finding
from gnnlint.verify._verdicts import (
    CONFIRMED,
    NOT_EXERCISED,
    NOT_REPRODUCED,
    UNEXPECTED,
    miss_summary,
    recompile_summary,
)

if TYPE_CHECKING:
    from gnnlint.verify import TargetReport, VerifyReport

ORDER = {CONFIRMED: 0, UNEXPECTED: 1, NOT_REPRODUCED: 2, NOT_EXERCISED: 3}
STYLE = {CONFIRMED: "bold red", UNEXPECTED: "magenta", NOT_REPRODUCED: "green", NOT_EXERCISED: "dim"}


def display_path(p: str | None) -> str:
    if not p:
        return "?"
    try:
        rel = os.path.relpath(p)
    except ValueError:
        return p
    return p if rel.startswith("..") else rel


def event_text(ev: dict) -> str:
    kind = ev["kind"].replace("_", " ")
    reason = ev.get("reason", "")
    if ev["kind"] == "recompile":
        return f"{kind}: {recompile_summary(ev)}; guard: {reason}"
    n = ev.get("count", 1)
    times = f" (x{n})" if n > 1 else ""
    origin = ev.get("origin")
    where = ""
    fr = (ev.get("frames") or [[None]])[0]
    if origin and origin[0] and origin[0] != fr[0]:
        where = f" [in {_short_lib(origin[0])}:{origin[1]}]"
    return f"{kind}{times}: {reason}{where}"


def _short_lib(p: str) -> str:
    p = p.replace("\\", "/")
    for marker in ("/site-packages/", "/dist-packages/"):
        if marker in p:
            return p.split(marker, 1)[1]
    return display_path(p)


def unexpected_message(u) -> str:
    return f"runtime {event_text(u.event)} (no static finding here)"


# ----------------------------------------------------------------- full
def render_full(report: "VerifyReport", out: TextIO, color: bool) -> None:
    from rich.table import Table
    from rich.text import Text

    import shutil

    from rich.console import Console

    try:
        tty = out.isatty()
    except (AttributeError, ValueError):
        tty = False
    width = shutil.get_terminal_size((160, 24)).columns if tty else 160
    console = Console(file=out, width=max(100, width), color_system="standard" if color else None,
                      force_terminal=color, no_color=not color, highlight=False, markup=False,
                      emoji=False, legacy_windows=False, force_jupyter=False, force_interactive=False,
                      _environ={})
    totals = {CONFIRMED: 0, UNEXPECTED: 0, NOT_REPRODUCED: 0, NOT_EXERCISED: 0}
    errors = 0
    for t in report.targets:
        if t.error:
            errors += 1
            console.print(Text(f"error: {t.error.get('message')}", style="bold red"))
            tail = (t.error.get("stderr") or "").rstrip().splitlines()[-20:]
            if tail:
                console.print(Text("  last lines of its output:", style="dim"))
            for line in tail:
                console.print(Text(f"  | {line}", style="dim"))
            if t.log_path:
                console.print(Text(f"  output: {t.log_path}", style="dim"))
            continue
        d = t.data
        v = d.get("versions", {})
        env = (f"torch {v.get('torch')}, torch_geometric {v.get('torch_geometric')}, {d.get('device')}, "
               f"backend {d.get('backend')}")
        if t.program is not None:
            console.print(Text(f"{target_title(t)} - {env}; {program_text(t.program)}; "
                               f"{t.result.seconds:.1f} s", style="bold"))
        else:
            console.print(Text(
                f"{display_path(d.get('target_path'))}:{d.get('function')}() - {env}; "
                f"model {d.get('model_compile')}; {d.get('steps')} steps, {t.result.seconds:.1f} s",
                style="bold"))
        for line in compiled_lines(d):
            console.print(Text(f"  {line}", style="dim"))
        if t.log_path:
            console.print(Text(f"  output: {t.log_path}", style="dim"))
        for note in d.get("notes") or []:
            console.print(Text(f"  note: {note}", style="dim"))
        rows = []
        for vd in t.verdicts:
            f = vd.finding
            ev = "; ".join(_evidence_text(e) for e in vd.evidence) or (vd.note or "")
            rows.append((ORDER[vd.verdict], f.path, f.line, vd.verdict, f"{display_path(f.path)}:{f.line}:{f.col}",
                         f.code, f.message, ev))
        for u in t.unexpected:
            rows.append((ORDER[UNEXPECTED], u.path, u.line, UNEXPECTED, f"{display_path(u.path)}:{u.line}",
                         u.code or "-", "", event_text(u.event)))
        rows.sort(key=lambda r: (r[0], r[1], r[2]))
        if rows:
            table = Table(show_lines=False, expand=False, pad_edge=False)
            table.add_column("verdict", no_wrap=True)
            table.add_column("location", no_wrap=True)
            table.add_column("code", no_wrap=True)
            table.add_column("finding", overflow="fold", ratio=3)
            table.add_column("runtime evidence", overflow="fold", ratio=2)
            for r in rows:
                table.add_row(Text(r[3], style=STYLE[r[3]] if color else ""), r[4], r[5], r[6], r[7])
            console.print(table)
        else:
            console.print("  no static findings and no runtime events in the files this target ran")
        for k in totals:
            totals[k] += sum(1 for r in rows if r[3] == k)
        if t.benign:
            console.print(Text("  benign (never evidence): " + "; ".join(
                f"{n} {what}" for what, n in sorted(t.benign.items(), key=lambda kv: -kv[1])), style="dim"))
        misses = miss_summary(t.unexpected, display_path)
        if misses:
            console.print(Text("  what the static rules missed:", style="bold"))
            for line in misses:
                console.print(Text(f"    {line}"))
    summary = (f"{totals[CONFIRMED]} confirmed, {totals[UNEXPECTED]} unexpected, "
               f"{totals[NOT_REPRODUCED]} not reproduced, {totals[NOT_EXERCISED]} not exercised")
    if errors:
        summary += f"; {errors} target error{'s' if errors != 1 else ''}"
    console.print(summary)


def _evidence_text(e: dict) -> str:
    if e["kind"] == "recompile":
        return f"recompile: {e.get('summary') or e.get('count', 1)}; guard: {e.get('reason')}"
    n = e.get("count", 1)
    s = f"{e['kind'].replace('_', ' ')}{f' x{n}' if n > 1 else ''}: {e.get('reason')}"
    if e.get("line") is not None:
        s += f" @ {display_path(e.get('file'))}:{e.get('line')}"
    return s


def target_title(t: "TargetReport") -> str:
    tg = t.result.target
    args = " ".join(tg.argv)
    if tg.kind == "run_module":
        head = f"python -m {tg.module}"
    elif tg.kind == "script":
        head = display_path(tg.path)
    else:
        head = tg.spec
    return f"{head} {args}".rstrip()


def program_text(p: dict) -> str:
    status = p.get("status")
    if status == "completed":
        return "the program ran to completion"
    if status == "exit":
        return f"the program exited with status {p.get('exit_code')}"
    if status == "stopped":
        return f"stopped by the budget ({p.get('detail') or p.get('by')})"
    if status == "exception":
        return f"the program raised {p.get('message')} (reported, not a verify failure)"
    return str(status)


def compiled_lines(d: dict) -> list[str]:
    """Per compiled object the run created: where, how many of its calls
    really ran compiled code, and why the others did not (a frame dynamo
    skipped, falling back to eager; the recompile limit), at the user line."""
    out = []
    for c in d.get("compiles") or []:
        site = c.get("site")
        where = f" at {display_path(site[0])}:{site[1]}" if site else ""
        n = c.get("calls", 0)
        calls = f"{n} call{'s' if n != 1 else ''}"
        if c.get("calls_compiled") is not None and n:
            calls = f"{c['calls_compiled']} of {n} calls ran compiled"
        out.append(f"compiled `{c.get('target')}`{where}: {calls}")
        for s in c.get("frames_skipped") or []:
            out.append(f"  `{s['frame']}` ({_frame_place(s)}) fell back to eager: {s['reason'][:160]}"
                       + _caused_by(s))
        for s in c.get("recompile_limit") or []:
            out.append(f"  `{s['frame']}` ({_frame_place(s)}) hit the recompile limit and runs eagerly "
                       f"since: {s['reason'][:160]}" + _caused_by(s))
    return out


def _frame_place(s: dict) -> str:
    f = s.get("file")
    if not f:
        return "?"
    return f"{_short_lib(f)}:{s.get('line')}"


def _caused_by(s: dict) -> str:
    parts = []
    if s.get("at"):
        parts.append(f"reached from {display_path(s['at'][0])}:{s['at'][1]}")
    if s.get("in"):
        parts.append(f"in {_short_lib(s['in'][0])}:{s['in'][1]}")
    return f" ({', '.join(parts)})" if parts else ""


# ----------------------------------------------------------------- json
def _unexpected_finding(u) -> Finding:
    return Finding(path=u.path, line=u.line, col=1, end_line=u.line, end_col=1,
                   code=u.code or "", name="unexpected-runtime-event", message=unexpected_message(u))


def json_entries(report: "VerifyReport") -> list[dict[str, Any]]:
    from gnnlint.report import rule_url
    from gnnlint.report.json_format import finding_to_json
    from gnnlint.verify._verdicts import evidence_entry

    entries: list[dict[str, Any]] = []
    for t in report.targets:
        if t.error:
            entries.append({"code": None, "verdict": "error", "target": t.spec,
                            "error": t.error.get("kind"), "message": t.error.get("message"),
                            "log": t.log_path, "output_tail": t.error.get("stderr") or ""})
            continue
        entries.append(run_entry(t))
        versions = t.data.get("versions", {})
        for vd in sorted(t.verdicts, key=lambda v: v.finding.sort_key()):
            e = finding_to_json(vd.finding)
            e.update({"verdict": vd.verdict, "evidence": vd.evidence, "target": t.spec})
            if vd.note:
                e["note"] = vd.note
            if vd.verdict == NOT_REPRODUCED:
                e["versions"] = versions
            entries.append(e)
        for u in t.unexpected:
            e = finding_to_json(_unexpected_finding(u))
            e["code"] = u.code
            e["url"] = rule_url(u.code) if u.code else None
            e.update({"verdict": UNEXPECTED, "evidence": [evidence_entry(u.event)], "target": t.spec,
                      "reason": u.event.get("reason"), "suggested_rule": u.code})
            entries.append(e)
    return entries


def run_entry(t: "TargetReport") -> dict[str, Any]:
    """The target's own entry (``verdict: "run"``): how the program ended,
    which budget stopped it, its output log, the compiled objects and their
    calls, benign event counts, and one line per class of miss."""
    d = t.data
    return {
        "code": None, "verdict": "run", "target": t.spec, "log": t.log_path,
        "program": t.program, "budget": t.budget, "seconds": round(t.result.seconds, 2),
        "versions": d.get("versions", {}),
        "compiled": [{"target": c.get("target"), "site": c.get("site"), "calls": c.get("calls"),
                      "calls_compiled": c.get("calls_compiled"), "frames_skipped": c.get("frames_skipped") or [],
                      "recompile_limit": c.get("recompile_limit") or [], "options": c.get("options")}
                     for c in d.get("compiles") or []],
        "benign": t.benign,
        "misses": miss_summary(t.unexpected, display_path),
        "files": sorted(d.get("coverage") or {}),
    }


def render_json(report: "VerifyReport", out: TextIO) -> None:
    out.write(json.dumps(json_entries(report), indent=2, ensure_ascii=False))
    out.write("\n")


# ----------------------------------------------------------------- sarif
def render_sarif(report: "VerifyReport", out: TextIO) -> None:
    from gnnlint.report.sarif import build_sarif
    from gnnlint.verify._verdicts import evidence_entry

    findings: list[Finding] = []
    props: list[dict] = []
    for t in report.targets:
        if t.error:
            continue
        for vd in t.verdicts:
            findings.append(vd.finding)
            p = {"verdict": vd.verdict, "evidence": vd.evidence, "target": t.spec}
            if vd.note:
                p["note"] = vd.note
            props.append(p)
        for u in t.unexpected:
            f = _unexpected_finding(u)
            findings.append(Finding(**{**f.__dict__, "code": u.code or "runtime"}))
            props.append({"verdict": UNEXPECTED, "evidence": [evidence_entry(u.event)], "target": t.spec})
    # build_sarif aligns extra properties with the findings' report order
    order = sorted(range(len(findings)), key=lambda i: findings[i].sort_key())
    extra = {rank: props[i] for rank, i in enumerate(order)}
    log = build_sarif(findings, extra)
    notes = [{"level": "error", "message": {"text": t.error.get("message", "")}}
             for t in report.targets if t.error]
    log["runs"][0]["invocations"] = [{
        "executionSuccessful": not notes,
        "toolExecutionNotifications": notes,
    }]
    out.write(json.dumps(log, indent=2, ensure_ascii=False))
    out.write("\n")


def render(report: "VerifyReport", fmt: str, out: TextIO, color: bool) -> None:
    if fmt == "json":
        render_json(report, out)
    elif fmt == "sarif":
        render_sarif(report, out)
    else:
        render_full(report, out, color)
