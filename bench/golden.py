"""Golden findings: the same trees must give byte-identical findings before and
after a refactoring (issue 14). A script, not a test: the torch tree alone
takes ~25 s.

    python bench/golden.py            # compare with bench/golden/*.json.gz; exit 1 on a difference
    python bench/golden.py --update   # regenerate them from the code in this tree
    python bench/golden.py --only fixtures,pyg-src
    python bench/golden.py --update --src /work/main   # goldens from another checkout's code

Each tree is linted by `python -m gnnlint check . --isolated --select ALL
--no-cache --exit-zero --output-format json` run from the tree's directory
(so paths are relative to it, and no repo config interferes -- the labelled
suites' own test runs them isolated too). The JSON is normalised (sorted, one
finding per line) and stored gzipped.
"""
from __future__ import annotations

import argparse
import difflib
import gzip
import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
GOLDEN = REPO / "bench" / "golden"
PYG_CORPUS = Path("/work/corpus/pyg-team__pytorch_geometric")
SHARED_CASES = Path("/work/shared/cases/programs")


def _installed(name: str) -> Path | None:
    spec = importlib.util.find_spec(name)  # finds the package without importing it
    return Path(spec.submodule_search_locations[0]) if spec and spec.submodule_search_locations else None


def trees() -> list[tuple[str, Path | None, list[str]]]:
    """(name, directory, extra args) for every golden run."""
    out = [
        ("fixtures", REPO / "fixtures", []),
        ("fixtures-torch2.4", REPO / "fixtures", ["--torch-version", "2.4"]),
        ("shared-cases", SHARED_CASES, []),
    ]
    labelled = REPO / "tests" / "data" / "labelled"
    for suite in sorted(p.name for p in labelled.iterdir() if (p / "labels.json").is_file()):
        out.append((f"labelled-{suite}", labelled / suite / "programs", []))
    pyg = _installed("torch_geometric")
    out.append(("pyg-src", pyg, []))
    out.append(("pyg-src-modules", pyg, ["--assume-compiled", "modules"]))
    out.append(("pyg-examples", PYG_CORPUS if (PYG_CORPUS / "examples").is_dir() else None, []))
    out.append(("torch-src", _installed("torch"), []))
    return out


def run(tree: Path, extra: list[str], src: Path = REPO) -> list[str]:
    if tree.name == PYG_CORPUS.name:
        paths = ["examples", "benchmark"]
    else:
        paths = ["."]
    # -P: the cwd is not put on sys.path (linting torch_geometric from inside it would shadow
    # the stdlib with its warnings.py/typing.py)
    cmd = [sys.executable, "-P", "-m", "gnnlint", "check", *paths, "--isolated", "--select", "ALL",
           "--no-cache", "--exit-zero", "--output-format", "json", "-q", *extra]
    # no empty PYTHONPATH entry either: it would mean the cwd too
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(src), os.environ.get("PYTHONPATH")])))
    proc = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"gnnlint failed on {tree} (exit {proc.returncode}):\n{proc.stderr}")
    findings = json.loads(proc.stdout or "[]")
    lines = [json.dumps(f, sort_keys=True) for f in findings]
    return sorted(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--update", action="store_true", help="rewrite the golden files")
    ap.add_argument("--only", help="comma-separated tree names")
    ap.add_argument("--src", type=Path, default=REPO,
                    help="the checkout whose gnnlint package runs (default: this one)")
    args = ap.parse_args()
    only = set(args.only.split(",")) if args.only else None
    GOLDEN.mkdir(exist_ok=True)
    failed = False
    for name, tree, extra in trees():
        if only and name not in only:
            continue
        if tree is None or not tree.is_dir():
            print(f"{name}: tree missing, skipped", file=sys.stderr)
            failed = failed or not args.update
            continue
        t0 = time.perf_counter()
        lines = run(tree, extra, args.src.resolve())
        took = time.perf_counter() - t0
        golden = GOLDEN / f"{name}.json.gz"
        text = "\n".join(lines) + "\n"
        if args.update:
            # mtime=0 keeps the gzip bytes reproducible (no spurious git diffs)
            with open(golden, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as fh:
                fh.write(text.encode("utf-8"))
            print(f"{name}: {len(lines)} findings written ({took:.1f} s)")
            continue
        if not golden.is_file():
            print(f"{name}: no golden file {golden.name}; run with --update")
            failed = True
            continue
        with gzip.open(golden, "rt", encoding="utf-8") as fh:
            want = fh.read()
        if want == text:
            print(f"{name}: {len(lines)} findings identical ({took:.1f} s)")
        else:
            failed = True
            print(f"{name}: DIFFERENT")
            sys.stdout.writelines(difflib.unified_diff(want.splitlines(True), text.splitlines(True),
                                                       f"golden/{name}", f"now/{name}", n=0))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
