"""Run `gnnlint verify` unchanged on every program with a main guard in the
labelled suites, and score the verdicts against the labels.

    python bench/verify_programs.py [--max-seconds 60] [--json out.json] SUITE...

A SUITE is a directory with `programs/` and `labels.json` (tests/data/labelled/a,
the shared cases). Each suite's programs are copied to a temporary directory
(they may write files) and verified in one `gnnlint verify` process: top-level
scripts with a main guard as scripts (`--as-script`, so a gnnlint_example()
does not replace the program), package modules with a main guard with `-m`.
Prints one row per program (how it ended, verdict counts, seconds), then every
confirmed finding with its label (a confirmed finding on a `hazard: false`
label or on no label is a false confirmation candidate to judge), and every
unexpected event.
"""
from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

MAIN = re.compile(r"""^if\s+__name__\s*==\s*['"]__main__['"]\s*:""", re.M)
# runtime-confirmable on CPU: every rule but CUDA graphs and the wrong-result rules
NOT_CPU_CONFIRMABLE = {"GNN006", "GNN017", "GNN018"}


def targets(programs: Path) -> tuple[list[str], list[str]]:
    scripts, modules = [], []
    for p in sorted(programs.glob("*.py")):
        if MAIN.search(p.read_text(encoding="utf-8", errors="replace")):
            scripts.append(p.name)
    for p in sorted(programs.glob("*/*.py")):
        if (p.parent / "__init__.py").exists() and MAIN.search(p.read_text(encoding="utf-8", errors="replace")):
            modules.append(f"{p.parent.name}.{p.stem}")
    return scripts, modules


def run_suite(suite: Path, max_seconds: float) -> dict:
    labels = json.loads((suite / "labels.json").read_text())
    work = Path(tempfile.mkdtemp(prefix="gnnlint-verify-bench-")) / "programs"
    shutil.copytree(suite / "programs", work)
    scripts, modules = targets(work)
    cmd = [sys.executable, "-m", "gnnlint", "verify", "--isolated", "--as-script", "--output-format", "json",
           "--max-seconds", str(max_seconds), *scripts]
    for m in modules:
        cmd += ["-m", m]
    t0 = time.time()
    out = subprocess.run(cmd, cwd=work, capture_output=True, text=True)
    wall = time.time() - t0
    try:
        entries = json.loads(out.stdout)
    except json.JSONDecodeError:
        return {"suite": str(suite), "error": out.stderr[-2000:], "wall": wall}
    label_at: dict[tuple[str, str], list[dict]] = {}
    for lab in labels:
        label_at.setdefault((lab["file"], lab["rule"]), []).append(lab)
    rows: dict[str, dict] = {}
    confirmed, unexpected, reproduced_miss = [], [], []
    for e in entries:
        tgt = e.get("target")
        row = rows.setdefault(tgt, Counter())
        if e["verdict"] == "error":
            row["error"] = e.get("error")
            row["message"] = e.get("message", "")[:300]
            continue
        if e["verdict"] == "run":
            row["seconds"] = e["seconds"]
            p = e.get("program") or {}
            row["ended"] = p.get("status") + (f":{p.get('by')}" if p.get("by") else "") + \
                (f":{p.get('exit_code')}" if p.get("exit_code") not in (None, 0) else "")
            row["compiled_calls"] = sum(c.get("calls") or 0 for c in e.get("compiled") or [])
            row["benign"] = sum((e.get("benign") or {}).values())
            continue
        row[e["verdict"]] += 1
        rel = _rel(e["filename"], work)
        if e["verdict"] == "confirmed":
            labs = [lab for lab in label_at.get((rel, e["code"]), [])
                    if e["location"]["row"] <= lab["line"] <= e["end_location"]["row"]
                    or lab["line"] == e.get("noqa_row")]
            if e["code"] == "GNN013" and not labs:  # the labels keep GNN001 for per-step syncs
                labs = [lab for lab in label_at.get((rel, "GNN001"), [])
                        if e["location"]["row"] <= lab["line"] <= e["end_location"]["row"]]
            confirmed.append({"target": tgt, "file": rel, "line": e["location"]["row"], "code": e["code"],
                              "label": labs[0]["hazard"] if labs else None,
                              "evidence": "; ".join(f"{ev['kind']}: {ev['reason'][:120]} @ {ev.get('line')}"
                                                    for ev in e["evidence"])})
        elif e["verdict"] == "not-reproduced" and e["code"] not in NOT_CPU_CONFIRMABLE:
            reproduced_miss.append({"target": tgt, "file": rel, "line": e["location"]["row"], "code": e["code"],
                                    "note": e.get("note", "")})
        elif e["verdict"] == "unexpected":
            ev = e["evidence"][0]
            unexpected.append({"target": tgt, "file": rel, "line": e["location"]["row"],
                               "suggested": e.get("suggested_rule"), "kind": ev["kind"], "count": ev["count"],
                               "reason": ev["reason"][:160],
                               "origin": (ev.get("origin") or {}).get("file", "").split("site-packages/")[-1]
                               + (f":{ev['origin']['line']}" if ev.get("origin") else "")})
    return {"suite": str(suite), "wall": wall, "rows": {k: dict(v) for k, v in rows.items()},
            "confirmed": confirmed, "unexpected": unexpected, "not_reproduced": reproduced_miss}


