"""How long gnnlint's messages are: first sentence and whole message.

    python bench/message_lengths.py fixtures/ /work/shared/cases/programs \
        --findings /tmp/i10m_f            # + saved JSON findings (score_realcode.py's)
    python bench/message_lengths.py fixtures/ --by-rule --longest 5

Positional PATHS are linted here (``gnnlint check PATH --output-format json
--isolated --no-cache``, this tree's gnnlint); ``--findings`` takes JSON
finding files or directories of them (``bench/score_realcode.py --findings
DIR`` writes one per repository). Prints the median, 90th percentile and
maximum length in characters of each finding's first sentence (the hazard
and its cost: up to the first ". " outside backticks) and of the whole
message, over all findings and, with ``--by-rule``, per rule. ruff's
messages are one short sentence; ours state the hazard first and the
suggestion after it.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

WORKTREE = Path(__file__).resolve().parents[1]
_ABBREVIATIONS = ("e.g", "i.e", "etc", "vs", "cf")


def first_sentence(message: str) -> str:
    """``message`` up to its first sentence end: a ``.`` followed by a space
    (or the end), outside backticks and not ending an abbreviation."""
    in_code = False
    for i, ch in enumerate(message):
        if ch == "`":
            in_code = not in_code
        elif ch == "." and not in_code and (i + 1 == len(message) or message[i + 1] == " "):
            if message[:i].endswith(_ABBREVIATIONS):
                continue
            return message[: i + 1]
    return message


def percentile(values: list[int], q: float) -> int:
    """Nearest-rank percentile (q in 0..100) of a non-empty list."""
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * q // 100))  # ceil
    return ordered[int(rank) - 1]


def lint(path: str) -> list[dict]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(WORKTREE) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    cmd = [sys.executable, "-m", "gnnlint", "check", path, "--output-format", "json",
           "--exit-zero", "--isolated", "--no-cache", "-q"]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise SystemExit(f"gnnlint failed on {path}:\n{proc.stderr[-2000:]}")
    return json.loads(proc.stdout or "[]")


def load(path: Path) -> list[dict]:
    files = sorted(path.glob("*.json")) if path.is_dir() else [path]
    found: list[dict] = []
    for file in files:
        data = json.loads(file.read_text())
        if isinstance(data, list):
            found += [f for f in data if isinstance(f, dict) and "message" in f]
    return found


def row(label: str, messages: list[str]) -> str:
    firsts = [len(first_sentence(m)) for m in messages]
    fulls = [len(m) for m in messages]
    return (f"{label:<10} {len(messages):>6}  "
            f"{statistics.median(firsts):>7.0f} {percentile(firsts, 90):>5} {max(firsts):>5}   "
            f"{statistics.median(fulls):>7.0f} {percentile(fulls, 90):>5} {max(fulls):>5}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("paths", nargs="*", help="files or directories to lint")
    ap.add_argument("--findings", action="append", default=[], type=Path,
                    help="a JSON findings file or a directory of them (repeatable)")
    ap.add_argument("--by-rule", action="store_true", help="one row per rule as well")
    ap.add_argument("--longest", type=int, default=0, metavar="N",
                    help="print the N longest first sentences")
    args = ap.parse_args(argv)
    findings: list[dict] = []
    for path in args.paths:
        findings += lint(path)
    for path in args.findings:
        findings += load(path)
    if not findings:
        print("no findings")
        return 1
    print(f"{'':<10} {'n':>6}  {'first sentence':^19}   {'whole message':^19}")
    print(f"{'':<10} {'':>6}  {'median':>7} {'p90':>5} {'max':>5}   {'median':>7} {'p90':>5} {'max':>5}")
    print(row("all", [f["message"] for f in findings]))
    if args.by_rule:
        by_rule: dict[str, list[str]] = defaultdict(list)
        for f in findings:
            by_rule[f.get("code") or "?"].append(f["message"])
        for code in sorted(by_rule):
            print(row(code, by_rule[code]))
    if args.longest:
        longest = sorted({first_sentence(f["message"]) for f in findings}, key=len, reverse=True)
        for sentence in longest[: args.longest]:
            print(f"\n{len(sentence)}: {sentence}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
