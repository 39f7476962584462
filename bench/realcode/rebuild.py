#!/usr/bin/env python3
"""Rebuild every real-code corpus from MANIFEST.md, given the repositories' git
directories (a fresh machine has none: bring each with the session's `fetch`
tool, which stores `github:OWNER/NAME` under MIRROR/OWNER+NAME/repo).

    python bench/realcode/rebuild.py [--mirror /work/.mirror] [--root /work] [--set heldout10]

Each set's corpus goes where bench/score_realcode.py and the notes expect it:
dev -> ROOT/corpus, heldout -> ROOT/heldout/corpus, heldoutN -> ROOT/heldoutN/corpus.
A repository whose stored HEAD is not the commit its labels refer to is
reported and skipped: its labels' line numbers would not hold.
"""
from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from extract import extract  # noqa: E402

ROW = re.compile(r"^\| ([\w.-]+/[\w.-]+) \| ([0-9a-f]{40}) \| (\w+) \| (\S+) \|$")
PREFIXES = {"dmlc/dgl": "examples/"}  # only the examples of DGL are in the dev set


def rows(manifest: Path) -> list[tuple[str, str, str]]:
    return [m.groups()[:3] for line in manifest.read_text().splitlines() if (m := ROW.match(line))]


def corpus_dir(root: Path, set_name: str) -> Path:
    return root / "corpus" if set_name == "dev" else root / set_name / "corpus"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mirror", type=Path, default=Path("/work/.mirror"))
    ap.add_argument("--root", type=Path, default=Path("/work"))
    ap.add_argument("--set", action="append", help="only these sets (repeatable)")
    args = ap.parse_args()
    problems = 0
    for repo, commit, set_name in rows(Path(__file__).with_name("MANIFEST.md")):
        if args.set and set_name not in args.set:
            continue
        git_dir = args.mirror / repo.replace("/", "+") / "repo"
        if not git_dir.is_dir():
            print(f"missing {repo}: fetch github:{repo} first", file=sys.stderr)
            problems += 1
            continue
        head = subprocess.run(["git", "--git-dir", str(git_dir), "rev-parse", "HEAD"],
                              capture_output=True, text=True).stdout.strip()
        if head != commit:
            print(f"skipped {repo}: stored HEAD {head[:10]} is not the labelled {commit[:10]}", file=sys.stderr)
            problems += 1
            continue
        dest = corpus_dir(args.root, set_name) / repo.replace("/", "__")
        count = extract(str(git_dir), dest, PREFIXES.get(repo, ""))
        print(f"{set_name:10} {repo}: {count} files")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
