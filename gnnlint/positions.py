"""Positions of the few nodes a file reports, without a whole-file codegen.

libcst computes positions by regenerating the source of the whole module in
Python — for a large file with one finding that costs more than parsing it.
Python's own parser (C, fast) knows where every *statement* starts; the
statements of the two trees correspond one to one in source order. So for a
reported node we regenerate only its enclosing small statement (or the
header expression of a compound statement), starting the position counter at
the statement's start from ``ast``. The result is checked against ``ast``'s
end position of the same statement; any mismatch (or any tree shape we do
not recognise) returns None and the caller falls back to libcst's full pass.
"""
from __future__ import annotations

import ast
import re
from typing import Iterable, Optional

import libcst as cst
from libcst._position import CodePosition, CodeRange
from libcst.metadata.position_provider import PositionProvidingCodegenState

_NEWLINE = re.compile(r"\r\n?|\n")

# libcst statement class -> the ast statement classes it corresponds to
_SAME = {
    "Del": ("Delete",), "For": ("For", "AsyncFor"), "With": ("With", "AsyncWith"),
    "FunctionDef": ("FunctionDef", "AsyncFunctionDef"),
}


class _Recorder:
    """Stands in for the metadata provider the codegen state writes into."""

    def __init__(self) -> None:
        self._computed: dict = {}


def _cst_suite(suite, out: list) -> None:
    if isinstance(suite, cst.SimpleStatementSuite):
        out.extend(suite.body)
    else:
        _cst_stmts(suite.body, out)


def _cst_stmts(body, out: list) -> None:
    for stmt in body:
        if isinstance(stmt, cst.SimpleStatementLine):
            out.extend(stmt.body)
        else:
            out.append(stmt)
            _cst_blocks(stmt, out)


def _cst_blocks(stmt, out: list) -> None:
    if isinstance(stmt, cst.If):
        _cst_suite(stmt.body, out)
        if isinstance(stmt.orelse, cst.If):
            out.append(stmt.orelse)
            _cst_blocks(stmt.orelse, out)
        elif stmt.orelse is not None:
            _cst_suite(stmt.orelse.body, out)
    elif isinstance(stmt, (cst.For, cst.While)):
        _cst_suite(stmt.body, out)
        if stmt.orelse is not None:
            _cst_suite(stmt.orelse.body, out)
    elif isinstance(stmt, (cst.Try, cst.TryStar)):
        _cst_suite(stmt.body, out)
        for handler in stmt.handlers:
            _cst_suite(handler.body, out)
        if stmt.orelse is not None:
            _cst_suite(stmt.orelse.body, out)
        if stmt.finalbody is not None:
            _cst_suite(stmt.finalbody.body, out)
    elif isinstance(stmt, cst.Match):
        for case in stmt.cases:
            _cst_suite(case.body, out)
    elif hasattr(stmt, "body"):  # With, FunctionDef, ClassDef
        _cst_suite(stmt.body, out)


def _ast_stmts(body, out: list) -> None:
    for stmt in body:
        out.append(stmt)
        if isinstance(stmt, ast.Match):
            for case in stmt.cases:
                _ast_stmts(case.body, out)
            continue
        if isinstance(getattr(stmt, "body", None), list):
            _ast_stmts(stmt.body, out)
        for handler in getattr(stmt, "handlers", ()):
            _ast_stmts(handler.body, out)
        if isinstance(getattr(stmt, "orelse", None), list):
            _ast_stmts(stmt.orelse, out)
        if isinstance(getattr(stmt, "finalbody", None), list):
            _ast_stmts(stmt.finalbody, out)


def _header_pairs(stmt: cst.CSTNode, node: ast.AST) -> list[tuple[cst.CSTNode, ast.AST]]:
    """Header expressions of a compound statement and their ast twins."""
    if isinstance(stmt, (cst.If, cst.While)):
        return [(stmt.test, node.test)]
    if isinstance(stmt, cst.For):
        return [(stmt.target, node.target), (stmt.iter, node.iter)]
    if isinstance(stmt, cst.With):
        pairs = []
        for item, ast_item in zip(stmt.items, node.items):
            pairs.append((item.item, ast_item.context_expr))
        return pairs
    if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
        return [(d.decorator, a) for d, a in zip(stmt.decorators, node.decorator_list)]
    return []


