"""Does the project file an import names compile anything? A byte test per
file, once per run: it lets the prefilter skip parsing a file whose only
possible news for other files is a sweep (``swept`` facts) sent to files that
compile nothing -- most loops in library code call imported helpers with the
loop's variable, and a sweep matters only to a function that compiles a model.
"""
from __future__ import annotations

import os
from typing import Callable, Iterable, Optional

from gnnlint.facts import ImportRef, compiles_anything
from gnnlint.module_map import ModuleMap


class CompilingImports:
    def __init__(self, paths: Iterable[str], read: Callable[[str], Optional[bytes]]) -> None:
        self._paths = list(paths)
        self._read = read
        self._map: Optional[ModuleMap] = None
        self._verdicts: dict[str, bool] = {}

    def for_importer(self, importer: str) -> Callable[[str, int, str], bool]:
        return lambda module, level, name: self.compiles(importer, module, level, name)

    def compiles(self, importer: str, module: str, level: int, name: str) -> bool:
        """Whether the run's file that ``from <level dots><module> import <name>``
        in ``importer`` names may compile anything. A package's ``__init__``
        may re-export the name from a file that does: yes. Not one of the
        run's files: no (a fact about it would land nowhere)."""
        if self._map is None:
            self._map = ModuleMap(self._paths)
        target = self._map.resolve(importer, ImportRef(module, name, level))
        if target is None:
            return False
        path = target[0]
        if os.path.basename(path) == "__init__.py":
            return True
        if path not in self._verdicts:
            data = self._read(path)
            self._verdicts[path] = data is None or compiles_anything(data)
        return self._verdicts[path]
