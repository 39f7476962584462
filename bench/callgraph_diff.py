"""What the project call graph reaches that today's regions do not, crossed with the labels.

    PYTHONPATH=$PWD python bench/callgraph_diff.py --set h10 --corpus /work/heldout10/corpus \
        --labels bench/realcode/labels/heldout10 --score /work/realcode/score_i12c_h10.txt [--out rows.tsv]

Per repository: lint it with ``GNNLINT_CALLGRAPH_DUMP`` (today's compiled / hot / step-drive
lines, per file), build every file's summary (gnnlint/semantic/summaries.py), solve the graph
(gnnlint/call_graph.py) strict and with *possible* callees, and classify each labelled line of a
region rule: graph region (compiled: in a function a compiled entry reaches; per step: in the
body of a loop that reaches compiled code, or in what such a loop calls) vs today's region.
A labelled miss is a true label the score file lists as FN. Nothing is changed in gnnlint.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

import libcst as cst

sys.setrecursionlimit(10000)

_SKIP_DIRS = {".git", "node_modules", "__pycache__", ".venv", "venv", "site-packages", "build", "dist"}
# the rules whose findings need a region: GNN001 (compiled or per step; GNN013 scored as GNN001)
_COMPILED_RULES = {"GNN008", "GNN009", "GNN020", "GNN005", "GNN016", "GNN014"}


def lint_with_dump(repo_dir: str, src: str, folder: str) -> None:
    env = dict(os.environ, GNNLINT_CALLGRAPH_DUMP=folder, PYTHONPATH=src)
    subprocess.run([sys.executable, "-m", "gnnlint", "check", ".", "--output-format", "json", "--exit-zero",
                    "--isolated", "--no-cache", "-q"], cwd=repo_dir, env=env, capture_output=True, timeout=1800)


def python_files(repo_dir: str) -> list:
    out = []
    for root, dirs, files in os.walk(repo_dir):
        dirs[:] = [d for d in dirs if d not in _SKIP_DIRS and not d.startswith(".")]
        out += [os.path.join(root, f) for f in files if f.endswith(".py")]
    return sorted(out)


def summary_of(path: str) -> dict | None:
    from gnnlint.facts import ContextOptions, ProjectFacts
    from gnnlint.positions import finder_for
    from gnnlint.semantic.model import SemanticModel
    from gnnlint.semantic.names import Names
    from gnnlint.semantic.summaries import summarize

    class Model(SemanticModel, Names):  # the summary asks only the model and its names (no regions)
        pass

    try:
        data = open(path, "rb").read()
        if len(data) > 2_000_000:
            return None
        text = data.decode("utf-8", errors="replace")
        module = cst.parse_module(data)
        ctx = Model(module, path, ProjectFacts(), ContextOptions())
        finder = finder_for(module, data, text, ctx.parent)
    except Exception:
        return None

    def span(node):
        if finder is None:
            return None
        twin = finder.twin.get(node)
        return (twin.lineno, twin.end_lineno) if twin is not None else None
    try:
        return summarize(ctx, span)
    except Exception:
        return None


def graph_status(graph, summaries: dict, path: str, line: int) -> tuple:
    """(compiled, per_step, driving-loop) for a line of ``path``; also the function's qualname."""
    summary = summaries.get(path)
    if summary is None:
        return False, False, None
    best = None
    for qual, func in summary["funcs"].items():
        span = func.get("span")
        if span and span[0] <= line <= span[1] and (best is None or span[1] - span[0] < best[1]):
            best = (qual, span[1] - span[0])
    if best is None:
        return False, False, None
    qual = best[0]
    compiled = hot = False
    parts = qual.split(".")
    for cut in range(len(parts), 0, -1):  # a nested function: its parents' region too
        key = (path, ".".join(parts[:cut]))
        if key not in graph.funcs:
            continue
        compiled = compiled or key in graph.compiled
        hot = hot or key in graph.per_step
        loops = graph.funcs[key]["loops"]
        for index in graph.driving.get(key, ()):
            start, end = loops[index][0], loops[index][1]
            if start < line <= end or start == line and False:
                hot = True
    return compiled, hot, qual


