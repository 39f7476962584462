"""Whole-project facts for tools that need them at once (verify).

The lint engine gathers cross-file facts itself in its two phases (see
engine.py, fact_joins.py); this module answers the question runtime verification asks:
"how does the user's code compile this class?" — so verify compiles the
model with the same mode/dynamic/fullgraph. It is built only from the files
whose bytes mention ``compile``.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Optional

import libcst as cst

from gnnlint.context import ClassInfo, CompileSite, FileContext, ImportRef


@dataclass
class ProjectIndex:
    sites: list[CompileSite] = field(default_factory=list)

    def compile_site_for_class(self, path: str, class_name: str) -> Optional[CompileSite]:
        """The compile call that compiles ``class_name`` defined in ``path``."""
        want = str(Path(path).resolve())
        for site in self.sites:
            if site.class_name == class_name and site.class_path == want:
                return site
        return None



def _read_or_none(path: str) -> Optional[bytes]:
    try:
        return Path(path).read_bytes()
    except OSError:
        return None


def build_index(files: Iterable[Path]) -> ProjectIndex:
    from gnnlint.engine import node_positions
    from gnnlint.module_map import ModuleMap

    files = [Path(f) for f in files]
    modules = ModuleMap((str(f) for f in files), _read_or_none)  # the bytes: a plugin's host-package imports
    index = ProjectIndex()
    for path in files:
        try:
            data = path.read_bytes()
        except OSError:
            continue
        if b"compile" not in data:
            continue
        try:
            module = cst.parse_module(data)
        except Exception:  # noqa: BLE001 - unparsable files have no compile sites
            continue
        ctx = FileContext(module, str(path))
        if not ctx.compile_sites:
            continue
        positions = node_positions(module)
        mark_dynamic = b"mark_dynamic" in data
        for node, site in ctx.compile_sites:
            target = ctx.compile_targets.get(node)
            class_path = class_name = None
            if isinstance(target, ClassInfo):
                class_path, class_name = str(path.resolve()), target.name
            elif isinstance(target, ImportRef):
                found = modules.resolve(str(path), target)
                if found is not None:
                    class_path, class_name = str(Path(found[0]).resolve()), found[1]
            index.sites.append(dataclasses.replace(
                site, path=str(path), line=positions[node].start.line, mark_dynamic=mark_dynamic,
                class_path=class_path, class_name=class_name))
    return index
