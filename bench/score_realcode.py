"""Score gnnlint on real public repositories against independent hazard labels.

    python bench/score_realcode.py [--corpus DIR] [--labels DIR] [--findings DIR]
                                   [--no-lint | --missing-only] [--gnnlint-src DIR]
                                   [--repo NAME ...] [-v] [--uncovered]

    # labels: bench/realcode/labels/dev (default) and .../heldout; corpus: bench/realcode/README.md
    # the "before" numbers: findings of an older commit, kept apart
    git archive 351cef5 gnnlint | tar -x -C /work/realcode/gnnlint_before
    python bench/score_realcode.py --gnnlint-src /work/realcode/gnnlint_before \
        --findings /work/realcode/findings_before --missing-only -v

For every repository directory under the corpus (default /work/corpus,
one ``OWNER__NAME`` directory per repository) this lints the repository with
the working tree's gnnlint (``python -m gnnlint check REPO --output-format
json --isolated --no-cache``), writes the findings to
``FINDINGS/OWNER__NAME.json`` and scores them against
``LABELS/OWNER__NAME.json`` (the same ``{file, line, rule, hazard, why}``
format as ``shared/cases/labels.json``). ``--no-lint`` re-scores findings
saved earlier (e.g. the "before" run against label files written since).

Matching is score_cases.py's: a finding matches a label when file and rule
agree and the label's line lies within the finding's span; GNN013
(step-host-sync) findings are scored against GNN001 labels, which keep one
code for both kinds of sync. Per finding:

- TP: it matches a ``hazard: true`` label;
- FP-false: it matches only ``hazard: false`` labels;
- FP-unlab: it matches no label, in a file the labeller covered (listed in
  ``LABELS/SELECTION.md``, or holding a label when there is no selection);
- uncov: no label, in a file the labeller did not cover -- not scored (judge
  a sample by hand: ``--uncovered`` lists them);
- FN: a ``hazard: true`` label that no finding matches.

Precision = TP / (TP + FP-false + FP-unlab); recall = matched true labels /
true labels. Repositories without a label file are linted and counted but not
scored.
"""
from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

# the label code a finding's code is scored against
LABEL_CODE = {"GNN013": "GNN001"}
WORKTREE = Path(__file__).resolve().parents[1]


def lint(repo_dir: Path, out: Path, src: Path = WORKTREE) -> list[dict]:
    cmd = [sys.executable, "-m", "gnnlint", "check", ".", "--output-format", "json",
           "--exit-zero", "--isolated", "--no-cache", "-q"]
    proc = subprocess.run(cmd, cwd=repo_dir, capture_output=True, text=True,
                          env=_env(src))
    if proc.returncode != 0:
        raise SystemExit(f"gnnlint failed on {repo_dir} (exit {proc.returncode}):\n{proc.stderr[-2000:]}")
    if proc.stderr.strip():  # files gnnlint skipped or could not check: their findings are missing
        print(f"gnnlint on {repo_dir.name} said:\n{proc.stderr.strip()[-2000:]}", file=sys.stderr)
    findings = json.loads(proc.stdout or "[]")
    out.write_text(json.dumps(findings, indent=1))
    return findings


def _env(src: Path) -> dict:
    import os

    env = dict(os.environ)
    # this source tree's gnnlint, whatever is installed
    env["PYTHONPATH"] = str(src) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def covered_files(labels_dir: Path, repo: str, labels: list[dict]) -> set[str]:
    """Files of ``repo`` the labeller covered: those SELECTION.md lists for it,
    else the files that hold a label."""
    selection = labels_dir / "SELECTION.md"
    files: set[str] = set()
    if selection.is_file():
        current = None
        for line in selection.read_text().splitlines():
            heading = re.match(r"\s*#+\s*(.*)", line)
            names = re.findall(r"[A-Za-z0-9_.-]+__[A-Za-z0-9_.-]+", line)
            if heading or (names and not re.search(r"\.py\b", line)):
                current = names[0] if names else (heading.group(1).strip() if heading else current)
                continue
            for path in re.findall(r"[\w./-]+\.py\b", line):
                owner = current
                if names:  # "OWNER__NAME: path" or "OWNER__NAME/path" on one line
                    owner = names[0]
                    path = path.split(owner + "/", 1)[-1]
                if owner == repo:
                    files.add(path.lstrip("./") if path.startswith("./") else path)
    return files or {label["file"] for label in labels}


