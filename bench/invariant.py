#!/usr/bin/env python3
"""The invariant of issue 12 on a real tree: for every file F, the findings
`gnnlint check F` reports equal those `gnnlint check .` reports for F.

In-process, through the engine's API (what the CLI calls), with a cache in a
temp dir so each one-file run costs what a warm pre-commit run costs. The
tree is copied (its .py files) with a `pyproject.toml` at the top, as
bench/subset.py does.

    python bench/invariant.py /work/corpus/pyg-team__pytorch_geometric/examples
    python bench/invariant.py DIR [DIR...]      # several trees, one report line each
"""
from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gnnlint.config import load_settings  # noqa: E402
from gnnlint.discover import discover  # noqa: E402
from gnnlint.engine import apply_noqa, check_project  # noqa: E402


def copy(src: Path, dest_root: Path) -> Path:
    dest = dest_root / src.name
    for dirpath, dirnames, filenames in os.walk(src):
        dirnames[:] = [d for d in dirnames if d != "__pycache__"]
        for f in filenames:
            if f.endswith(".py"):
                p = Path(dirpath, f)
                q = dest / p.relative_to(src)
                q.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(p, q)
    (dest_root / "pyproject.toml").write_text('[project]\nname = "invariant"\n')
    return dest


def findings(root: Path, files) -> set[tuple]:
    settings = load_settings(cwd=root, isolated=True)
    result = check_project(files, settings, jobs=os.cpu_count() or 1)
    return {(os.path.relpath(os.path.abspath(f.path), root), f.line, f.col, f.code, f.message)
            for f in apply_noqa(result.findings)}


def main() -> int:
    bad = 0
    for arg in sys.argv[1:] or ["."]:
        work = Path(tempfile.mkdtemp(prefix="gnnlint-invariant-"))
        old = os.getcwd()
        try:
            copy(Path(arg).resolve(), work)
            os.chdir(work)
            files, _ = discover([work], load_settings(cwd=work, isolated=True))
            start = time.perf_counter()
            whole = findings(work, files)
            whole_s = time.perf_counter() - start
            start = time.perf_counter()
            mismatches = []
            for path in files:
                rel = os.path.relpath(path, work)
                alone = findings(work, [path])
                expected = {f for f in whole if f[0] == rel}
                if alone != expected:
                    mismatches.append((rel, sorted(alone ^ expected)))
            per_file = (time.perf_counter() - start) / max(len(files), 1)
            print(f"{arg}: {len(files)} files, {len(whole)} findings; every file alone == whole run: "
                  f"{'yes' if not mismatches else f'NO ({len(mismatches)} files)'} "
                  f"(whole run {whole_s:.1f} s cold, one file warm {per_file * 1000:.0f} ms in-process)")
            for rel, diff in mismatches[:10]:
                print(f"  {rel}: {diff[:3]}")
            bad += len(mismatches)
        finally:
            os.chdir(old)
            shutil.rmtree(work, ignore_errors=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
