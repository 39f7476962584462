#!/usr/bin/env python3
"""One file in a large project (issue 12): what a pre-commit run or an editor
pays for project-wide facts, against a whole-tree run, in the same run.

Stdlib only. Every measurement is a whole process (interpreter start
included), repeated; the report gives the median and the minimum wall time
and the median CPU time (user+sys of the process and its children: much less
sensitive than wall time to other load on the machine).

    python bench/subset.py                          # torch_geometric's installed tree, 5 repeats
    python bench/subset.py --tree DIR --file REL/PATH.py --repeat 3 --json out.json

The tree is copied (its .py files, byte-identical) to a temp dir with a
`pyproject.toml` beside it, so the project root is the copy and no
enclosing .gitignore hides it (see bench/README.md). Rows:

  floor: python -c pass          interpreter start
  floor: gnnlint --version       + importing the CLI
  whole tree, cold               check . with an empty --cache-dir
  whole tree, warm               check . again (nothing changed)
  one file, cold                 check FILE with an empty --cache-dir (the rest is
                                 indexed: prefiltered, exporters parsed)
  one file, warm                 check FILE, cache filled by the whole run
  one file, warm, edited         FILE changed since (a staged edit): it is parsed
  one file, stdin, warm          check - --stdin-filename FILE < FILE
  one file, warm, no facts       check FILE --no-project-facts (what it cost before)

It also checks that `check FILE` reports exactly what `check .` reports for
FILE (the invariant the facts buy).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TARGET_WARM_ONE_FILE_S = 0.35


def package_dir(name: str) -> Path | None:
    import importlib.util

    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def copy_tree(src: Path, dest_root: Path) -> Path:
    dest = dest_root / src.name
    for dirpath, dirnames, filenames in os.walk(src):
        dirnames[:] = [d for d in dirnames if d != "__pycache__"]
        for f in filenames:
            if f.endswith(".py"):
                p = Path(dirpath, f)
                q = dest / p.relative_to(src)
                q.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(p, q)
    (dest_root / "pyproject.toml").write_text('[project]\nname = "bench-subset"\n')
    return dest


def run_measured(argv: list[str], cwd: Path, env: dict, stdin: bytes | None = None) -> tuple[float, float, bytes]:
    """(wall s, CPU s of the child and its children, stdout) of one process."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, env=env, input=stdin, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                          stdin=None if stdin is not None else subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode not in (0, 1):
        sys.exit(f"error: {' '.join(argv)} exited {proc.returncode}")
    return wall, cpu, proc.stdout


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tree", default=None, help="a package folder (default: torch_geometric's installed tree)")
    ap.add_argument("--file", default="nn/conv/sage_conv.py", help="the one file, relative to the tree")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--cold-repeat", type=int, default=2, help="repeats of the cold rows (slow)")
    ap.add_argument("--gnnlint-src", default=str(REPO), help="put this gnnlint first on PYTHONPATH")
    ap.add_argument("--json", help="write the numbers here")
    args = ap.parse_args()

    src = Path(args.tree).resolve() if args.tree else package_dir("torch_geometric")
    if src is None or not src.is_dir():
        sys.exit("error: no tree (torch_geometric is not installed; pass --tree)")
    work = Path(tempfile.mkdtemp(prefix="gnnlint-subset-"))
    try:
        tree = copy_tree(src, work)
        nfiles = sum(1 for _ in tree.rglob("*.py"))
        one = (tree / args.file).relative_to(work).as_posix()
        if not (work / one).is_file():
            sys.exit(f"error: {args.file} is not in {src}")
        env = dict(os.environ)
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # like an installed tool: bytecode is cached
        env["PYTHONPYCACHEPREFIX"] = str(Path(tempfile.gettempdir()) / "gnnlint-subset-pycache")
        env["PYTHONPATH"] = os.pathsep.join([args.gnnlint_src] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
        env.pop("GNNLINT_CACHE_DIR", None)
        py = sys.executable
        gnnlint = [py, "-m", "gnnlint"]
        common = ["-e", "-q", "--output-format", "json"]
        subprocess.run(gnnlint + ["--version"], env=env, capture_output=True)  # compile the bytecode once

        rows: list[tuple[str, list[float], list[float]]] = []

        def measure(label, argv_for, repeat, setup=None, stdin_for=None):
            walls, cpus = [], []
            out = b""
            for i in range(repeat):
                if setup is not None:
                    setup(i)
                wall, cpu, out = run_measured(argv_for(i), work, env, stdin_for(i) if stdin_for else None)
                walls.append(wall)
                cpus.append(cpu)
            rows.append((label, walls, cpus))
            print(f"  {label}: median {statistics.median(walls):.3f} s", file=sys.stderr)
            return out

        caches = work.parent / (work.name + "-caches")
        warm_cache = caches / "warm"
        fresh = lambda i: str(caches / f"cold-{i}-{time.monotonic_ns()}")  # noqa: E731

        measure("floor: python -c pass", lambda i: [py, "-c", "pass"], args.repeat)
        measure("floor: gnnlint --version", lambda i: gnnlint + ["--version"], args.repeat)
        measure("whole tree, cold", lambda i: gnnlint + ["check", ".", *common, "--cache-dir", fresh(i)],
                args.cold_repeat)
        whole = measure("whole tree, warm", lambda i: gnnlint + ["check", ".", *common, "--cache-dir", str(warm_cache)],
                        args.repeat + 1)  # the first fills the cache
        rows[-1] = (rows[-1][0], rows[-1][1][1:], rows[-1][2][1:])
        measure("one file, cold", lambda i: gnnlint + ["check", one, *common, "--cache-dir", fresh(i)], args.cold_repeat)
        single = measure("one file, warm", lambda i: gnnlint + ["check", one, *common, "--cache-dir", str(warm_cache)],
                         args.repeat)
        original = (work / one).read_bytes()

        def edit(i):
            (work / one).write_bytes(original + f"\n# edit {i} {time.monotonic_ns()}\n".encode())

        measure("one file, warm, edited", lambda i: gnnlint + ["check", one, *common, "--cache-dir", str(warm_cache)],
                args.repeat, setup=edit)
        (work / one).write_bytes(original)
        stdin = measure("one file, stdin, warm",
                        lambda i: gnnlint + ["check", "-", "--stdin-filename", one, *common, "--cache-dir",
                                             str(warm_cache)], args.repeat, stdin_for=lambda i: original)
        measure("one file, warm, no facts",
                lambda i: gnnlint + ["check", one, *common, "--cache-dir", str(warm_cache), "--no-project-facts"],
                args.repeat)

        def findings(blob: bytes, only: str) -> list:
            return sorted((e["filename"], e["location"]["row"], e["location"]["column"], e["code"], e["message"])
                          for e in json.loads(blob or b"[]") if e["filename"] == only)

        same = findings(whole, one) == findings(single, one) == findings(stdin, one)
    finally:
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(work.parent / (work.name + "-caches"), ignore_errors=True)

    med = {label: statistics.median(w) for label, w, _ in rows}
    lines = [
        f"# one file in a {nfiles}-file project ({src.name}; file {args.file})",
        "",
        f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average "
        f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}; {args.repeat} repeats ({args.cold_repeat} cold)",
        "",
        "| row | median s | min s | CPU s (median) | ÷ whole tree warm |",
        "|---|---|---|---|---|",
    ]
    for label, walls, cpus in rows:
        ratio = statistics.median(walls) / med["whole tree, warm"]
        lines.append(f"| {label} | {statistics.median(walls):.3f} | {min(walls):.3f} | "
                     f"{statistics.median(cpus):.3f} | {ratio:.2f} |")
    warm = med["one file, warm"]
    lines += [
        "",
        f"- `check FILE` == `check .` for FILE (and via stdin): {'yes' if same else 'NO'}",
        f"- one file warm, whole process: {warm:.3f} s (target < {TARGET_WARM_ONE_FILE_S} s: "
        f"{'PASS' if warm < TARGET_WARM_ONE_FILE_S else 'FAIL'}); above interpreter start: "
        f"{warm - med['floor: python -c pass']:.3f} s; the project facts cost "
        f"{warm - med['one file, warm, no facts']:+.3f} s over a run without them",
    ]
    report = "\n".join(lines)
    print(report)
    if args.json:
        Path(args.json).write_text(json.dumps({"rows": [{"row": label, "wall": w, "cpu": c} for label, w, c in rows],
                                               "same_findings": same, "files": nfiles}, indent=2))
    if not same:
        sys.exit(1)


if __name__ == "__main__":
    main()
