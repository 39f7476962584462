"""Reliability sweep (issue 16): bad inputs, hostile settings and signals,
each in a fresh temp dir, plus GNN000 against py_compile on CPython's test
suite and whole-tree runs (files, wall, peak RSS). Prints a Markdown table:

    input | exit code | outcome | processes left | files changed

``outcome`` is ok when the run did what issue 16 asks (no traceback, no
hang, the documented exit code and message); ``processes left`` counts the
run's worker processes still alive 3 s after it ended; ``files changed``
counts the project's files (outside the cache) whose bytes changed, appeared
or vanished (for a --fix row: files other than fully fixed ones).

    python bench/sweep.py                 # everything (~3-6 min on 2 cores)
    python bench/sweep.py --quick         # no tree runs
    python bench/sweep.py --tree DIR ...  # whole-tree runs on these trees
    python bench/sweep.py --trees-only --tree DIR ...  # only the whole-tree runs

Whole-tree runs check every ``*.py`` of the tree (``--exclude`` replaced by
a pattern that matches nothing: the default excludes would skip a stdlib's
``test/`` and ``site-packages/``, most of what the sweep is for).
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import subprocess
import sys
import sysconfig
import tempfile
import textwrap
import time
from pathlib import Path

HAZARD = textwrap.dedent("""\
    import torch

    class GCN(torch.nn.Module):
        def forward(self, x):
            return x * x.sum().item()

    model = GCN()
    torch.compile(model)