def score_repo(findings: list[dict], labels: list[dict], covered: set[str]):
    """Per rule (finding code; labels by their code) counters and the lists of
    false and missed items."""
    stats: dict[str, Counter] = defaultdict(Counter)
    matched: set[int] = set()
    false_items, uncovered_items = [], []
    for f in findings:
        code = f["code"]
        stats[code]["findings"] += 1
        label_code = LABEL_CODE.get(code, code)
        rel = f["filename"]
        start, end = f["location"]["row"], f["end_location"]["row"]
        hits = [i for i, label in enumerate(labels) if label["file"] == rel and label["rule"] == label_code
                and start <= label["line"] <= end]
        true_hits = [i for i in hits if labels[i]["hazard"]]
        if true_hits:
            stats[code]["tp"] += 1
            matched.update(true_hits)
        elif hits:
            stats[code]["fp_false"] += 1
            false_items.append(("FP-false", rel, start, code, f["message"], labels[hits[0]]["why"]))
        elif rel in covered:
            stats[code]["fp_unlab"] += 1
            false_items.append(("FP-unlab", rel, start, code, f["message"], ""))
        else:
            stats[code]["uncov"] += 1
            uncovered_items.append((rel, start, code, f["message"]))
    missed = []
    for i, label in enumerate(labels):
        if label["hazard"]:
            stats[label["rule"]]["true_labels"] += 1
            if i in matched:
                stats[label["rule"]]["found"] += 1
            else:
                stats[label["rule"]]["fn"] += 1
                missed.append(("FN", label["file"], label["line"], label["rule"], "", label["why"]))
    return stats, false_items, missed, uncovered_items


def rule_set(spec: str) -> set[str]:
    """``GNN001-GNN013`` or ``GNN001,GNN004`` (or both, comma-separated) -> the codes."""
    codes: set[str] = set()
    for part in filter(None, (p.strip() for p in spec.split(","))):
        first, _, last = part.partition("-")
        if not last:
            codes.add(first)
            continue
        lo, hi = int(first[3:]), int(last[3:])
        codes.update(f"GNN{n:03d}" for n in range(lo, hi + 1))
    return codes


def _ratio(num: int, den: int) -> str:
    return f"{num / den:.2f}" if den else "  - "


HEADER = (f"{'':34} {'find':>5} {'TP':>4} {'FPf':>4} {'FPu':>4} {'uncov':>5} {'FN':>4} "
          f"{'prec':>5} {'recall':>6}")


