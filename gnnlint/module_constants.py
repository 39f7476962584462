"""The literal a project module binds a top-level name to (``compile_mode = "max-autotune"`` in
config.py), read from the module's bytes for the files importing it (the engine's
``imported_constants`` join; semantic/imported_constants.py asks). Python's own parser, only for the
few files whose constants another file reads as a compile option."""
from __future__ import annotations

import ast
from typing import Optional

_LITERALS = (str, bool, int, float, type(None))


def module_literal(data: bytes, name: str) -> Optional[str]:
    """``repr`` of the literal every module-level binding of ``name`` gives (the last plain one at the top,
    and any inside a module-level ``if`` / ``try`` agreeing with it), or None: not bound to one literal,
    bound otherwise (a function's ``global``, an import, a loop), or the file does not parse."""
    if name.encode() not in data:
        return None
    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    values: list = []
    for stmt in tree.body:
        found = _bound(stmt, name, values, top=True)
        if found is False:
            return None
    for node in ast.walk(tree):
        if isinstance(node, ast.Global) and name in node.names:
            return None  # a function re-binds it at run time
    if not values or any(v != values[-1] or type(v) is not type(values[-1]) for v in values):
        return None
    return repr(values[-1])


def _bound(stmt: ast.stmt, name: str, values: list, top: bool) -> bool:
    """Record the literal ``stmt`` binds ``name`` to into ``values``; False: it binds it to something else."""
    if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        if not any(_names(t, name) for t in targets):
            return True
        if stmt.value is None or not all(isinstance(t, ast.Name) for t in targets):
            return False
        try:
            value = ast.literal_eval(stmt.value)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return False
        if not isinstance(value, _LITERALS):
            return False
        if top:
            values.clear()  # a later top-level binding replaces the earlier ones
        values.append(value)
        return True
    if isinstance(stmt, ast.AugAssign) and _names(stmt.target, name):
        return False
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return not any((alias.asname or alias.name.split(".")[0]) == name for alias in stmt.names)
    if isinstance(stmt, (ast.For, ast.AsyncFor, ast.With, ast.AsyncWith)):
        if isinstance(stmt, (ast.For, ast.AsyncFor)) and _names(stmt.target, name):
            return False
        return all(_bound(s, name, values, False) for s in stmt.body + getattr(stmt, "orelse", []))
    if isinstance(stmt, ast.If):
        return all(_bound(s, name, values, False) for s in stmt.body + stmt.orelse)
    if isinstance(stmt, ast.Try):
        body = stmt.body + stmt.orelse + stmt.finalbody + [s for h in stmt.handlers for s in h.body]
        return all(_bound(s, name, values, False) for s in body)
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return stmt.name != name
    return True


def _names(target: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(target))