def fn_keys(score_file: str) -> set:
    out = set()
    if not os.path.exists(score_file):
        return out
    for raw in open(score_file):
        if raw.startswith("FN "):
            parts = raw.split()
            if len(parts) >= 3:
                out.add((parts[1], parts[2]))
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--set", required=True)
    parser.add_argument("--corpus", required=True)
    parser.add_argument("--labels", required=True)
    parser.add_argument("--score", required=True)
    parser.add_argument("--src", default=os.getcwd())
    parser.add_argument("--out")
    parser.add_argument("--repo")
    args = parser.parse_args()
    from gnnlint.call_graph import CallGraph
    from gnnlint.module_map import ModuleMap

    misses = fn_keys(args.score)
    rows = []
    repos = sorted(f[:-5] for f in os.listdir(args.labels) if f.endswith(".json"))
    for repo in repos:
        if args.repo and repo != args.repo:
            continue
        repo_dir = os.path.join(args.corpus, repo)
        if not os.path.isdir(repo_dir):
            continue
        labels = json.load(open(os.path.join(args.labels, repo + ".json")))
        with tempfile.TemporaryDirectory() as folder:
            lint_with_dump(repo_dir, args.src, folder)
            dumps = {}
            for name in os.listdir(folder):
                entry = json.load(open(os.path.join(folder, name)))
                dumps[os.path.normpath(os.path.join(repo_dir, entry["path"]))] = entry
        paths = python_files(repo_dir)
        summaries = {}
        for path in paths:
            entry = dumps.get(os.path.normpath(path))
            summary = entry["summary"] if entry is not None else summary_of(path)
            if summary is not None:
                summaries[path] = summary
        modules = ModuleMap(list(summaries))
        graphs = {mode: CallGraph(summaries, modules, possible=mode) for mode in (False, True, ("cfg",))}
        for label in labels:
            rule = label.get("rule")
            if rule not in ("GNN001", "GNN013") and rule not in _COMPILED_RULES:
                continue
            path = os.path.normpath(os.path.join(repo_dir, label["file"]))
            line = int(label["line"])
            today = dumps.get(path, {}).get("today", {"c": [], "h": [], "d": []})
            t_c, t_d = line in today["c"], line in today["d"]
            key = (f"{repo}:{label['file']}:{line}", "GNN001" if rule == "GNN013" else rule)
            status = {}
            for mode, graph in graphs.items():
                g_c, g_h, qual = graph_status(graph, summaries, path, line)
                status[mode] = (g_c, g_h, qual)
            if rule in ("GNN001", "GNN013"):
                today_in = t_c or t_d
                strict, loose, cfg = (status[m][0] or status[m][1] for m in (False, True, ("cfg",)))
            else:
                today_in = t_c
                strict, loose, cfg = (status[m][0] for m in (False, True, ("cfg",)))
            kind = "miss" if label.get("hazard") and key in misses else ("hit" if label.get("hazard") else "false")
            rows.append([args.set, repo, label["file"], line, rule, kind, int(today_in), int(strict), int(loose),
                         status[True][2] or "", int(t_c), int(t_d), int(status[False][0]), int(status[False][1]),
                         int(cfg)])
        print(f"{repo}: {len(summaries)} files, reaches {len(graphs[False].reaches)} / {len(graphs[True].reaches)}",
              file=sys.stderr)
    header = ["set", "repo", "file", "line", "rule", "kind", "today", "graph", "graph_possible", "function",
              "today_compiled", "today_drive", "graph_compiled", "graph_step", "graph_cfg"]
    if args.out:
        with open(args.out, "w") as handle:
            handle.write("\t".join(header) + "\n")
            for row in rows:
                handle.write("\t".join(map(str, row)) + "\n")
    table(rows, args.set)


def table(rows: list, name: str) -> None:
    def count(kind, pred):
        return sum(1 for r in rows if r[5] == kind and pred(r))
    new_s = lambda r: r[7] and not r[6]
    new_p = lambda r: r[8] and not r[6]
    lost = lambda r: r[6] and not r[8]
    print(f"{name}\tmisses {count('miss', lambda r: True)}\tnew(strict) {count('miss', new_s)}\t"
          f"new(possible) {count('miss', new_p)}\t| false {count('false', lambda r: True)}\t"
          f"new(strict) {count('false', new_s)}\tnew(possible) {count('false', new_p)}\t"
          f"| hits {count('hit', lambda r: True)} today-not-graph {count('hit', lost)}\t"
          f"misses today-region {count('miss', lambda r: r[6])}")


if __name__ == "__main__":
    main()
