"""Score gnnlint against a labelled case suite (precision/recall per rule).

    python bench/score_cases.py [CASES_DIR] [-v] [--labelled-rules-only]
    (default CASES_DIR: ../shared/cases; --labelled-rules-only ignores
    findings of rules the suite has no label for, for partial suites)

A finding matches a label when file and rule agree and the label's line lies
within the finding's span; a finding on a `hazard: false` label or on an
unlabelled place is a false positive (the suite's README). GNN013
(step-host-sync) findings are scored against GNN001 labels: the labels keep
one code for a sync in compiled code and a sync once per step of a loop that
drives compiled code.
"""
from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path

from gnnlint.config import load_settings
from gnnlint.engine import lint_paths

LABEL_CODE = {"GNN013": "GNN001"}


def main(argv: list[str]) -> int:
    args = [a for a in argv[1:] if not a.startswith("-")]
    root = Path(args[0]).resolve() if args else Path(__file__).resolve().parents[2] / "shared" / "cases"
    programs = root / "programs"
    labels = json.loads((root / "labels.json").read_text())
    settings = load_settings(cwd=programs, isolated=True)
    findings = lint_paths([programs], settings)
    if "--labelled-rules-only" in argv:
        findings = [f for f in findings if any(label["rule"] == LABEL_CODE.get(f.code, f.code) for label in labels)]
    verbose = "-v" in argv
    stats = defaultdict(lambda: {"tp": 0, "fp": 0, "fn": 0})
    matched = set()
    for f in findings:
        rel = str(Path(f.path).resolve().relative_to(programs.resolve()))
        code = LABEL_CODE.get(f.code, f.code)
        hits = [i for i, l in enumerate(labels) if l["file"] == rel and l["rule"] == code
                and f.line <= l["line"] <= f.end_line]
        true_hits = [i for i in hits if labels[i]["hazard"]]
        if true_hits:
            stats[f.code]["tp"] += 1
            matched.update(true_hits)
        else:
            stats[f.code]["fp"] += 1
            if verbose:
                print(f"FP {rel}:{f.line} {f.code} {f.message}")
    for i, l in enumerate(labels):
        if l["hazard"] and i not in matched:
            stats[l["rule"]]["fn"] += 1
            if verbose:
                print(f"FN {l['file']}:{l['line']} {l['rule']} {l['why'][:70]}")
    print(f"{'rule':8} {'tp':>4} {'fp':>4} {'fn':>4} {'precision':>9} {'recall':>7}")
    for code in sorted(stats):
        s = stats[code]
        p = s["tp"] / (s["tp"] + s["fp"]) if s["tp"] + s["fp"] else 1.0
        r = s["tp"] / (s["tp"] + s["fn"]) if s["tp"] + s["fn"] else 1.0
        print(f"{code:8} {s['tp']:4} {s['fp']:4} {s['fn']:4} {p:9.2f} {r:7.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