def _row(name: str, s: Counter) -> str:
    fp = s["fp_false"] + s["fp_unlab"]
    return (f"{name:34} {s['findings']:5} {s['tp']:4} {s['fp_false']:4} {s['fp_unlab']:4} {s['uncov']:5} "
            f"{s['fn']:4} {_ratio(s['tp'], s['tp'] + fp):>5} {_ratio(s['found'], s['true_labels']):>6}")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=Path("/work/corpus"))
    parser.add_argument("--labels", type=Path, default=WORKTREE / "bench" / "realcode" / "labels" / "dev")
    parser.add_argument("--findings", type=Path, default=Path("/work/realcode/findings"))
    parser.add_argument("--no-lint", action="store_true", help="re-score the findings saved in --findings")
    parser.add_argument("--missing-only", action="store_true",
                        help="lint only repositories with no saved findings (re-score the others)")
    parser.add_argument("--gnnlint-src", type=Path, default=WORKTREE,
                        help="directory holding the gnnlint package to run (default: this working tree; "
                             "e.g. an exported older commit for the 'before' numbers)")
    parser.add_argument("--repo", action="append", help="only this OWNER__NAME (repeatable)")
    parser.add_argument("-v", "--verbose", action="store_true", help="list every false finding and miss")
    parser.add_argument("--uncovered", action="store_true", help="list findings in files nobody labelled")
    parser.add_argument("--rules", default="GNN001-GNN013",
                        help="the label codes scored, as a range or comma list (default GNN001-GNN013: issue "
                             "10's measure; findings of other rules are counted but not scored unless "
                             "their code is named here and the labeller labelled it)")
    args = parser.parse_args(argv[1:])

    scored = rule_set(args.rules)
    repos = sorted(p.name for p in args.corpus.iterdir() if p.is_dir() and "__" in p.name)
    if args.repo:
        repos = [r for r in repos if r in args.repo]
    args.findings.mkdir(parents=True, exist_ok=True)
    per_rule: dict[str, Counter] = defaultdict(Counter)
    per_repo: dict[str, Counter] = {}
    counts: dict[str, Counter] = {}
    details: list[tuple] = []
    uncovered_all: list[tuple] = []
    unscored = []
    for repo in repos:
        out = args.findings / f"{repo}.json"
        if args.no_lint or (args.missing_only and out.is_file()):
            if not out.is_file():
                continue
            findings = json.loads(out.read_text())
        else:
            started = time.perf_counter()
            findings = lint(args.corpus / repo, out, args.gnnlint_src)
            print(f"linted {repo}: {len(findings)} findings in {time.perf_counter() - started:.1f} s",
                  file=sys.stderr)
        counts[repo] = Counter(f["code"] for f in findings)
        label_file = args.labels / f"{repo}.json"
        if not label_file.is_file():
            unscored.append(repo)
            continue
        labels = [label for label in json.loads(label_file.read_text()) if label["rule"] in scored]
        scored_findings = [f for f in findings if LABEL_CODE.get(f["code"], f["code"]) in scored]
        stats, false_items, missed, uncovered = score_repo(scored_findings, labels,
                                                           covered_files(args.labels, repo, labels))
        total = Counter()
        for code, s in stats.items():
            per_rule[code].update(s)
            total.update(s)
        per_repo[repo] = total
        details += [(repo,) + item for item in false_items + missed]
        uncovered_all += [(repo,) + item for item in uncovered]

    print("## Per rule (GNN013 findings scored against GNN001 labels; its misses are GNN001's)")
    print(HEADER)
    total = Counter()
    for code in sorted(per_rule):
        print(_row(code, per_rule[code]))
        total.update(per_rule[code])
    print(_row("ALL", total))
    print()
    print("## Per repository")
    print(HEADER)
    for repo in sorted(per_repo):
        print(_row(repo, per_repo[repo]))
    if unscored:
        print(f"(no label file yet, not scored: {', '.join(unscored)})")
    print()
    print("## Findings per rule per repository")
    codes = sorted({c for cnt in counts.values() for c in cnt})
    print(f"{'':34} " + " ".join(f"{c[3:]:>4}" for c in codes) + "   all")
    for repo in sorted(counts):
        print(f"{repo:34} " + " ".join(f"{counts[repo][c]:4}" for c in codes) + f" {sum(counts[repo].values()):5}")
    if args.verbose:
        print()
        print("## False findings and misses")
        for repo, kind, rel, line, code, text, why in sorted(details, key=lambda d: (d[1], d[0], d[2], d[3])):
            print(f"{kind:8} {repo}:{rel}:{line} {code} {text[:110]}" + (f"\n         label: {why[:110]}" if why else ""))
    if args.uncovered:
        print()
        print("## Findings in files the labeller did not cover (not scored)")
        for repo, rel, line, code, text in uncovered_all:
            print(f"{repo}:{rel}:{line} {code} {text[:110]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
