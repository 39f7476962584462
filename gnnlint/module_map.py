"""Which linted file defines an imported name: the map from module names and
paths to the files of one run, shared by the engine's cross-file facts and
verify's project index.

Paths are compared as absolute, normalised strings (``os.path.abspath``), not
resolved through symlinks: ``Path.resolve`` costs a ``lstat`` per path
component, which was a third of a warm run over torch_geometric.
"""
from __future__ import annotations

import os
import re
from functools import lru_cache
from typing import Callable, Iterable, Optional

from gnnlint.facts import ImportRef, from_imports

_ALIAS_LEVELS = 4  # folders above an importer that may be its package installed under another name


class ModuleMap:
    def __init__(self, paths: Iterable[str], read: Optional[Callable[[str], Optional[bytes]]] = None) -> None:
        self.given: dict[str, str] = {}  # absolute path -> the path as the run named it
        self._read = read  # the bytes of a run's file (for `installed_names`); None: no aliases
        self._aliases: dict[str, list] = {}  # importer -> [(dotted prefix, folder it names), ...]
        self._top_level: dict[str, frozenset] = {}  # path -> top_level_names of its bytes
        self.modules: dict[str, str] = {}  # dotted module name -> absolute path
        for path in paths:
            absolute = os.path.abspath(path)
            self.given[absolute] = str(path)
            if not absolute.endswith(".ipynb"):  # a notebook is never imported (train.ipynb is not `train`)
                self.modules.setdefault(module_name_for(absolute), absolute)

    def resolve(self, importer: str, ref: ImportRef) -> Optional[tuple[str, str]]:
        """(the linted file defining ``ref``, as the run named it; the
        top-level name in it), or None when it is not one of this run's files."""
        name = ref.name.split(".")[0]
        importer = os.path.abspath(importer)
        if ref.level:
            base = os.path.dirname(importer)
            for _ in range(ref.level - 1):
                base = os.path.dirname(base)
            target = os.path.join(base, *ref.module.split(".")) if ref.module else base
            candidates = [target + ".py", os.path.join(target, "__init__.py")]
            if not ref.module:  # from . import models
                candidates.insert(0, os.path.join(base, f"{name}.py"))
        else:
            # a script importing a sibling module (`from models import GCN`) first:
            # the script's folder is sys.path[0], ahead of a same-named module
            # elsewhere in the project (examples/gcn.py vs benchmark/kernel/gcn.py)
            candidates = [os.path.join(os.path.dirname(importer), *ref.module.split(".")) + ".py",
                          self.modules.get(ref.module, "")]
            # a namespace package under a folder above the importer (the repo
            # root on sys.path): `from benchmark.utils import test` in
            # benchmark/training/training_benchmark.py, no benchmark/__init__.py
            parts = ref.module.split(".") if ref.module else []
            folder = os.path.dirname(importer)
            for _ in range(6 if len(parts) > 1 else 0):
                folder = os.path.dirname(folder)
                target = os.path.join(folder, *parts)
                candidates += [target + ".py", os.path.join(target, "__init__.py")]
        for candidate in candidates:
            given = self.given.get(os.path.normpath(candidate)) if candidate else None
            if given is not None:
                return given, name
        return self._aliased(importer, ref.module, name) if not ref.level and self._read is not None else None

    # -- a project installed under another name ------------------------------------------
    def _aliased(self, importer: str, module: str, name: str) -> Optional[tuple[str, str]]:
        for prefix, folder in self.installed_names(importer):
            if module.startswith(prefix + "."):
                found = self._under(folder, module[len(prefix) + 1:])
                if found is not None:
                    return found, name
        return None

    def _under(self, folder: str, dotted: str) -> Optional[str]:
        target = os.path.join(folder, *dotted.split("."))
        for candidate in (target + ".py", os.path.join(target, "__init__.py")):
            given = self.given.get(os.path.normpath(candidate))
            if given is not None:
                return given
        return None

    def _defines(self, path: Optional[str], names: set) -> bool:
        """A byte test: the file defines (or imports) every one of ``names`` at
        its top level -- a folder that only mirrors a library's layout (tests
        named after its modules, a project's own ``config`` package) does not."""
        if path is None or self._read is None:
            return False
        if path not in self._top_level:
            self._top_level[path] = top_level_names(self._read(path) or b"")
        defined = self._top_level[path]
        return all(name == "*" or name.encode() in defined for name in names)

    def installed_names(self, importer: str) -> list:
        """``[(prefix, folder)]``: the importer names its own project under a
        dotted prefix of another package -- a plugin copied into a host
        package (``from fairchem.core.models.escaip.utils.graph import f`` in
        ``src/model.py`` for ``src/utils/graph.py``): two or more of its
        ``from`` imports share a prefix of at least two parts, and every one of
        them names a file of the run under one folder at or above the importer
        that defines the names imported from it."""
        if importer in self._aliases:
            return self._aliases[importer]
        data = self._read(importer) if self._read is not None else None
        imported: dict[str, set] = {}
        for module, level, name, _bound in from_imports(data or b""):
            if not level and module.count(".") >= 2:
                imported.setdefault(module, set()).add(name)
        modules = sorted(imported)
        folders, folder = [], os.path.dirname(importer)
        for _ in range(_ALIAS_LEVELS):
            folders.append(folder)
            folder = os.path.dirname(folder)
        found: list = []
        prefixes = sorted({".".join(m.split(".")[:i]) for m in modules for i in range(2, m.count(".") + 1)},
                          key=lambda p: -p.count("."))
        for prefix in prefixes:
            members = [m for m in modules if m.startswith(prefix + ".")]
            if len(members) < 2 or any(p.startswith(prefix + ".") for p, _f in found):
                continue
            for folder in folders:
                if all(self._defines(self._under(folder, m[len(prefix) + 1:]), imported[m]) for m in members):
                    found.append((prefix, folder))
                    break
        self._aliases[importer] = found
        return found


# a top-level `def`/`class` or assignment at a line's start; an import line's words after `import`
_TOP_LEVEL_DEFINED = re.compile(rb"^(?:(?:async\s+)?def|class)\s+(\w+)|^(\w+)\s*[:=]", re.M)
_IMPORT_TAIL = re.compile(rb"\bimport\b([^\n]*)")
_WORD = re.compile(rb"\w+")


def top_level_names(data: bytes) -> frozenset:
    """A byte test, one pass over the file: the names it defines at its top level (``def``/``class``
    at a line's start, ``name =``/``name:``) or names on an import line after ``import``."""
    names = {defined or assigned for defined, assigned in _TOP_LEVEL_DEFINED.findall(data)}
    for tail in _IMPORT_TAIL.findall(data):
        names.update(_WORD.findall(tail))
    return frozenset(names)


def module_name_for(path: str) -> str:
    """Dotted module name of a file, walking up through packages (folders
    with ``__init__.py``)."""
    folder, filename = os.path.split(os.path.abspath(path))
    parts = list(_package_of(folder))
    stem = os.path.splitext(filename)[0]
    if stem != "__init__":
        parts.append(stem)
    return ".".join(parts)


@lru_cache(maxsize=None)
def _package_of(folder: str) -> tuple[str, ...]:
    """Package parts of a folder; one stat per folder, not per file."""
    if not os.path.exists(os.path.join(folder, "__init__.py")):
        return ()
    parent = os.path.dirname(folder)
    if parent == folder:
        return (os.path.basename(folder),)
    return _package_of(parent) + (os.path.basename(folder),)
