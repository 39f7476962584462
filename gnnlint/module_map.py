"""Which linted file defines an imported name: the map from module names and
paths to the files of one run, shared by the engine's cross-file facts and
verify's project index.

Paths are compared as absolute, normalised strings (``os.path.abspath``), not
resolved through symlinks: ``Path.resolve`` costs a ``lstat`` per path
component, which was a third of a warm run over torch_geometric.
"""
from __future__ import annotations

import os
from functools import lru_cache
from typing import Iterable, Optional

from gnnlint.facts import ImportRef


class ModuleMap:
    def __init__(self, paths: Iterable[str]) -> None:
        self.given: dict[str, str] = {}  # absolute path -> the path as the run named it
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
        return None


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