class PositionFinder:
    def __init__(self, module: cst.Module, data: bytes, text: str, parent: dict) -> None:
        self.module = module
        self.parent = parent
        self.lines = _NEWLINE.split(text)
        tree = compile(data, "<gnnlint>", "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
        cst_list: list = []
        ast_list: list = []
        _cst_stmts(module.body, cst_list)
        _ast_stmts(tree.body, ast_list)
        if len(cst_list) != len(ast_list):
            raise ValueError("statement lists differ")
        for c, a in zip(cst_list, ast_list):
            name = type(c).__name__
            if type(a).__name__ not in _SAME.get(name, (name,)):
                raise ValueError(f"statement kinds differ: {name} / {type(a).__name__}")
        self.twin = {c: a for c, a in zip(cst_list, ast_list)}

    def _col(self, line: int, byte_col: int) -> int:
        """ast's UTF-8 byte column -> libcst's character column."""
        text = self.lines[line - 1] if line - 1 < len(self.lines) else ""
        if text.isascii():
            return byte_col
        return len(text.encode("utf-8")[:byte_col].decode("utf-8", errors="replace"))

    def _root(self, node: cst.CSTNode) -> Optional[tuple[cst.CSTNode, ast.AST]]:
        child = node
        current = node
        while current is not None:
            if current in self.twin:
                twin = self.twin[current]
                if isinstance(current, cst.BaseSmallStatement):
                    return current, twin
                for expr, ast_expr in _header_pairs(current, twin):
                    if expr is child:
                        return expr, ast_expr
                return None
            child = current
            current = self.parent.get(current)
        return None

    def first_line(self, stmt: cst.CSTNode) -> Optional[int]:
        """The line a statement starts on (where its ``# noqa`` goes)."""
        if isinstance(stmt, cst.SimpleStatementLine) and stmt.body:
            twin = self.twin.get(stmt.body[0])
        else:
            twin = self.twin.get(stmt)
        return twin.lineno if twin is not None else None

    def ranges(self, nodes: Iterable[cst.CSTNode]) -> Optional[dict]:
        out: dict = {}
        done: dict = {}
        for node in nodes:
            found = self._root(node)
            if found is None:
                return None
            root, twin = found
            computed = done.get(root)
            if computed is None:
                computed = self._codegen(root, twin)
                if computed is None:
                    return None
                done[root] = computed
            if node not in computed:
                return None
            out[node] = computed[node]
        return out

    def _codegen(self, root: cst.CSTNode, twin: ast.AST) -> Optional[dict]:
        recorder = _Recorder()
        state = PositionProvidingCodegenState(
            default_indent=self.module.default_indent,
            default_newline=self.module.default_newline,
            provider=recorder,  # type: ignore[arg-type]
        )
        state.line = twin.lineno
        state.column = self._col(twin.lineno, twin.col_offset)
        root._codegen(state)
        rng = recorder._computed.get(root)
        end_line = getattr(twin, "end_lineno", None)
        if rng is None or end_line is None:
            return None
        want = CodeRange(CodePosition(twin.lineno, self._col(twin.lineno, twin.col_offset)),
                         CodePosition(end_line, self._col(end_line, twin.end_col_offset)))
        if rng != want:
            return None  # e.g. a parenthesised header expression: use the full pass
        return recorder._computed


def finder_for(module: cst.Module, data: bytes, text: str, parent: dict) -> Optional[PositionFinder]:
    """A PositionFinder, or None when the two trees do not line up."""
    try:
        return PositionFinder(module, data, text, parent)
    except (ValueError, SyntaxError, AttributeError, IndexError, RecursionError):
        return None
