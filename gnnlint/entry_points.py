"""Deliver facts addressed to an entry point by name (semantic/entry_points.py):
a runner calls ``submission.update_params(...)`` every step, where
``submission`` is a module it imports at run time from a path. The fact's
``ImportRef`` carries the ``ENTRY_POINT`` marker and the keywords the call
passes in ``module``; it goes to every project file that defines a top-level
function of that name, imports torch, and accepts those keywords (or
``**kwargs``). Read from the files' bytes, as the engine's other project-wide
deliveries are; each delivery is an ordinary relative ``ImportRef`` the
engine's module map resolves to that file."""
from __future__ import annotations

import os
import re
from typing import Callable, Optional

from gnnlint.facts import ENTRY_POINT, ImportRef

_TORCH_IMPORT = re.compile(rb"^[ \t]*(?:import[ \t]+torch\b|from[ \t]+torch\b)", re.M)
_PARAM = re.compile(r"\*{0,2}[A-Za-z_]\w*")


def delivered(importer: str, kind: str, facts: list, every, read: Callable[[str], Optional[bytes]]) -> list:
    """``facts`` with each entry-point ref replaced by refs to the files that define it."""
    if kind not in ("stepped", "stepped_args") or not any(ref.module.startswith(ENTRY_POINT) for ref, _ in facts):
        return facts
    out = []
    for ref, why in facts:
        if not ref.module.startswith(ENTRY_POINT):
            out.append((ref, why))
            continue
        keywords = [k for k in ref.module[len(ENTRY_POINT):].split(",") if k]
        for path in defining_files(ref.name, keywords, every, read):
            if os.path.abspath(path) != os.path.abspath(importer):
                out.append((_relative_ref(importer, path, ref.name), why))
    return out


def defining_files(name: str, keywords: list, every, read) -> list:
    """The project's Python files defining ``def <name>(...)`` at the top level,
    importing torch, whose parameters take ``keywords`` ("*": a positional or
    unpacked argument; then the function must take at least as many)."""
    head = re.compile(rb"^def[ \t]+%s[ \t]*\(" % re.escape(name.encode()), re.M)
    found = []
    for path in every:
        if not path.endswith(".py"):
            continue
        data = read(path)
        if data is None or name.encode() not in data:
            continue
        match = head.search(data)
        if match is None or not _TORCH_IMPORT.search(data):
            continue
        params = _params(data, match.end())
        if params is None:
            continue
        if "**" not in params and any(k != "*" and k not in params for k in keywords):
            continue
        found.append(path)
    return found


def _params(data: bytes, start: int) -> Optional[set]:
    """The parameter names of the def whose "(" ends at ``start`` ("**" when it
    takes ``**kwargs``), read up to the matching ")"; None when unreadable."""
    depth, end = 1, start
    while end < len(data) and depth:
        ch = data[end:end + 1]
        depth += ch == b"(" or -(ch == b")")
        end += 1
    if depth:
        return None
    text = data[start:end - 1].decode("utf-8", "replace")
    text = re.sub(r"\[[^\[\]]*\]", "", re.sub(r"\[[^\[\]]*\]", "", text))  # Dict[str, X] annotations
    names = set()
    for part in text.split(","):
        match = _PARAM.match(part.strip())
        if match:
            token = match.group(0)
            names.add("**" if token.startswith("**") else token.lstrip("*"))
    return names


def _relative_ref(importer: str, target: str, name: str) -> ImportRef:
    """``from <dots><a.b.module> import <name>`` from ``importer`` reaching ``target``."""
    here = os.path.dirname(os.path.abspath(importer))
    there = os.path.abspath(target)
    common = os.path.commonpath([here, there])
    ups = len(os.path.relpath(here, common).split(os.sep)) if here != common else 0
    module = os.path.splitext(os.path.relpath(there, common))[0].replace(os.sep, ".")
    return ImportRef(module, name, ups + 1)