""")
FIXED = HAZARD.replace("\ntorch.compile(model)\n", "\nmodel = torch.compile(model)\n")
TIMEOUT = 60

rows: list[tuple] = []


def gnnlint(args, cwd, input=None, stdout=subprocess.PIPE, timeout=TIMEOUT):
    started = time.monotonic()
    try:
        proc = subprocess.run([sys.executable, "-m", "gnnlint", *args], cwd=cwd, input=input, stdout=stdout,
                              stderr=subprocess.PIPE, timeout=timeout)
        return proc.returncode, proc.stdout or b"", proc.stderr, time.monotonic() - started
    except subprocess.TimeoutExpired as exc:
        return "hang", exc.stdout or b"", exc.stderr or b"", time.monotonic() - started


def snapshot(root: Path) -> dict:
    out = {}
    for p in root.rglob("*"):
        if ".gnnlint_cache" in p.parts or not (p.is_file() or p.is_symlink()):
            continue
        try:
            out[str(p.relative_to(root))] = p.read_bytes()
        except OSError:
            out[str(p.relative_to(root))] = None
    return out


def changed(before: dict, after: dict, allowed=()) -> int:
    names = set(before) | set(after)
    return sum(1 for n in names if before.get(n) != after.get(n) and n not in allowed)


def project() -> Path:
    root = Path(tempfile.mkdtemp(prefix="gnnlint-sweep-"))
    (root / "pyproject.toml").write_text("[tool.gnnlint]\n")
    (root / "ok.py").write_text(HAZARD)
    return root


def record(name, code, ok, left=0, files_changed=0, note=""):
    rows.append((name, code, ("ok" if ok else "FAIL") + (f": {note}" if note else ""), left, files_changed))
    print(f"  {name}: {code} {'ok' if ok else 'FAIL'} {note}", file=sys.stderr)


def case(name, files: dict, args, expect_code, expect_err=None, expect_out=None, input=None, setup=None,
         stdout=subprocess.PIPE, outputs=()):
    root = project()
    for rel, content in files.items():
        path = root / os.fsdecode(rel) if isinstance(rel, bytes) else root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content if isinstance(content, bytes) else content.encode())
    if setup is not None:
        setup(root)
    before = snapshot(root)
    code, out, err, _ = gnnlint(args, root, input=input, stdout=stdout)
    text_err = err.decode(errors="replace")
    ok = code == expect_code and "Traceback" not in text_err
    if expect_err is not None:
        ok = ok and expect_err in text_err
    if expect_out is not None:
        ok = ok and (expect_out(out) if callable(expect_out) else expect_out.encode() in out)
    record(name, code, ok, 0, changed(before, snapshot(root), allowed=outputs), text_err.strip().splitlines()[-1][:90]
           if not ok and text_err.strip() else "")


def utf8_json(out: bytes) -> bool:
    try:
        json.loads(out.decode("utf-8"))
        return True
    except ValueError:
        return False


def bad_inputs() -> None:
    deep = "x = " + "(" * 10_000 + "1" + ")" * 10_000 + "\n"
    case("10,000 nested parentheses", {"deep.py": deep}, ["check", ".", "--no-cache"], 1,
         expect_out="too many nested parentheses")
    case("10,000 nested parentheses on stdin", {}, ["check", "-"], 1, input=deep.encode(),
         expect_out="too many nested parentheses")
    case("12,000 chained `and` (Python accepts)", {"chain.py": HAZARD + "x = " + " and ".join(["a"] * 12_000)},
         ["check", ".", "--no-cache"], 1, expect_out="ok.py:5:20")
    case("3,001 adjacent string literals", {"s.py": HAZARD + "x = (" + " ".join(['"a"'] * 3001) + ")\n"},
         ["check", ".", "--no-cache"], 1, expect_err="libcst cannot parse it")
    case("`from __future__ import braces`", {"f.py": "from __future__ import braces\n"},
         ["check", "f.py", "--no-cache"], 1, expect_out="GNN000")
    case("`from __future__` after code", {"f.py": "import torch\nfrom __future__ import annotations\n"},
         ["check", "f.py", "--no-cache"], 1, expect_out="GNN000")
    case("null byte", {"n.py": b"x = 1\0\n"}, ["check", "n.py", "--no-cache"], 1, expect_out="GNN000")
    case("undecodable bytes (+ a good file)", {"b.py": b"x = '\xff\xfe'\n"}, ["check", ".", "--no-cache"], 1,
         expect_err="cannot decode")
    case("file over max-file-size (disk)", {"big.py": HAZARD + "#" * 3000 + "\n"},
         ["check", "big.py", "--no-cache", "--max-file-size", "2"], 2, expect_err="over max-file-size")
    case("file over max-file-size (stdin)", {}, ["check", "-", "--max-file-size", "2"], 2,
         input=(HAZARD + "#" * 3000 + "\n").encode(), expect_err="over max-file-size")
    case("stdin --fix prints the fixed source", {}, ["check", "-", "--fix", "--stdin-filename", "x.py"], 1,
         input=HAZARD.encode(), expect_out="model = torch.compile(model)")
    case("stdin --diff", {}, ["check", "-", "--diff", "--stdin-filename", "x.py"], 1,
         input=HAZARD.encode(), expect_out="+model = torch.compile(model)")
    case("missing path + a good file", {}, ["check", "does_not_exist/", "ok.py", "--no-cache"], 2,
         expect_err="No such file")
    case("invalid glob in exclude", {"pyproject.toml": '[tool.gnnlint]\nexclude = ["[z-a]"]\n'},
         ["check", "--no-cache"], 2, expect_err="'exclude'")
    case("invalid glob in per-file-ignores",
         {"pyproject.toml": '[tool.gnnlint]\nper-file-ignores = {"[z-a].py" = ["GNN001"]}\n'},
         ["check", "--no-cache"], 2, expect_err="'per-file-ignores'")
    case("--select ''", {}, ["check", "ok.py", "--select", ""], 2, expect_err="names no rule code")
    case("--cache-dir src (check)", {"src/model.py": HAZARD}, ["check", ".", "--cache-dir", "src"], 1,
         expect_err="not caching")
    case("--cache-dir . (check)", {".git/HEAD": "ref: x\n"}, ["check", ".", "--cache-dir", "."], 1,
         expect_err="not caching")
    case("clean --cache-dir src", {"src/model.py": HAZARD}, ["clean", "--cache-dir", "src"], 2,
         expect_err="not removed")
    case("clean with cache-dir = \".\"", {"pyproject.toml": '[tool.gnnlint]\ncache-dir = "."\n'}, ["clean"], 2,
         expect_err="not removed")

    def bad_cache(root: Path) -> None:
        subprocess.run([sys.executable, "-m", "gnnlint", "check", "ok.py"], cwd=root, capture_output=True)
        pack = root / ".gnnlint_cache" / "pack.json"
        pack.write_text(json.dumps({k: {"findings": ["x"]} for k in json.loads(pack.read_text())}))
    case("cache entries of the wrong shape", {}, ["check", "ok.py"], 1, setup=bad_cache, expect_out="ok.py:5:20")
    with open("/dev/full", "w") as full:
        case("report to a full disk (stdout)", {}, ["check", "ok.py", "--no-cache"], 2, stdout=full,
             expect_err="No space left")
    case("report to a full disk (-o)", {}, ["check", "ok.py", "--no-cache", "-o", "/dev/full"], 2,
         expect_err="No space left")
    case("non-UTF-8 file name, json", {b"caf\xe9.py": HAZARD}, ["check", ".", "--no-cache", "--output-format",
                                                                "json"], 1, expect_out=utf8_json)
    case("non-UTF-8 file name, sarif -o", {b"caf\xe9.py": HAZARD},
         ["check", ".", "--no-cache", "--output-format", "sarif", "-o", "out.sarif"], 1, outputs=("out.sarif",))

    def fifo(root: Path) -> None:
        os.mkfifo(root / "pipe.py")
    case("a FIFO named explicitly", {}, ["check", "pipe.py", "ok.py", "--no-cache"], 1, setup=fifo,
         expect_err="pipe.py")

    # a file reached under two names during --fix
    root = project()
    os.symlink("ok.py", root / "alias.py")
    code, out, err, _ = gnnlint(["check", "--fix", "ok.py", "alias.py", "--no-cache"], root)
    ok = code == 1 and b"changed on disk" not in err and b"GNN010" not in out and (root / "ok.py").read_text() == FIXED
    record("--fix on a file and a symlink to it", code, ok, 0, 0 if (root / "ok.py").read_text() == FIXED else 1)


# ---------------------------------------------------------------- signals
def children(pid: int) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    stat = fh.read()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(entry))
    return out


def alive(pids) -> list[int]:
    out = []
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as fh:
                if fh.read().rsplit(")", 1)[1].split()[0] != "Z":
                    out.append(pid)
        except OSError:
            pass
    return out


def busy_project() -> Path:
    root = project()
    body = "".join(f"def f{i}(x):\n    y = x + {i}\n    return y * 2 if y else [y, (x, y)]\n\n" for i in range(1000))
    for k in range(16):
        (root / f"m{k:02d}.py").write_text(HAZARD + body)
    return root


def signal_case(name, args, action, expect_codes) -> None:
    root = busy_project()
    before = snapshot(root)
    proc = subprocess.Popen([sys.executable, "-m", "gnnlint", *args], cwd=root, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
    deadline = time.monotonic() + 30
    while len(children(proc.pid)) < 2 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    workers = children(proc.pid)
    time.sleep(0.5)
    started = time.monotonic()
    action(proc)
    try:
        _, err = proc.communicate(timeout=30)
        code = proc.returncode
    except subprocess.TimeoutExpired:
        code, err = "hang", b""
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
    elapsed = time.monotonic() - started
    time.sleep(3)
    left = alive(workers)
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    after = snapshot(root)
    fixed = {n for n in after if before.get(n) is not None and after[n] == before[n].replace(
        b"\ntorch.compile(model)\n", b"\nmodel = torch.compile(model)\n")}
    temps = [n for n in after if n.endswith(".gnnlint.tmp")]
    ok = code in expect_codes and not left and not temps and b"Traceback" not in err and len(workers) >= 2
    record(name, code, ok, len(left), changed(before, after, allowed=fixed),
           f"exit after {elapsed:.2f} s" + (f", {len(temps)} temp files" if temps else ""))


def signals() -> None:
    def ctrl_c(times):
        def act(proc):
            for _ in range(times):
                os.killpg(proc.pid, signal.SIGINT)
                time.sleep(0.05)
        return act
    check = ["check", ".", "--no-cache", "-j", "2"]
    signal_case("Ctrl-C once during check", check, ctrl_c(1), (130,))
    signal_case("Ctrl-C twice during check", check, ctrl_c(2), (130, -2))
    signal_case("SIGTERM to the parent (kill PID)", check, lambda p: os.kill(p.pid, signal.SIGTERM), (143,))
    signal_case("SIGKILL to the parent", check, lambda p: os.kill(p.pid, signal.SIGKILL), (-9,))
    signal_case("Ctrl-C during --fix", ["check", ".", "--fix", "--no-cache", "-j", "2"], ctrl_c(1), (130,))


# ---------------------------------------------------------------- GNN000 vs py_compile
def py_compile_agreement() -> None:
    import warnings

    tests = Path(sysconfig.get_paths()["stdlib"]) / "test"
    files = sorted(str(p) for p in tests.rglob("*.py"))
    rejected = set()
    for f in files:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                compile(Path(f).read_bytes(), f, "exec", dont_inherit=True)
            except Exception:  # noqa: BLE001 - what py_compile reports
                rejected.add(f)
    with tempfile.TemporaryDirectory() as elsewhere:  # not in Lib/test: `python -m` would import from it
        code, out, err, wall = gnnlint(["check", *files, "--select", "GNN000", "--no-cache", "--isolated",
                                        "--output-format", "json", "--exit-zero", "--max-file-size", "0",
                                        "--absolute-paths", "--no-respect-gitignore"], cwd=elsewhere, timeout=900)
    reported = {os.path.realpath(f["filename"]) for f in json.loads(out or b"[]")} if code != "hang" else set()
    rejected = {os.path.realpath(f) for f in rejected}
    missed, extra = rejected - reported, reported - rejected
    text = err.decode(errors="replace")
    named = {f for f in missed if f"{f}: cannot decode source" in text}  # a named skip, not silence
    ok = code == 0 and not (missed - named) and not extra
    record(f"GNN000 vs py_compile on CPython's Lib/test ({len(files)} files, {len(rejected)} rejected)", code, ok,
           0, 0, f"{len(rejected & reported)} GNN000, {len(named)} named skips (undecodable), "
                 f"{len(missed - named)} silent, {len(extra)} extra, {wall:.1f} s")


# ---------------------------------------------------------------- whole trees
def tree_run(tree: str) -> None:
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    with tempfile.TemporaryDirectory() as cache:  # also the cwd: never inside the tree (`python -m`)
        # --no-respect-gitignore: an installed package may sit in a git checkout
        # whose .gitignore lists it (pyenv's /versions)
        code, out, err, wall = gnnlint(["check", tree, "--isolated", "--cache-dir", cache, "--exit-zero", "-v",
                                        "--no-respect-gitignore", "--exclude", ".gnnlint-sweep-excludes-nothing",
                                        "--output-format", "concise", "-q"], cwd=cache, timeout=1800)
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    text = err.decode(errors="replace")
    summary = next((line for line in text.splitlines() if "files checked" in line), "")
    files = summary.split("gnnlint: ")[-1].split(" files checked")[0] if summary else "?"
    ok = code == 0 and "Traceback" not in text
    record(f"check {tree}", code, ok, 0, 0,
           f"{files} files, {wall:.1f} s wall, peak RSS {max(peak, before) / 1024:.0f} MB (largest process)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="no whole-tree runs, no Lib/test sweep")
    parser.add_argument("--tree", action="append", default=None, help="a tree for a whole-tree run (repeatable)")
    parser.add_argument("--trees-only", action="store_true", help="only the whole-tree runs")
    args = parser.parse_args()
    if not args.trees_only:
        print("bad inputs ...", file=sys.stderr)
        bad_inputs()
        print("signals ...", file=sys.stderr)
        signals()
    if not args.quick:
        if not args.trees_only:
            print("GNN000 vs py_compile ...", file=sys.stderr)
            py_compile_agreement()
        import importlib.util

        spec = importlib.util.find_spec("torch_geometric")  # its folder, without importing torch
        trees = args.tree or ([spec.submodule_search_locations[0]] if spec else [])
        for tree in trees:
            print(f"tree {tree} ...", file=sys.stderr)
            tree_run(tree)
    print("| input | exit code | outcome | processes left | files changed |")
    print("|---|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(str(c).replace("|", "\\|") for c in row) + " |")
    failed = sum(1 for r in rows if r[2].startswith("FAIL"))
    print(f"\n{len(rows)} cases, {failed} failed", file=sys.stderr)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
