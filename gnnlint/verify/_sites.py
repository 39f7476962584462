"""Where and how the project's source calls ``torch.compile`` (an ``ast`` scan).

Used by the verify child to compile the model with the user's options. The
whole-project index (``gnnlint.project_index``) is preferred for the model's
class when it is available; this scan is the fallback for that and the only
source for "is an optimizer step compiled" and "does the code compile
anything at all".
"""
from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

_PASSTHROUGH = {"to", "cuda", "cpu", "train", "eval", "float", "double", "half", "share_memory",
                "requires_grad_", "to_empty", "type"}


class _Scanner:
    def __init__(self, path: Path, tree: ast.AST) -> None:
        self.path = str(path.resolve())
        self.tree = tree
        self.compile_names: set[str] = set()  # bare names bound to torch.compile
        self.torch_names: set[str] = set()  # names bound to the torch module
        self.assigns: dict[str, list[tuple[int, ast.expr]]] = {}
        self.functions: dict[str, ast.FunctionDef] = {}
        self.mark_dynamic = False
        self.sites: list[dict] = []
        self.steps: list[dict] = []

    # -- bindings
    def collect(self) -> None:
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.name == "torch":
                        self.torch_names.add(a.asname or "torch")
                    if a.name == "torch_geometric":
                        self.torch_names.add(a.asname or "torch_geometric")
            elif isinstance(node, ast.ImportFrom) and node.module in ("torch", "torch_geometric"):
                for a in node.names:
                    if a.name == "compile":
                        self.compile_names.add(a.asname or "compile")
            elif isinstance(node, ast.Assign):
                for t in node.targets:
                    key = _target_key(t)
                    if key:
                        self.assigns.setdefault(key, []).append((node.lineno, node.value))
                        if self.is_compile_func(node.value):
                            self.compile_names.add(key)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.functions[node.name] = node  # type: ignore[assignment]
            elif isinstance(node, ast.Attribute) and node.attr in ("mark_dynamic", "maybe_mark_dynamic"):
                self.mark_dynamic = True
        if not self.torch_names:
            self.torch_names.add("torch")

    def is_compile_func(self, f: ast.expr) -> bool:
        if isinstance(f, ast.Name):
            return f.id in self.compile_names
        if isinstance(f, ast.Attribute) and f.attr == "compile":
            base = f.value
            if isinstance(base, ast.Name) and base.id in self.torch_names:
                return True
        return False

    # -- resolution
    def class_of(self, expr: ast.expr, before: int, depth: int = 0) -> str | None:
        if depth > 6:
            return None
        if isinstance(expr, ast.Call):
            f = expr.func
            if isinstance(f, ast.Attribute) and f.attr in _PASSTHROUGH:
                return self.class_of(f.value, before, depth + 1)
            if isinstance(f, ast.Name) and f.id[:1].isupper():
                return f.id
            if isinstance(f, ast.Attribute) and f.attr[:1].isupper():
                return f.attr
            if isinstance(f, ast.Name) and f.id in ("to_hetero", "to_hetero_with_bases") and expr.args:
                return self.class_of(expr.args[0], before, depth + 1)
            return None
        key = _target_key(expr)
        if key and key in self.assigns:
            cands = [v for (ln, v) in self.assigns[key] if ln <= before] or [v for _, v in self.assigns[key]]
            for v in reversed(cands):
                if self.is_compile_call(v):
                    continue
                c = self.class_of(v, before, depth + 1)
                if c:
                    return c
        return None

    def is_compile_call(self, node: ast.AST) -> bool:
        return isinstance(node, ast.Call) and self.is_compile_func(node.func)

    def options(self, call: ast.Call | None) -> dict[str, Any]:
        opts: dict[str, Any] = {"mode": None, "dynamic": None, "fullgraph": False, "options": None}
        if call is None:
            return opts
        for kw in call.keywords:
            if kw.arg in ("mode", "dynamic", "fullgraph", "options"):
                try:
                    opts[kw.arg] = ast.literal_eval(kw.value)
                except (ValueError, SyntaxError):
                    pass
        return opts

    # -- sites
    def scan(self) -> None:
        self.collect()
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Call):
                if self.is_compile_func(node.func):
                    arg = node.args[0] if node.args else None
                    self.add_site(node, arg, node)
                elif (isinstance(node.func, ast.Attribute) and node.func.attr == "compile"
                      and not (isinstance(node.func.value, ast.Name)
                               and node.func.value.id in {"re", "regex"} | self.torch_names)):
                    # model.compile(...)
                    self.add_site(node, node.func.value, node)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for dec in node.decorator_list:
                    call = dec if isinstance(dec, ast.Call) else None
                    func = dec.func if isinstance(dec, ast.Call) else dec
                    if self.is_compile_func(func):
                        site = self.site(dec, call)
                        site["function"] = node.name
                        self.sites.append(site)
                        if _calls_step(node):
                            self.steps.append(site)

    def site(self, node: ast.AST, call: ast.Call | None) -> dict:
        s = {"path": self.path, "line": node.lineno, "mark_dynamic": self.mark_dynamic, "via": "ast"}
        s.update(self.options(call))
        return s

    def add_site(self, node: ast.Call, arg: ast.expr | None, call: ast.Call) -> None:
        site = self.site(node, call)
        self.sites.append(site)
        if arg is None:
            return
        if isinstance(arg, ast.Attribute) and arg.attr == "step":
            self.steps.append(site)
            return
        if isinstance(arg, ast.Name) and arg.id in self.functions:
            site["function"] = arg.id
            if _calls_step(self.functions[arg.id]):
                self.steps.append(site)
            return
        cls = self.class_of(arg, node.lineno)
        if cls:
            site["class"] = cls


def _target_key(t: ast.expr) -> str | None:
    if isinstance(t, ast.Name):
        return t.id
    if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name):
        return f"{t.value.id}.{t.attr}"
    return None


def _calls_step(fn: ast.AST) -> bool:
    for n in ast.walk(fn):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "step":
            recv = n.func.value
            name = recv.id if isinstance(recv, ast.Name) else (recv.attr if isinstance(recv, ast.Attribute) else "")
            if "sched" not in name.lower():
                return True
    return False


def scan_files(files: list[Path]) -> dict[str, Any]:
    classes: dict[str, dict] = {}
    step = None
    anything = False
    notes: list[str] = []
    for path in files:
        try:
            src = Path(path).read_text(encoding="utf-8")
        except OSError:
            continue
        if "compile" not in src:
            continue
        try:
            tree = ast.parse(src)
        except SyntaxError as e:
            notes.append(f"{path}: not parsed ({e.msg})")
            continue
        s = _Scanner(Path(path), tree)
        s.scan()
        if s.sites:
            anything = True
        for site in s.sites:
            if site.get("class"):
                classes.setdefault(site["class"], site)
        if s.steps and step is None:
            step = s.steps[0]
    return {"classes": classes, "step": step, "any": anything, "notes": notes}