def _rel(path: str, work: Path) -> str:
    try:
        return str(Path(path).resolve().relative_to(work.resolve()))
    except ValueError:
        return path


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("suites", nargs="+", type=Path)
    ap.add_argument("--max-seconds", type=float, default=60)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    results = [run_suite(s, args.max_seconds) for s in args.suites]
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    total = Counter()
    print(f"{'program':52} {'ended':22} {'conf':>4} {'n-rep':>5} {'n-ex':>4} {'unexp':>5} {'calls':>5} {'s':>6}")
    for r in results:
        if "error" in r:
            print(f"{r['suite']}: ERROR {r['error']}")
            continue
        for tgt, row in r["rows"].items():
            name = f"{Path(r['suite']).name}/{tgt}"
            if row.get("error"):
                print(f"{name:52} error:{row['error']:16} {row.get('message', '')[:120]}")
                total["error"] += 1
                continue
            total["ran"] += 1
            for k in ("confirmed", "not-reproduced", "not-exercised", "unexpected"):
                total[k] += row.get(k, 0)
            print(f"{name:52} {row.get('ended', '?'):22} {row.get('confirmed', 0):>4} "
                  f"{row.get('not-reproduced', 0):>5} {row.get('not-exercised', 0):>4} "
                  f"{row.get('unexpected', 0):>5} {row.get('compiled_calls', 0):>5} {row.get('seconds', 0):>6.1f}")
    print(f"\ntotal: {dict(total)}")
    conf = [c for r in results for c in r.get("confirmed", [])]
    print(f"\nconfirmed findings ({len(conf)}; label True/False/None=unlabelled):")
    for c in conf:
        print(f"  [{c['label']}] {c['target']} {c['file']}:{c['line']} {c['code']}  {c['evidence'][:220]}")
    nrep = [c for r in results for c in r.get("not_reproduced", [])]
    print(f"\nnot reproduced, CPU-confirmable ({len(nrep)}):")
    for c in nrep:
        print(f"  {c['target']} {c['file']}:{c['line']} {c['code']}  {c['note'][:100]}")
    unexp = [u for r in results for u in r.get("unexpected", [])]
    print(f"\nunexpected events ({len(unexp)}):")
    for u in unexp:
        print(f"  {u['target']} {u['file']}:{u['line']} [{u['suggested']}] {u['kind']} x{u['count']}: "
              f"{u['reason']} (in {u['origin']})")


if __name__ == "__main__":
    main()
