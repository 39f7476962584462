"""The layout DESIGN.md and issue 14 ask for, checked: rules only ask the
context; semantic analyses never import the layers above them and do not
import each other in a cycle; modules and functions stay small (the
exceptions are listed, with reasons, in tests/size_allowlist.txt)."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "gnnlint"
MAX_MODULE_LINES = 700
MAX_FUNCTION_LINES = 80

# What a rule may import: the context (questions, kinds, call-argument
# helpers), other rule modules, and the version / PyG tables.
RULE_IMPORTS = ("gnnlint.context", "gnnlint.rules", "gnnlint.versions", "gnnlint.pyg_layers", "gnnlint.pyg_sizes")
ABOVE_SEMANTIC = ("gnnlint.context", "gnnlint.rules", "gnnlint.engine", "gnnlint.cli", "gnnlint.fix", "gnnlint.verify")


def _imports(tree: ast.Module, runtime_only: bool) -> list[str]:
    """Modules a file imports; ``runtime_only`` skips ``if TYPE_CHECKING:`` blocks."""
    skip: set[int] = set()
    if runtime_only:
        for node in ast.walk(tree):
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                skip.update(id(n) for n in ast.walk(node))
    found = []
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append(node.module)
            found += [f"{node.module}.{alias.name}" for alias in node.names if node.module == "gnnlint"]
    return found


def _rule_files() -> list[Path]:
    return sorted(p for p in (PKG / "rules").glob("gnn*.py"))


@pytest.mark.parametrize("path", _rule_files(), ids=lambda p: p.stem)
def test_rules_import_only_the_context(path: Path):
    tree = ast.parse(path.read_text())
    bad = [m for m in _imports(tree, runtime_only=False)
           if m.startswith("gnnlint") and m != "gnnlint" and not m.startswith(RULE_IMPORTS)]
    assert not bad, f"{path.name} imports {bad}: ask the context (gnnlint.context) instead"


@pytest.mark.parametrize("path", _rule_files(), ids=lambda p: p.stem)
def test_rules_ask_only_public_questions(path: Path):
    tree = ast.parse(path.read_text())
    private = sorted({ast.unparse(node) for node in ast.walk(tree)
                      if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__")
                      and ast.unparse(node.value) in ("ctx", "self.context", "context")})
    assert not private, f"{path.name} uses private context attributes {private}: add a public question"


def _semantic_graph() -> dict[str, set[str]]:
    graph = {}
    for path in sorted((PKG / "semantic").glob("*.py")):
        name = f"gnnlint.semantic.{path.stem}"
        mods = _imports(ast.parse(path.read_text()), runtime_only=True)
        graph[name] = mods
    return graph


def test_semantic_never_imports_the_layers_above_it_at_run_time():
    for name, mods in _semantic_graph().items():
        above = [m for m in mods if m.startswith(ABOVE_SEMANTIC)]
        assert not above, f"{name} imports {above} at run time (only under TYPE_CHECKING)"


def test_semantic_imports_have_no_cycle():
    semantic = _semantic_graph()  # parsed once (it was re-parsed for every import it was asked about)
    graph = {name: {m for m in mods if m in semantic} for name, mods in semantic.items()}
    # gnnlint.semantic.flow etc. may be imported as `from gnnlint.semantic import flow`
    for name, mods in semantic.items():
        graph[name] |= {f"gnnlint.semantic.{m.split('.')[-1]}" for m in mods
                        if m.startswith("gnnlint.semantic.") and f"gnnlint.semantic.{m.split('.')[-1]}" in graph}
    state: dict[str, int] = {}

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in graph[node] - {node}:
            assert state.get(nxt) != 1, "import cycle: " + " -> ".join(path + [node, nxt])
            if nxt not in state:
                visit(nxt, path + [node])
        state[node] = 2

    for node in graph:
        if node not in state:
            visit(node, [])


def _allowlist() -> set[tuple[str, ...]]:
    allowed = set()
    for line in (Path(__file__).parent / "size_allowlist.txt").read_text().splitlines():
        line = line.split("--")[0].strip()
        if line and not line.startswith("#"):
            allowed.add(tuple(line.split()))
    return allowed


def _oversized() -> set[tuple[str, ...]]:
    found = set()
    for path in sorted(PKG.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        text = path.read_text()
        if len(text.splitlines()) > MAX_MODULE_LINES:
            found.add(("module", rel))
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) \
                    and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES:
                found.add(("function", rel, node.name))
    return found


def test_modules_and_functions_stay_small():
    oversized, allowed = _oversized(), _allowlist()
    new = sorted(oversized - allowed)
    assert not new, f"over {MAX_MODULE_LINES} lines per module / {MAX_FUNCTION_LINES} per function: {new} " \
                    "(split it, or list it in tests/size_allowlist.txt with a reason)"
    stale = sorted(allowed - oversized)
    assert not stale, f"no longer oversized, remove from tests/size_allowlist.txt: {stale}"
