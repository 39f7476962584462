"""Does the project file an import names compile anything? A byte test per
file, once per run: it lets the prefilter skip parsing a file whose only
possible news for other files is a sweep (``swept`` facts) sent to files that
compile nothing -- most loops in library code call imported helpers with the
loop's variable, and a sweep matters only to a function that compiles a model.
"""
from __future__ import annotations

import os
from typing import Callable, Iterable, Optional

from gnnlint.facts import ImportRef, compiles_anything, from_imports
from gnnlint.module_map import ModuleMap


class CompilingImports:
    def __init__(self, paths: Iterable[str], read: Callable[[str], Optional[bytes]]) -> None:
        self._paths = list(paths)
        self._read = read
        self._map: Optional[ModuleMap] = None
        self._verdicts: dict[str, bool] = {}

    def module_map(self) -> ModuleMap:
        """The run's module map (built once: the engine's fact joins resolve through it too)."""
        if self._map is None:
            self._map = ModuleMap(self._paths, self._read)  # the bytes: a plugin's host-package imports
        return self._map

    def for_importer(self, importer: str) -> Callable[[str, int, str], bool]:
        return lambda module, level, name: self.compiles(importer, module, level, name)

    def compiles(self, importer: str, module: str, level: int, name: str) -> bool:
        """Whether the run's file that ``from <level dots><module> import <name>``
        in ``importer`` names may compile anything. A package's ``__init__``
        that re-exports the name (``from .scatter import scatter``) answers
        for the file it imports it from, since a fact about the name travels
        on to that file (regions' ``_forward_reexports``); so does any file
        that imports the name from another. Not one of the
        run's files: no (a fact about it would land nowhere)."""
        self.module_map()
        return self._defines_compiling(importer, ImportRef(module, name, level), set())

    def _defines_compiling(self, importer: str, ref: ImportRef, seen: set) -> bool:
        target = self._map.resolve(importer, ref) if self._map is not None else None
        if target is None:
            return False
        path = target[0]
        if path in seen:
            return False
        seen.add(path)
        if self._compiles_itself(path):
            return True
        if not ref.name:
            return False
        head = ref.name.split(".")[0]
        for module, level, name, bound in from_imports(self._read(path) or b""):
            if bound == head and self._defines_compiling(path, ImportRef(module, name, level), seen):
                return True  # imported here from a file that compiles: the fact travels on to it
        if os.path.basename(path) != "__init__.py":
            return False
        # `from pkg import submodule`: the submodule's own file (a subpackage: may be anything)
        if self._defines_compiling(path, ImportRef("", head, 1), seen):
            return True
        return os.path.join(os.path.dirname(os.path.abspath(path)), head, "__init__.py") in self._map.given

    def _compiles_itself(self, path: str) -> bool:
        if path not in self._verdicts:
            data = self._read(path)
            self._verdicts[path] = data is None or compiles_anything(data)
        return self._verdicts[path]
