#!/usr/bin/env bash
# Instruction count (valgrind callgrind) of a gnnlint cold run over the files of
# torch_geometric that a cold `gnnlint check` parses -- the load-independent
# measure of issue 10's speed bound (per-file analysis cost, pre vs now).
#
#   bench/callgrind.sh [-p] [-t [-j N]] [-w WORKDIR] [-f FILELIST] SRC OUT
#
#   SRC       a gnnlint source tree (the directory holding gnnlint/), e.g. a
#             worktree or `git archive REV | tar -x -C DIR`
#   OUT       callgrind output file; the total instruction count is printed
#   -p        bytecode cached (what users run, and what bench/run.py measures):
#             PYTHONDONTWRITEBYTECODE unset, PYTHONPYCACHEPREFIX=WORKDIR/pyc/<hash of SRC>,
#             one untimed warm-up run first. Without -p, every run compiles
#             gnnlint's own source when PYTHONDONTWRITEBYTECODE=1 is set.
#   -w DIR    work directory (default ${TMPDIR:-/tmp}/gnnlint-callgrind): the
#             tree copy, the file list, the bytecode caches, an empty cwd
#   -t        the whole tree, as users run it: `check torch_geometric -n -j 1` from the tree, project
#             facts on (which files get parsed is then part of what is measured; the file-list mode
#             hides a change in that count, and the fact joins). -f is ignored.
#   -j N      with -t: N worker processes (default 1); the count is the sum over the run's
#             processes (one OUT.<pid>[.<part>] file each): what two workers cost in all, the
#             work they repeat included. A forked child inherits its parent's counters, so
#             callgrind dumps (and zeroes) them just before each fork (--dump-before=_Fork,
#             glibc's fork): the parts add up to the run's instructions, each counted once
#   -f FILE   file list (absolute paths, one a line). Default WORKDIR/files.txt;
#             if it does not exist it is made by a cold run of SRC over the
#             tree (`check TREE -n -j 1`, every file lint_bytes reports parsed).
#             Measure two trees on the SAME list: make it once, with the newer
#             tree (it parses a superset), then pass it to both.
#
# Environment: PYTHON (default python3) must import torch_geometric and libcst.
# The tree is a copy of torch_geometric's .py files (as bench/run.py copies it:
# outside any git repository, so .gitignore rules do not hide it).
# Command measured:
#   valgrind --tool=callgrind python -m gnnlint check FILES -n --no-project-facts -j 1
set -euo pipefail

pyc=0; work="${TMPDIR:-/tmp}/gnnlint-callgrind"; list=""; tree=0; jobs=1
while getopts "ptw:f:j:" o; do
  case $o in
    p) pyc=1 ;;
    t) tree=1 ;;
    w) work=$OPTARG ;;
    f) list=$OPTARG ;;
    j) jobs=$OPTARG ;;
    *) sed -n '2,34p' "$0"; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[ $# -eq 2 ] || { sed -n '2,34p' "$0"; exit 2; }
src=$(cd "$1" && pwd); out=$(realpath -m "$2")
py=${PYTHON:-python3}
[ -d "$src/gnnlint" ] || { echo "error: $src has no gnnlint/" >&2; exit 2; }
mkdir -p "$work/cwd"; work=$(cd "$work" && pwd)

# the tree: torch_geometric's .py files, copied once
if [ ! -d "$work/tree/torch_geometric" ]; then
  pkg=$("$py" -c 'import importlib.util as u; print(next(iter(u.find_spec("torch_geometric").submodule_search_locations)))')
  (cd "$pkg" && find . -name '*.py' -not -path '*/__pycache__/*' -print0) |
    while IFS= read -r -d '' f; do
      mkdir -p "$work/tree/torch_geometric/$(dirname "$f")"
      cp "$pkg/$f" "$work/tree/torch_geometric/$f"
    done
fi

# the file list: what a cold run of SRC parses
list=${list:-$work/files.txt}
if [ $tree = 1 ]; then
  envs=(env PYTHONPATH="$src")
  if [ $pyc = 1 ]; then
    envs=(env -u PYTHONDONTWRITEBYTECODE PYTHONPATH="$src"
          PYTHONPYCACHEPREFIX="$work/pyc/$(printf %s "$src" | md5sum | cut -c1-12)")
    (cd "$work/tree" && "${envs[@]}" "$py" -m gnnlint check torch_geometric -n -j 1 -e -q >/dev/null)
  fi
  cd "$work/tree"
  if [ "$jobs" = 1 ]; then
    "${envs[@]}" valgrind --tool=callgrind --callgrind-out-file="$out" \
      "$py" -m gnnlint check torch_geometric -n -j 1 -e -q -v >"$out.findings" 2>"$out.log"
    total=$(sed -n 's/^summary: *//p; s/^totals: *//p' "$out" | head -1)
  else
    rm -f "$out".[0-9]*
    "${envs[@]}" valgrind --tool=callgrind --trace-children=yes --dump-before=_Fork --callgrind-out-file="$out.%p" \
      "$py" -m gnnlint check torch_geometric -n -j "$jobs" -e -q -v >"$out.findings" 2>"$out.log"
    total=$(for f in "$out".[0-9]*; do sed -n 's/^summary: *//p; s/^totals: *//p' "$f" | head -1; done |
            awk '{s += $1} END {print s}')
  fi
  echo "$out: $total instructions ($(wc -l < "$out.findings") finding lines; pyc=$pyc; -j $jobs; whole tree: $(grep 'files checked' "$out.log"))"
  exit 0
fi
if [ ! -s "$list" ]; then
  (cd "$work/tree" && LISTPARSED_OUT="$list" PYTHONPATH="$src" "$py" - check torch_geometric -n -j 1 -e -q -v \
     >/dev/null 2>"$work/list.err" <<'PY'
import atexit, os, sys
import gnnlint.engine as engine
_lint, seen = engine.lint_bytes, set()
def lint_bytes(path, data, *a, **k):  # the one place a file is handed to libcst
    r = _lint(path, data, *a, **k)
    if r.parsed:
        seen.add(os.path.abspath(path))
    return r
engine.lint_bytes = lint_bytes
atexit.register(lambda: open(os.environ["LISTPARSED_OUT"], "w").write("".join(p + "\n" for p in sorted(seen))))
from gnnlint.cli import main
sys.argv[0] = "gnnlint"
main()
PY
  )
  echo "file list: $list ($(wc -l < "$list") files; $(grep 'files checked' "$work/list.err"))" >&2
fi
mapfile -t files < "$list"

envs=(env PYTHONPATH="$src")
if [ $pyc = 1 ]; then
  envs=(env -u PYTHONDONTWRITEBYTECODE PYTHONPATH="$src"
        PYTHONPYCACHEPREFIX="$work/pyc/$(printf %s "$src" | md5sum | cut -c1-12)")
  (cd "$work/cwd" && "${envs[@]}" "$py" -m gnnlint check "${files[@]}" -n --no-project-facts -j 1 -e -q >/dev/null)
fi
cd "$work/cwd"
"${envs[@]}" valgrind --tool=callgrind --callgrind-out-file="$out" \
  "$py" -m gnnlint check "${files[@]}" -n --no-project-facts -j 1 -e -q >"$out.findings" 2>"$out.log"
total=$(sed -n 's/^summary: *//p; s/^totals: *//p' "$out" | head -1)
echo "$out: $total instructions ($(wc -l < "$out.findings") finding lines; pyc=$pyc; $(wc -l < "$list") files)"
