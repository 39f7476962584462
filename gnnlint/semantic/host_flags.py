"""Flags kept in a batch dict: "is ``batch["misc"]["protein_only"]`` a Python bool?"

A batch is often a nest of dicts: tensors under ``batch["features"]``, and
Python values beside them -- a flag the data pipeline sets for the whole
batch::

    # data_utils.py (the collate / prepare step)
    batch["misc"]["protein_only"] = True

    # model.py (compiled forward)
    if not batch["misc"]["protein_only"]:   # a Python bool: no sync, no break
        ...

kinds.py presumes what a batch holds under a string key is a tensor. When the
project stores under that key only ``True`` / ``False`` (every ``["key"] =``
assignment and ``{"key": ...}`` entry of its Python files, at least one), the value read back is a Python
bool. ``host_flag(ctx, expr)`` answers for ``<...>["key"]``: the why, or None.
Asked by the sync rules' tensor-truthiness check (GNN001 / GNN013), only for a
condition they would otherwise report, so the project scan (a byte regex over
the project's ``.py`` files, once per project root and process) is paid only
there. The project root is the nearest folder above the file holding
``.git`` / ``pyproject.toml`` / ``setup.py`` / ``setup.cfg`` (at most 8 up);
none: the file's own folder.
"""
from __future__ import annotations

import os
import re
from functools import lru_cache
from typing import TYPE_CHECKING, Optional

import libcst as cst

if TYPE_CHECKING:
    from gnnlint.context import FileContext

_ROOT_MARKERS = (".git", "pyproject.toml", "setup.py", "setup.cfg")
_MAX_UP = 8
_MAX_FILES = 3000
_MAX_BYTES = 1 << 20
_SKIP_DIRS = frozenset((".git", "node_modules", "__pycache__", ".venv", "venv", "build", "dist", ".tox"))
# `["key"] = value` (not `==`), the value up to the end of the line
_STORE = re.compile(rb"""\[\s*['"](\w+)['"]\s*\]\s*=(?!=)[ \t]*([^\n#]*)""")
# `{"key": value}`: a dict built with the key (its value up to `,` / `}` / the end of the line)
_ENTRY = re.compile(rb"""['"](\w+)['"]\s*:[ \t]*([^,}\n#]*)""")
_BOOL = re.compile(rb"^(?:True|False)\s*$")


def host_flag(ctx: "FileContext", expr: cst.BaseExpression) -> Optional[str]:
    """``x["key"]`` (any receiver) whose key the project only ever sets to ``True`` /
    ``False``: the why; else None."""
    if not (isinstance(expr, cst.Subscript) and len(expr.slice) == 1):
        return None
    index = expr.slice[0].slice
    if not (isinstance(index, cst.Index) and isinstance(index.value, cst.SimpleString)):
        return None
    key = index.value.evaluated_value
    if not isinstance(key, str) or not key.isidentifier():
        return None
    path = getattr(ctx, "path", None)
    if not path:
        return None
    root = _project_root(os.path.dirname(os.path.abspath(str(path))))
    where = _bool_keys(root).get(key)
    return f"the project sets `[\"{key}\"]` only to True / False ({where})" if where else None


@lru_cache(maxsize=256)
def _project_root(folder: str) -> str:
    start = folder
    for _ in range(_MAX_UP):
        if any(os.path.exists(os.path.join(folder, m)) for m in _ROOT_MARKERS):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    return start


@lru_cache(maxsize=16)
def _bool_keys(root: str) -> dict:
    """``{key: "file:line"}`` for the string keys every ``["key"] =`` store of the
    project's Python files sets to a bool literal (the first such store named)."""
    stores: dict[bytes, Optional[str]] = {}
    seen = 0
    for directory, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and not d.startswith("."))
        for name in sorted(files):
            if not name.endswith(".py"):
                continue
            seen += 1
            if seen > _MAX_FILES:
                return {}  # too big a tree to read: no answer (precision first)
            path = os.path.join(directory, name)
            try:
                if os.path.getsize(path) > _MAX_BYTES:
                    continue
                with open(path, "rb") as handle:
                    data = handle.read()
            except OSError:
                continue
            if b"]" not in data:
                continue
            for match in (*_STORE.finditer(data), *_ENTRY.finditer(data)):
                key, value = match.group(1), match.group(2)
                if _BOOL.match(value):
                    if key not in stores:
                        line = data.count(b"\n", 0, match.start()) + 1
                        stores[key] = f"{os.path.relpath(path, root)}:{line}"
                else:
                    stores[key] = None  # some store puts something else there
    return {k.decode(): where for k, where in stores.items() if where}
