#!/usr/bin/env python3
"""gnnlint speed benchmark (issue 6): floors, gnnlint and peers on the same trees.

Stdlib only. Every measurement is a whole process (interpreter start included),
timed with a wall clock, repeated, and reported as the median. Progress goes
to stderr; the Markdown report goes to stdout (and to --out if given).

    python bench/run.py                 # trees pyg and torch, 3 repeats
    python bench/run.py --quick         # pyg only, 1 repeat
    python bench/run.py --tree pyg --repeat 5 --json /tmp/bench.json
    python bench/run.py --tree /path/to/any/dir

Measurements per tree:
  floor: read bytes        read every .py file (one process)
  floor: libcst parse      libcst.parse_module on every .py file (one process)
  gnnlint cold             check --no-cache
  gnnlint first run        check with an empty --cache-dir (fills it)
  gnnlint warm             check again with that cache (nothing changed)
  ruff / torchfix / fixit  peers, when installed (see --peers-venv)
plus, once: interpreter start, `import libcst`, gnnlint and ruff on one small
file (the pre-commit case), and peak memory of a gnnlint cold run.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import importlib.metadata as _md
import importlib.util
import json
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
FLOORS = BENCH_DIR / "_floors.py"
SAMPLE = BENCH_DIR / "precommit_sample.py.txt"
DEFAULT_PEERS_VENV = Path("/work/peers")
DEFAULT_SMALL_FILE = "nn/conv/sage_conv.py"  # relative to the torch_geometric package
FIXIT_RULE = "fixit.rules:NoStaticIfCondition"
PYCACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / \
    "gnnlint-bench" / "pycache"
GNNLINT_OK_RC = {0, 1}  # 1 only matters when --exit-zero does not exist yet

# Hook: how the engine may report the number of files it parsed (issue 6 asks
# for it per tree). Extend when the engine's wording is settled.
PARSED_PATTERNS = [
    re.compile(r"(?P<total>\d+)\s+files?\s+checked\D{0,30}?(?P<parsed>\d+)\s+parsed",
               re.IGNORECASE),
    re.compile(r"parsed\s*[:=]?\s*(?P<parsed>\d+)\s*(?:/|of)\s*(?P<total>\d+)",
               re.IGNORECASE),
    re.compile(r"(?P<parsed>\d+)\s*(?:/|of)\s*(?P<total>\d+)\s+files?\s+parsed",
               re.IGNORECASE),
    re.compile(r"(?P<parsed>\d+)\s+files?\s+parsed", re.IGNORECASE),
    re.compile(r"parsed\s*[:=]?\s*(?P<parsed>\d+)\s+files?", re.IGNORECASE),
    re.compile(r"files[_ ]parsed\W{1,3}(?P<parsed>\d+)", re.IGNORECASE),
]


# --------------------------------------------------------------------------- #
# processes


@dataclass
class Run:
    argv: list[str]
    seconds: float
    rc: int | None
    timed_out: bool
    maxrss_kb: int  # largest single process in the tree (wait4 rusage)
    cpu_seconds: float  # user + sys of the process and its reaped children
    peak_tree_rss_kb: int = 0  # sampled sum over the process tree (memory runs)
    peak_procs: int = 0
    stdout: str = field(default="", repr=False)
    stderr: str = field(default="", repr=False)


def _children_map() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        rest = stat[stat.rfind(b")") + 2 :].split()
        kids.setdefault(int(rest[1]), []).append(int(name))
    return kids


def _tree_rss_kb(root: int, page_kb: int) -> tuple[int, int]:
    kids = _children_map()
    todo, total, n = [root], 0, 0
    while todo:
        pid = todo.pop()
        todo.extend(kids.get(pid, ()))
        try:
            with open(f"/proc/{pid}/statm", "rb") as f:
                total += int(f.read().split()[1]) * page_kb
            n += 1
        except (OSError, IndexError, ValueError):
            pass
    return total, n


def cpu_busy(interval: float = 0.5) -> float:
    """Fraction of all CPUs busy over `interval` seconds (from /proc/stat)."""
    def snap() -> tuple[int, int]:
        with open("/proc/stat") as f:
            vals = [int(x) for x in f.readline().split()[1:]]
        idle = vals[3] + (vals[4] if len(vals) > 4 else 0)
        return sum(vals), idle
    try:
        t0, i0 = snap()
        time.sleep(interval)
        t1, i1 = snap()
    except (OSError, ValueError, IndexError):
        return 0.0
    return 1.0 - (i1 - i0) / max(1, t1 - t0)


def bench_env(base: dict[str, str] | None = None) -> dict[str, str]:
    """Environment of every measured process: bytecode is written and read
    (like an installed tool), but in a bench-owned PYTHONPYCACHEPREFIX so
    neither the repo nor site-packages get __pycache__ files. The sandbox sets
    PYTHONDONTWRITEBYTECODE=1, which would make gnnlint recompile itself on
    every start."""
    env = dict(os.environ if base is None else base)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(PYCACHE)
    return env


def run_cmd(
    argv: list[str],
    *,
    cwd: str | os.PathLike | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 1800.0,
    sample_memory: bool = False,
) -> Run:
    """Run argv as its own session; wall time, rc and rusage from wait4.

    On timeout the whole process group is killed. Leftover processes of the
    group (orphaned workers) are killed after the main process exits.
    """
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        try:
            proc = subprocess.Popen(
                argv,
                cwd=cwd,
                env=bench_env() if env is None else env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                start_new_session=True,
            )
        except OSError as exc:
            return Run(argv, 0.0, None, False, 0, 0.0, stderr=f"cannot start: {exc}")
        timed_out = threading.Event()

        def _kill() -> None:
            timed_out.set()
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

        timer = threading.Timer(timeout, _kill)
        timer.daemon = True
        timer.start()

        peak = [0, 0]
        stop = threading.Event()
        sampler = None
        if sample_memory:
            page_kb = os.sysconf("SC_PAGE_SIZE") // 1024

            def _sample() -> None:
                while not stop.is_set():
                    total, n = _tree_rss_kb(proc.pid, page_kb)
                    peak[0] = max(peak[0], total)
                    peak[1] = max(peak[1], n)
                    stop.wait(0.05)

            sampler = threading.Thread(target=_sample, daemon=True)
            sampler.start()

        _, status, ru = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - t0
        timer.cancel()
        stop.set()
        if sampler is not None:
            sampler.join()
        proc.returncode = os.waitstatus_to_exitcode(status)
        try:  # orphans left in our session (only processes this call started)
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        out.seek(0)
        err.seek(0)
        return Run(
            argv=argv,
            seconds=seconds,
            rc=None if timed_out.is_set() else proc.returncode,
            timed_out=timed_out.is_set(),
            maxrss_kb=ru.ru_maxrss,
            cpu_seconds=ru.ru_utime + ru.ru_stime,
            peak_tree_rss_kb=peak[0],
            peak_procs=peak[1],
            stdout=out.read().decode("utf-8", "replace"),
            stderr=err.read().decode("utf-8", "replace"),
        )


# --------------------------------------------------------------------------- #
# trees


@dataclass
class Tree:
    name: str
    path: Path
    files: list[Path]
    nbytes: int
    lines: int
    listfile: Path | None = None
    source: Path | None = None  # the installed tree when `path` is a copy

    @property
    def mb(self) -> float:
        return self.nbytes / 1e6


def package_dir(dist: str) -> Path | None:
    """Directory of an installed package, found without importing it."""
    spec = importlib.util.find_spec(dist)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def py_files(root: Path) -> list[Path]:
    if root.is_file():
        return [root]
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        found.extend(Path(dirpath, f) for f in sorted(filenames) if f.endswith(".py"))
    return found


def load_tree(name: str, path: Path) -> Tree:
    files = py_files(path)
    nbytes = lines = 0
    for p in files:
        data = p.read_bytes()
        nbytes += len(data)
        lines += data.count(b"\n")
    return Tree(name, path, files, nbytes, lines)


def copy_tree(tree: Tree, dest_root: Path) -> Tree:
    """Byte-identical copy of the tree's .py files under dest_root/<name>/<dir>.

    Why: the installed trees live under /root/.pyenv, a git checkout whose
    .gitignore lists /versions, so tools that honour .gitignore from the
    enclosing repository (fixit via trailrunner; gnnlint's respect-gitignore)
    would skip every file. A copy outside any repository gives every tool the
    same files. The package directory keeps its name (relative imports).
    """
    src = tree.path
    dest = dest_root / tree.name / src.name
    files = []
    for p in tree.files:
        q = dest / p.relative_to(src) if src.is_dir() else dest
        q.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(p, q)
        files.append(q)
    return Tree(tree.name, dest, files, tree.nbytes, tree.lines, source=src)


def resolve_tree(spec: str) -> Tree:
    if spec == "pyg":
        path = package_dir("torch_geometric")
        if path is None:
            sys.exit("error: torch_geometric is not installed (tree 'pyg')")
        return load_tree("pyg", path)
    if spec == "torch":
        path = package_dir("torch")
        if path is None:
            sys.exit("error: torch is not installed (tree 'torch')")
        return load_tree("torch", path)
    path = Path(spec).resolve()
    if not path.exists():
        sys.exit(f"error: tree {spec!r} is neither pyg, torch nor an existing path")
    return load_tree(path.name, path)


# --------------------------------------------------------------------------- #
# tools


def find_peer(name: str, venv: Path | None) -> str | None:
    if venv is not None:
        cand = venv / "bin" / name
        return str(cand) if cand.exists() else None
    found = shutil.which(name)
    if found:
        return found
    cand = DEFAULT_PEERS_VENV / "bin" / name
    return str(cand) if cand.exists() else None


def tool_version(argv: list[str]) -> str:
    r = run_cmd(argv, timeout=60)
    text = (r.stdout or r.stderr).strip().splitlines()
    return text[0].strip() if text and r.rc == 0 else "?"


def venv_libcst_version(exe: str) -> str:
    py = Path(exe).parent / "python"
    if not py.exists():
        return "?"
    r = run_cmd(
        [str(py), "-c", "import importlib.metadata as m; print(m.version('libcst'))"],
        timeout=60,
    )
    return r.stdout.strip() if r.rc == 0 else "?"


def dist_version(name: str) -> str:
    try:
        return _md.version(name)
    except _md.PackageNotFoundError:
        return "not installed"


@dataclass
class Gnnlint:
    python: str
    env: dict[str, str]
    available: bool
    flags: set[str]
    probe_error: str = ""
    extra: list[str] = field(default_factory=list)
    jobs: str | None = None
    imported_from: str = ""
    label: str = ""

    def argv(self, target: Path, *, cache: str, cache_dir: str | None = None,
             more: list[str] | None = None) -> list[str]:
        """cache: 'none' (cold) or 'dir' (use cache_dir)."""
        a = [self.python, "-m", "gnnlint", "check", str(target)]
        if cache == "none" and "--no-cache" in self.flags:
            a.append("--no-cache")
        if cache_dir is not None and "--cache-dir" in self.flags:
            a += ["--cache-dir", cache_dir]
        if "--exit-zero" in self.flags:
            a.append("--exit-zero")
        if "--isolated" in self.flags:  # no config file can change the run
            a.append("--isolated")
        if "--output-format" in self.flags:
            a += ["--output-format", "concise"]
        if "--verbose" in self.flags:  # one stderr line: files checked/parsed/cached
            a.append("--verbose")
        if self.jobs is not None and "--jobs" in self.flags:
            a += ["--jobs", self.jobs]
        return a + self.extra + (more or [])


def snapshot_gnnlint(rev: str, dest: Path) -> tuple[Path, str]:
    """Extract the gnnlint package at git `rev` of this repo into dest.

    The working tree changes while others work; a snapshot keeps every run of
    one benchmark on the same code (and the warm run on the cache's version).
    """
    r = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", rev],
                       capture_output=True, text=True, timeout=60, check=False)
    if r.returncode != 0:
        sys.exit(f"error: --gnnlint-rev {rev!r}: {r.stderr.strip()}")
    short = r.stdout.strip()
    dest.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryFile() as tar:
        r2 = subprocess.run(["git", "-C", str(REPO), "archive", "--format=tar", short,
                             "gnnlint"], stdout=tar, stderr=subprocess.PIPE, timeout=120,
                            check=False)
        if r2.returncode != 0:
            sys.exit(f"error: git archive {short} gnnlint: {r2.stderr.decode().strip()}")
        tar.seek(0)
        with tarfile.open(fileobj=tar) as tf:
            tf.extractall(dest, filter="data")
    return dest, short


def probe_gnnlint(python: str, extra: list[str], jobs: str | None,
                  src: Path = REPO) -> Gnnlint:
    env = bench_env()
    env["PYTHONPATH"] = os.pathsep.join(
        [str(src)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])
    )
    env.pop("GNNLINT_CACHE_DIR", None)
    with tempfile.TemporaryDirectory(prefix="gnnlint-bench-") as cwd:
        r = run_cmd([python, "-m", "gnnlint", "check", "--help"], cwd=cwd, env=env,
                    timeout=120)
        where = run_cmd([python, "-c", "import gnnlint; print(gnnlint.__file__)"],
                        cwd=cwd, env=env, timeout=60)
    if r.rc != 0:
        tail = (r.stderr or r.stdout).strip().splitlines()[-1:] or ["no output"]
        return Gnnlint(python, env, False, set(),
                       f"`gnnlint check --help` rc={r.rc}: {tail[0]}", extra, jobs)
    flags = set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", r.stdout + r.stderr))
    g = Gnnlint(python, env, True, flags, "", extra, jobs)
    g.imported_from = where.stdout.strip() or "?"
    if not g.imported_from.startswith(str(src)):
        log(f"warning: gnnlint is imported from {g.imported_from}, not {src}")
    return g


PARSED_MB = re.compile(r"(?P<parsed>\d+)\s+parsed\s+\((?P<mb>[\d.]+)\s*MB\)")


def parsed_mb(text: str) -> float | None:
    """MB that gnnlint handed to libcst (`-v`: "N parsed (X MB)")."""
    m = PARSED_MB.search(text)
    return float(m.group("mb")) if m else None


def parsed_count(text: str) -> str | None:
    for pat in PARSED_PATTERNS:
        m = pat.search(text)
        if m:
            d = m.groupdict()
            return d["parsed"] + (f" of {d['total']}" if d.get("total") else "")
    return None


def count_findings(stdout: str) -> int | None:
    m = re.search(r"Found\s+(\d+)", stdout)
    if m:
        return int(m.group(1))
    n = sum(1 for line in stdout.splitlines() if re.match(r".+:\d+:\d+:? ", line))
    return n


# --------------------------------------------------------------------------- #
# measurements


@dataclass
class Series:
    tree: str
    name: str
    kind: str  # floor | gnnlint | peer
    runs: list[Run] = field(default_factory=list)
    ok_rc: set[int] = field(default_factory=lambda: {0})
    skipped: str = ""
    notes: list[str] = field(default_factory=list)

    def ok_runs(self) -> list[Run]:
        return [r for r in self.runs if not r.timed_out and r.rc in self.ok_rc]

    def failed(self) -> list[Run]:
        return [r for r in self.runs if r not in self.ok_runs()]

    def median(self) -> float | None:
        ok = self.ok_runs()
        if not ok or self.failed():
            return None
        return statistics.median(r.seconds for r in ok)


class Bench:
    def __init__(self, args: argparse.Namespace):
        self.args = args
        self.series: dict[tuple[str, str], Series] = {}
        self.order: list[tuple[str, str]] = []
        self.workdir = Path(tempfile.mkdtemp(prefix="gnnlint-bench-"))
        self.extra_info: dict[str, dict[str, str]] = {}
        self.load = os.getloadavg()
        self.busy: list[float] = []

    def get(self, tree: str, name: str, kind: str, ok_rc: set[int] | None = None) -> Series:
        key = (tree, name)
        if key not in self.series:
            self.series[key] = Series(tree, name, kind, ok_rc=ok_rc or {0})
            self.order.append(key)
        return self.series[key]

    def wait_idle(self) -> float:
        """Wait (bounded) until other work leaves the CPUs mostly idle."""
        a = self.args
        if a.idle_threshold >= 1:
            return 0.0
        deadline = time.monotonic() + a.idle_max_wait
        busy = cpu_busy()
        while busy > a.idle_threshold and time.monotonic() < deadline:
            time.sleep(2)
            busy = cpu_busy()
        self.busy.append(busy)
        return busy

    def measure(self, s: Series, argv: list[str], *, label: str, cwd=None, env=None,
                sample_memory: bool = False) -> Run:
        busy = self.wait_idle()
        r = run_cmd(argv, cwd=cwd or self.workdir, env=env, timeout=self.args.timeout,
                    sample_memory=sample_memory)
        s.runs.append(r)
        status = ("TIMEOUT" if r.timed_out else
                  "ok" if r.rc in s.ok_rc else f"FAILED rc={r.rc}")
        log(f"  {label:<40} {r.seconds:9.3f} s  cpu {r.cpu_seconds:8.2f} s  "
            f"{r.maxrss_kb / 1024:6.0f} MB  busy before {busy:4.0%}  {status}")
        if status != "ok":
            tail = "\n".join((r.stderr or r.stdout).strip().splitlines()[-5:])
            log("    " + tail.replace("\n", "\n    "))
        return r


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def fmt_s(x: float | None) -> str:
    if x is None:
        return "n/a"
    return f"{x:.3f}" if x < 10 else f"{x:.1f}"


def fmt_ratio(x: float | None) -> str:
    if x is None:
        return ""
    return f"{x:.3f}" if x < 1 else f"{x:.2f}" if x < 100 else f"{x:.0f}"


def bench_tree(b: Bench, tree: Tree, g: Gnnlint, peers: dict[str, str | None],
               repeat: int, slow_peers: bool) -> None:
    a = b.args
    tree.listfile = b.workdir / f"files-{tree.name}.txt"
    tree.listfile.write_text("".join(f"{p}\n" for p in tree.files), encoding="utf-8")
    py = sys.executable
    T = tree.name
    log(f"\n== tree {T}: {tree.source or tree.path} ({len(tree.files)} files, {tree.lines} lines, "
        f"{tree.mb:.1f} MB)")

    # warm-up, untimed: page cache for the tree, bytecode in PYCACHE
    run_cmd([py, str(FLOORS), "read", str(tree.listfile)], timeout=a.timeout)
    run_cmd([py, "-c", "import libcst"], timeout=a.timeout)

    s_read = b.get(T, "floor: read bytes", "floor")
    s_parse = b.get(T, "floor: libcst parse_module", "floor")
    s_cold = b.get(T, "gnnlint cold (--no-cache)", "gnnlint", GNNLINT_OK_RC)
    s_fill = b.get(T, "gnnlint first run (empty cache)", "gnnlint", GNNLINT_OK_RC)
    s_warm = b.get(T, "gnnlint warm (cache, nothing changed)", "gnnlint", GNNLINT_OK_RC)
    s_ruff = b.get(T, "ruff check --select E9 --no-cache", "peer", {0, 1})
    s_tf = b.get(T, "torchfix", "peer", {0, 1})
    s_fx = b.get(T, f"fixit lint ({FIXIT_RULE.split(':')[1]} only)", "peer", {0, 1, 2, 3})

    for s in (s_cold, s_fill, s_warm):
        if not g.available:
            s.skipped = "gnnlint CLI not available: " + g.probe_error
    if g.available and "--no-cache" not in g.flags:
        s_cold.notes.append("no --no-cache flag: fresh empty cache dir per run")
    if g.available and "--cache-dir" not in g.flags:
        s_fill.notes.append("no --cache-dir flag: GNNLINT_CACHE_DIR + temp cwd")
    for s, tool in ((s_ruff, "ruff"), (s_tf, "torchfix"), (s_fx, "fixit")):
        if peers.get(tool) is None:
            s.skipped = f"{tool} not found (PATH, --peers-venv, {DEFAULT_PEERS_VENV})"
    if not slow_peers:
        for s in (s_tf, s_fx):
            s.skipped = s.skipped or f"not run on this tree (--slow-peers-on {a.slow_peers_on})"

    info = b.extra_info.setdefault(T, {})

    def gnn_env(cache_dir: str | None) -> dict[str, str]:
        env = dict(g.env)
        if cache_dir is not None:
            env["GNNLINT_CACHE_DIR"] = cache_dir
        return env

    # memory: one extra gnnlint cold run with process-tree RSS sampling (untimed)
    if g.available:
        with tempfile.TemporaryDirectory(dir=b.workdir) as cwd:
            cache = os.path.join(cwd, "cache")
            argv = g.argv(tree.path, cache="none", cache_dir=cache
                          if "--no-cache" not in g.flags else None)
            log("  (memory run, untimed)")
            r = run_cmd(argv, cwd=cwd, env=gnn_env(cache), timeout=a.timeout,
                        sample_memory=True)
            info["mem_rc"] = str(r.rc) if not r.timed_out else "timeout"
            info["mem_largest_mb"] = f"{r.maxrss_kb / 1024:.0f}"
            info["mem_tree_mb"] = f"{r.peak_tree_rss_kb / 1024:.0f}"
            info["mem_procs"] = str(r.peak_procs)
            info["mem_seconds"] = f"{r.seconds:.2f}"
            fc = count_findings(r.stdout)
            if fc is not None and r.rc in GNNLINT_OK_RC:
                info["findings"] = str(fc)
            pc = parsed_count(r.stdout + "\n" + r.stderr)
            if pc is None and "--statistics" in g.flags:
                more = ["--statistics"]
                r2 = run_cmd(g.argv(tree.path, cache="none", more=more), cwd=cwd,
                             env=gnn_env(cache), timeout=a.timeout)
                pc = parsed_count(r2.stdout + "\n" + r2.stderr)
            info["parsed"] = pc or "not reported by gnnlint"
            mb = parsed_mb(r.stdout + "\n" + r.stderr)
            if mb is not None:
                info["parsed_mb"] = mb

    # memory floor: libcst on the largest file alone (untimed)
    largest = max(tree.files, key=lambda p: p.stat().st_size)
    one = b.workdir / f"largest-{T}.txt"
    one.write_text(f"{largest}\n", encoding="utf-8")
    r = run_cmd([py, str(FLOORS), "parse", str(one)], timeout=a.timeout)
    info["largest"] = (f"{largest.relative_to(tree.path.parent)} "
                       f"({largest.stat().st_size / 1e6:.2f} MB): libcst.parse_module alone "
                       f"peaks at {r.maxrss_kb / 1024:.0f} MB RSS")

    peer_repeat = min(a.peer_repeat or repeat, repeat)
    for i in range(repeat):
        log(f"-- {T} repeat {i + 1}/{repeat}")
        b.measure(s_read, [py, str(FLOORS), "read", str(tree.listfile)], label="floor: read")
        r = b.measure(s_parse, [py, str(FLOORS), "parse", str(tree.listfile)],
                      label="floor: libcst parse")
        if r.rc == 0 and "parse_errors" not in info:
            try:
                d = json.loads(r.stdout)
                info["parse_errors"] = str(d["errors"])
                info["parse_inner"] = f"{d['inner_seconds']:.2f}"
            except (ValueError, KeyError):
                pass
        if g.available:
            with tempfile.TemporaryDirectory(dir=b.workdir) as cwd:
                cache = os.path.join(cwd, "cache")
                nocache = "--no-cache" in g.flags
                b.measure(s_cold, g.argv(tree.path, cache="none",
                                         cache_dir=None if nocache else cache),
                          label="gnnlint cold", cwd=cwd,
                          env=gnn_env(None if nocache else cache))
            with tempfile.TemporaryDirectory(dir=b.workdir) as cwd:
                cache = os.path.join(cwd, "cache")
                argv = g.argv(tree.path, cache="dir", cache_dir=cache)
                b.measure(s_fill, argv, label="gnnlint first run (fills cache)",
                          cwd=cwd, env=gnn_env(cache))
                r = b.measure(s_warm, argv, label="gnnlint warm", cwd=cwd,
                              env=gnn_env(cache))
                m = re.search(r"(\d+)\s+files?\s+checked[^\n]{0,80}?(\d+)\s+from the cache",
                              r.stderr)
                if m:
                    info["warm_cached"] = f"{m.group(2)} of {m.group(1)}"
        if not s_ruff.skipped:
            b.measure(s_ruff, [peers["ruff"], "check", "--isolated", "--select", "E9",
                               "--no-cache", str(tree.path)], label="ruff")
        if i < peer_repeat and not s_tf.skipped:
            r = b.measure(s_tf, [peers["torchfix"], str(tree.path)], label="torchfix")
            m = re.search(r"Finished checking (\d+) files", r.stderr)
            if m:
                info["torchfix_files"] = m.group(1)
        if i < peer_repeat and not s_fx.skipped:
            r = b.measure(s_fx, [peers["fixit"], "--rules", FIXIT_RULE, "lint",
                                 str(tree.path)], label="fixit")
            m = re.search(r"(\d+) files? checked", r.stdout + r.stderr)
            if m:
                info["fixit_files"] = m.group(1)
            if r.rc is not None and r.rc & 2:
                info["fixit_rc"] = f"rc={r.rc} (some files errored)"


def bench_single(b: Bench, g: Gnnlint, small: Path, peers: dict[str, str | None],
                 repeat: int) -> Tree:
    tree = load_tree("one file", small)
    T = tree.name
    py = sys.executable
    log(f"\n== one small file: {small} ({tree.lines} lines)")
    s_py = b.get(T, "floor: interpreter start (python -c pass)", "floor")
    s_imp = b.get(T, "floor: python -c 'import libcst'", "floor")
    s_parse = b.get(T, "floor: libcst parse_module", "floor")
    s_g = b.get(T, "gnnlint check FILE --no-cache (whole process)", "gnnlint", GNNLINT_OK_RC)
    s_g2 = b.get(T, "gnnlint check SAMPLE --no-cache (parsed; has findings)", "gnnlint",
                 GNNLINT_OK_RC)
    s_ruff = b.get(T, "ruff check --select E9 --no-cache", "peer", {0, 1})
    sample = b.workdir / "one" / "precommit_sample.py"
    sample.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(SAMPLE, sample)
    if not g.available:
        s_g.skipped = "gnnlint CLI not available: " + g.probe_error
        s_g2.skipped = s_g.skipped
    if peers.get("ruff") is None:
        s_ruff.skipped = "ruff not found"
    listfile = b.workdir / "files-one.txt"
    listfile.write_text(f"{small}\n", encoding="utf-8")
    # warm-up (untimed)
    run_cmd([py, "-c", "import libcst"], timeout=120)
    if g.available:
        run_cmd(g.argv(small, cache="none"), cwd=b.workdir, env=g.env, timeout=120)
        r = run_cmd(g.argv(sample, cache="none"), cwd=b.workdir, env=g.env, timeout=120)
        n = count_findings(r.stdout)
        nlines = sample.read_bytes().count(b"\n")
        b.extra_info.setdefault(T, {})["sample"] = (
            f"SAMPLE = bench/precommit_sample.py.txt ({nlines} lines, copied as "
            f"{sample.name}): gnnlint rc {r.rc}, {n} findings")
    for i in range(repeat):
        log(f"-- one file repeat {i + 1}/{repeat}")
        b.measure(s_py, [py, "-c", "pass"], label="python -c pass")
        b.measure(s_imp, [py, "-c", "import libcst"], label="import libcst")
        b.measure(s_parse, [py, str(FLOORS), "parse", str(listfile)], label="libcst parse")
        if g.available:
            with tempfile.TemporaryDirectory(dir=b.workdir) as cwd:
                b.measure(s_g, g.argv(small, cache="none"), label="gnnlint one file",
                          cwd=cwd, env=g.env)
                b.measure(s_g2, g.argv(sample, cache="none"), label="gnnlint sample file",
                          cwd=cwd, env=g.env)
        if not s_ruff.skipped:
            b.measure(s_ruff, [peers["ruff"], "check", "--isolated", "--select", "E9",
                               "--no-cache", str(small)], label="ruff one file")
    return tree


# --------------------------------------------------------------------------- #
# report


def machine_info() -> list[str]:
    mem = "?"
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    mem = f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
                    break
    except OSError:
        pass
    cpu = platform.processor() or "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count()
    return [
        f"CPUs: {os.cpu_count()} ({usable} usable), {cpu}",
        f"memory: {mem}",
        f"OS: {platform.platform()}",
        f"python: {platform.python_version()} ({sys.executable})",
    ]


def report(b: Bench, trees: list[Tree], single: Tree | None, g: Gnnlint,
           peers: dict[str, str | None], started: _dt.datetime, elapsed: float) -> str:
    a = b.args
    out: list[str] = []
    w = out.append
    w(f"### gnnlint benchmark — {started.strftime('%Y-%m-%d %H:%M')} UTC")
    w("")
    w(f"- command: `{' '.join(['python', 'bench/run.py'] + sys.argv[1:])}` "
      f"(repeat {a.repeat}, total {elapsed / 60:.1f} min)")
    for line in machine_info():
        w(f"- {line}")
    w(f"- load average (1 min) at start {b.load[0]:.2f}, at end {os.getloadavg()[0]:.2f}"
      + (f"; CPU busy with other work just before each run: median "
         f"{statistics.median(b.busy):.0%}, max {max(b.busy):.0%} (waited up to "
         f"{a.idle_max_wait:.0f} s for < {a.idle_threshold:.0%})" if b.busy else "")
      + " — other work inflates wall times; medians and CPU seconds damp it")
    for t in trees:
        w(f"- tree {t.name}: {t.source or t.path}"
          + (" (linted as a byte-identical copy of its .py files in a temp dir)"
             if t.source else ""))
    w(f"- libcst {dist_version('libcst')}, torch {dist_version('torch')}, "
      f"torch_geometric {dist_version('torch_geometric')} (system env)")
    if g.available:
        w(f"- gnnlint: {g.label}, flags used: "
          f"`{' '.join(g.argv(Path('TREE'), cache='none')[3:])}`")
    else:
        w(f"- gnnlint: **not available** — {g.probe_error}")
    pv = []
    for tool in ("torchfix", "fixit", "ruff"):
        exe = peers.get(tool)
        if exe is None:
            pv.append(f"{tool}: not installed")
        else:
            pv.append(f"{tool} {b.extra_info.get('_versions', {}).get(tool, '?')}")
    lv = b.extra_info.get("_versions", {}).get("peer_libcst")
    w(f"- peers: {', '.join(pv)}" + (f" (peers' venv libcst {lv})" if lv else ""))
    w("- times: median wall seconds of whole processes (interpreter start included); "
      "CPU s = median user+sys of the process and its children (total work: "
      "less sensitive to other load than wall time, and not divided by workers); "
      "MB = 10^6 bytes of .py files; max RSS = largest single process (wait4; Linux "
      "counts the pre-exec fork of this script, so ~20 MB is the floor)")
    w("")

    all_trees = trees + ([single] if single else [])
    w("| tree | files | lines | MB | measurement | median s | min–max s | runs "
      "| × parse floor | peer ÷ gnnlint cold | CPU s | CPU × parse floor | max RSS MB |")
    w("|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for t in all_trees:
        parse = b.series.get((t.name, "floor: libcst parse_module"))
        pmed = parse.median() if parse else None
        pcpu = (statistics.median(r.cpu_seconds for r in parse.ok_runs())
                if parse and pmed else None)
        cold_key = ("gnnlint cold (--no-cache)" if t is not single
                    else "gnnlint check FILE --no-cache (whole process)")
        cold = b.series.get((t.name, cold_key))
        cmed = cold.median() if cold else None
        first = True
        for key in b.order:
            if key[0] != t.name:
                continue
            s = b.series[key]
            head = (f"| {t.name} | {len(t.files)} | {t.lines} | {t.mb:.2f} "
                    if first else "| | | | ")
            first = False
            if s.skipped:
                w(head + f"| {s.name} | n/a | | | | | | | |")
                continue
            med = s.median()
            ok = s.ok_runs()
            if med is None:
                fails = s.failed()
                why = ("timeout" if any(r.timed_out for r in fails)
                       else f"error rc={fails[0].rc}" if fails else "n/a")
                w(head + f"| {s.name} | {why} | | {len(s.runs)} | | | | | |")
                continue
            lo = min(r.seconds for r in ok)
            hi = max(r.seconds for r in ok)
            ratio = med / pmed if pmed and s is not parse else None
            speed = med / cmed if s.kind == "peer" and cmed else None
            rss = max(r.maxrss_kb for r in ok) / 1024
            cpu = statistics.median(r.cpu_seconds for r in ok)
            cpu_ratio = cpu / pcpu if pcpu and s is not parse else None
            w(head + f"| {s.name} | {fmt_s(med)} | {fmt_s(lo)}–{fmt_s(hi)} | {len(ok)} "
              f"| {fmt_ratio(ratio)} | {fmt_ratio(speed)} | {fmt_s(cpu)} "
              f"| {fmt_ratio(cpu_ratio)} | {rss:.0f} |")
    w("")

    skipped = [(k, b.series[k].skipped) for k in b.order if b.series[k].skipped]
    if skipped:
        reasons: dict[str, list[str]] = {}
        for (tree, name), why in skipped:
            reasons.setdefault(why, []).append(f"{tree}: {name}")
        w("Not measured:")
        for why, what in reasons.items():
            w(f"- {'; '.join(what)} — {why}")
        w("")

    # time per MB and the ratio between trees
    w("Time per MB (median s ÷ MB of .py source in the tree):")
    w("")
    w("| tree | MB | parse floor s/MB | gnnlint cold s/MB | gnnlint files parsed | MB parsed | "
      "gnnlint cold s per parsed MB |")
    w("|---|---:|---:|---:|---|---:|---:|")
    per_mb: dict[str, tuple[float | None, float | None, float | None]] = {}
    for t in trees:
        sp = b.series.get((t.name, "floor: libcst parse_module"))
        sc = b.series.get((t.name, "gnnlint cold (--no-cache)"))
        p = sp.median() if sp else None
        c = sc.median() if sc and not sc.skipped else None
        pp = p / t.mb if p else None
        cc = c / t.mb if c else None
        parsed = b.extra_info.get(t.name, {}).get("parsed", "n/a")
        mb_parsed = b.extra_info.get(t.name, {}).get("parsed_mb")
        cp = c / mb_parsed if c and mb_parsed else None
        per_mb[t.name] = (pp, cc, cp)
        w(f"| {t.name} | {t.mb:.2f} | {fmt_s(pp)} | {fmt_s(cc)} | {parsed} | "
          f"{'n/a' if mb_parsed is None else f'{mb_parsed:.2f}'} | {fmt_s(cp)} |")
    w("")
    if len(trees) >= 2:
        t0, t1 = trees[0].name, trees[1].name
        for i, what in ((0, "libcst parse floor"), (1, "gnnlint cold"),
                        (2, "gnnlint cold per parsed MB (the bytes it actually parses)")):
            x, y = per_mb[t1][i], per_mb[t0][i]
            r = f"{x / y:.2f}" if x and y else "n/a"
            w(f"- s/MB ratio {t1} ÷ {t0}, {what}: {r}")
        w("")

    # memory and other facts
    w("Per-tree facts:")
    w("")
    for t in trees:
        info = b.extra_info.get(t.name, {})
        facts = []
        if "mem_tree_mb" in info:
            facts.append(
                f"gnnlint cold memory run: rc {info['mem_rc']}, {info['mem_seconds']} s, "
                f"peak RSS largest process {info['mem_largest_mb']} MB, whole process "
                f"tree {info['mem_tree_mb']} MB (sampled every 50 ms, up to "
                f"{info['mem_procs']} processes)")
        if "largest" in info:
            facts.append(f"largest file {info['largest']}")
        if "warm_cached" in info:
            facts.append(f"gnnlint warm: {info['warm_cached']} files answered from the cache")
        if "findings" in info:
            facts.append(f"gnnlint findings: {info['findings']}")
        if "parse_errors" in info:
            facts.append(f"libcst parse floor: {info['parse_errors']} files failed to parse, "
                         f"loop alone {info['parse_inner']} s")
        if "torchfix_files" in info:
            facts.append(f"torchfix checked {info['torchfix_files']} files (it skips files "
                         "without the bytes `torch`)")
        if "fixit_files" in info:
            facts.append(f"fixit checked {info['fixit_files']} files")
        if "fixit_rc" in info:
            facts.append(f"fixit {info['fixit_rc']}")
        w(f"- {t.name}: " + ("; ".join(facts) if facts else "—"))
    if single and "sample" in b.extra_info.get(single.name, {}):
        w(f"- one file: FILE = {single.path.name} ({single.lines} lines); "
          + b.extra_info[single.name]["sample"])
    w("")

    # issue 6 targets
    w("Issue 6 targets:")
    w("")
    n = len(out)
    w_targets(b, trees, single, w)
    if len(out) == n:
        w("- (none apply to these trees)")

    # failures
    fails = [(k, r) for k in b.order for r in b.series[k].failed()]
    if fails:
        w("")
        w("Failures:")
        for (tree, name), r in fails[:10]:
            tail = (r.stderr or r.stdout).strip().splitlines()[-3:]
            w(f"- {tree} / {name}: {'timeout' if r.timed_out else f'rc={r.rc}'}: "
              + " | ".join(x.strip() for x in tail))
    return "\n".join(out) + "\n"


def w_targets(b: Bench, trees: list[Tree], single: Tree | None, w) -> None:
    def med(tree: str, name: str) -> float | None:
        s = b.series.get((tree, name))
        return s.median() if s and not s.skipped else None

    def verdict(ok: bool | None) -> str:
        return "n/a" if ok is None else ("PASS" if ok else "FAIL")

    pyg = "pyg" if any(t.name == "pyg" for t in trees) else None
    if pyg:
        p = med(pyg, "floor: libcst parse_module")
        c = med(pyg, "gnnlint cold (--no-cache)")
        wm = med(pyg, "gnnlint warm (cache, nothing changed)")
        tf = med(pyg, "torchfix")
        r = c / p if c and p else None
        w(f"- cold check of pyg ≤ 0.35 × parse floor: "
          f"{fmt_ratio(r) or 'n/a'} → {verdict(None if r is None else r <= 0.35)}")
        r = tf / c if tf and c else None
        w(f"- cold check of pyg ≥ 20 × faster than TorchFix: "
          f"{fmt_ratio(r) or 'n/a'} → {verdict(None if r is None else r >= 20)}")
        r = wm / p if wm and p else None
        w(f"- warm check of pyg ≤ 0.03 × parse floor: "
          f"{fmt_ratio(r) or 'n/a'} → {verdict(None if r is None else r <= 0.03)}")
    if single:
        for name, what in (("gnnlint check FILE --no-cache (whole process)",
                            f"{single.path.name}: library code, no compile"),
                           ("gnnlint check SAMPLE --no-cache (parsed; has findings)",
                            "precommit_sample.py: compiles a model, parsed")):
            s = med(single.name, name)
            w(f"- one small file ({what}), whole process ≤ 0.35 s: {fmt_s(s)} → "
              f"{verdict(None if s is None else s <= 0.35)}")
    if any(t.name == "torch" for t in trees):
        s = b.series.get(("torch", "gnnlint cold (--no-cache)"))
        done = None if s is None or s.skipped or not s.runs else not s.failed()
        w(f"- torch tree completes without error: {verdict(done)}")
        info = b.extra_info.get("torch", {})
        mb = info.get("mem_largest_mb")
        w(f"- torch tree peak memory per worker ≤ 400 MB: {mb or 'n/a'} MB → "
          f"{verdict(None if mb is None else float(mb) <= 400)}")
        ratios = []
        for tree in ("torch", "pyg"):
            c, mb_parsed = med(tree, "gnnlint cold (--no-cache)"), b.extra_info.get(tree, {}).get("parsed_mb")
            ratios.append(c / mb_parsed if c and mb_parsed else None)
        r = ratios[0] / ratios[1] if all(ratios) else None
        floor = [med(t, "floor: libcst parse_module") for t in ("torch", "pyg")]
        tmb = {t.name: t.mb for t in trees}
        fr = (floor[0] / tmb["torch"]) / (floor[1] / tmb["pyg"]) if all(floor) and "pyg" in tmb else None
        w(f"- torch tree cold time linear in the parsed bytes: s per parsed MB torch ÷ pyg "
          f"{fmt_ratio(r) or 'n/a (needs both trees)'} (the parse floor's s/MB ratio: {fmt_ratio(fr) or 'n/a'})")


# --------------------------------------------------------------------------- #


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("--tree", action="append", metavar="pyg|torch|PATH",
                    help="tree to lint (repeatable; default: pyg and torch)")
    ap.add_argument("--repeat", type=int, default=3, help="runs per measurement (median)")
    ap.add_argument("--peer-repeat", type=int, default=None,
                    help="runs of torchfix/fixit per tree (default: --repeat)")
    ap.add_argument("--slow-peers-on", default="pyg", metavar="TREES",
                    help="comma-separated tree names to run torchfix and fixit on, "
                         "'all' or 'none' (default: pyg; they take ~2 min on pyg and "
                         "~10x that on torch). ruff runs on every tree.")
    ap.add_argument("--single-repeat", type=int, default=10,
                    help="runs of the one-small-file measurements")
    ap.add_argument("--small-file", type=Path, default=None,
                    help=f"file for the pre-commit case (default: torch_geometric/"
                         f"{DEFAULT_SMALL_FILE})")
    ap.add_argument("--no-single", action="store_true", help="skip the one-file case")
    ap.add_argument("--quick", action="store_true",
                    help="pyg only, repeat 1, single-file repeat 3")
    ap.add_argument("--in-place", action="store_true",
                    help="lint the installed trees where they are instead of a "
                         "byte-identical copy in a temp dir (see copy_tree: the "
                         "installed trees are .gitignored by /root/.pyenv)")
    ap.add_argument("--peers-venv", type=Path, default=None,
                    help=f"take torchfix/fixit/ruff from VENV/bin (default: PATH, "
                         f"then {DEFAULT_PEERS_VENV}/bin)")
    ap.add_argument("--python", default=sys.executable,
                    help="interpreter that runs gnnlint (default: this one)")
    ap.add_argument("--gnnlint-rev", default="HEAD", metavar="REV",
                    help="benchmark the gnnlint package as committed at REV of this "
                         "repo, extracted to a temp dir (default: HEAD)")
    ap.add_argument("--gnnlint-src", type=Path, default=None, metavar="DIR",
                    help="instead, put DIR first on PYTHONPATH for `python -m gnnlint` "
                         "(e.g. . for the live working tree)")
    ap.add_argument("--jobs", default=None, help="pass --jobs N to gnnlint")
    ap.add_argument("--gnnlint-arg", action="append", default=[], metavar="ARG",
                    help="extra argument for every gnnlint check (repeatable)")
    ap.add_argument("--timeout", type=float, default=1800.0,
                    help="seconds before one process is killed (default 1800)")
    ap.add_argument("--idle-threshold", type=float, default=0.3, metavar="FRACTION",
                    help="before each timed run, wait until the CPUs are at most this "
                         "busy with other work (0.5 s sample; default 0.3; 1 = never wait)")
    ap.add_argument("--idle-max-wait", type=float, default=20.0, metavar="SECONDS",
                    help="longest wait for idle CPUs before a run (default 20)")
    ap.add_argument("--json", type=Path, default=None, help="write raw runs as JSON")
    ap.add_argument("--out", type=Path, default=None, help="also write the report here")
    a = ap.parse_args(argv)
    if a.quick:
        a.tree = a.tree or ["pyg"]
        a.repeat = 1
        a.single_repeat = min(a.single_repeat, 3)
    a.tree = a.tree or ["pyg", "torch"]
    if a.repeat < 1 or a.single_repeat < 1:
        ap.error("--repeat and --single-repeat must be >= 1")

    started = _dt.datetime.now(_dt.UTC)
    t_start = time.perf_counter()
    trees = [resolve_tree(t) for t in a.tree]
    if a.peers_venv is not None and not (a.peers_venv / "bin").is_dir():
        ap.error(f"--peers-venv {a.peers_venv}: no bin/ directory")
    peers = {tool: find_peer(tool, a.peers_venv) for tool in ("torchfix", "fixit", "ruff")}
    b = Bench(a)
    if a.gnnlint_src is not None:
        src = a.gnnlint_src.resolve()
        label = f"live source in {src}"
    else:
        src, short = snapshot_gnnlint(a.gnnlint_rev, b.workdir / "gnnlint-src")
        dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "gnnlint"],
                               capture_output=True, text=True, timeout=60,
                               check=False).stdout.strip()
        label = (f"commit {short} of {REPO} (snapshot"
                 + ("; the working tree had uncommitted changes, not measured)"
                    if dirty else ")"))
    g = probe_gnnlint(a.python, a.gnnlint_arg, a.jobs, src)
    g.label = label
    if not a.in_place:
        trees = [copy_tree(t, b.workdir / "trees") for t in trees]
    versions = b.extra_info.setdefault("_versions", {})
    for tool, exe in peers.items():
        if exe:
            versions[tool] = tool_version([exe, "--version"]).split()[-1]
            log(f"peer {tool}: {exe} ({versions[tool]})")
        else:
            log(f"peer {tool}: not found — skipped")
    libs = {venv_libcst_version(e) for t, e in peers.items() if e and t != "ruff"}
    libs.discard("?")
    if libs:
        versions["peer_libcst"] = ", ".join(sorted(libs))
    log("gnnlint: " + ("available" if g.available else f"n/a ({g.probe_error})"))

    slow_on = {x.strip() for x in a.slow_peers_on.split(",") if x.strip()}
    single = None
    try:
        for t in trees:
            bench_tree(b, t, g, peers, a.repeat,
                       slow_peers="all" in slow_on or t.name in slow_on)
        if not a.no_single:
            small = a.small_file
            if small is None:
                pyg_copy = next((t.path for t in trees
                                 if t.name == "pyg" and t.source is not None), None)
                pyg = pyg_copy or package_dir("torch_geometric")
                small = pyg / DEFAULT_SMALL_FILE if pyg else None
            if small is None or not small.is_file():
                log(f"one-file case skipped: {small} not found")
            else:
                single = bench_single(b, g, small.resolve(), peers, a.single_repeat)
    except KeyboardInterrupt:
        log("interrupted — reporting what was measured")
    finally:
        text = report(b, trees, single, g, peers, started, time.perf_counter() - t_start)
        print(text)
        if a.out:
            a.out.write_text(text, encoding="utf-8")
        if a.json:
            raw = {
                "started": started.isoformat(),
                "trees": [{"name": t.name, "path": str(t.path), "files": len(t.files),
                           "bytes": t.nbytes, "lines": t.lines} for t in trees],
                "series": [
                    {"tree": s.tree, "name": s.name, "kind": s.kind, "skipped": s.skipped,
                     "median": s.median(),
                     "runs": [{k: v for k, v in asdict(r).items()
                               if k not in ("stdout", "stderr")} for r in s.runs]}
                    for s in (b.series[k] for k in b.order)
                ],
                "info": b.extra_info,
            }
            a.json.write_text(json.dumps(raw, indent=1), encoding="utf-8")
        shutil.rmtree(b.workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
