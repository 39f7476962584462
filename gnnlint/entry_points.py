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

from gnnlint.facts import ENTRY_POINT, HOOK_METHOD, ImportRef

_TORCH_IMPORT = re.compile(rb"^[ \t]*(?:import[ \t]+torch\b|from[ \t]+torch\b)", re.M)
_PARAM = re.compile(r"\*{0,2}[A-Za-z_]\w*")


def delivered(importer: str, kind: str, facts: list, every, read: Callable[[str], Optional[bytes]]) -> list:
    """``facts`` with each entry-point ref replaced by refs to the files that define it."""
    if kind not in ("stepped", "stepped_args") or not any(ref.module.startswith((ENTRY_POINT, HOOK_METHOD))
                                                          for ref, _ in facts):
        return facts
    out = []
    for ref, why in facts:
        if ref.module.startswith(HOOK_METHOD):
            count = int(ref.module[len(HOOK_METHOD):])
            for path, cls in hook_classes(ref.name, count, every, read):
                if os.path.abspath(path) != os.path.abspath(importer):
                    out.append((_relative_ref(importer, path, f"{cls}.{ref.name}"), why))
            continue
        if not ref.module.startswith(ENTRY_POINT):
            out.append((ref, why))
            continue
        keywords = [k for k in ref.module[len(ENTRY_POINT):].split(",") if k]
        for path in defining_files(ref.name, keywords, every, read):
            if os.path.abspath(path) != os.path.abspath(importer):
                out.append((_relative_ref(importer, path, ref.name), why))
    return out


def _files_naming(name: str, every, read):
    """``(path, bytes)`` of the project's Python files whose bytes contain ``name``."""
    word = name.encode()
    for path in every:
        if path.endswith(".py"):
            data = read(path)
            if data is not None and word in data:
                yield path, data


def defining_files(name: str, keywords: list, every, read) -> list:
    """The project's Python files defining ``def <name>(...)`` at the top level,
    importing torch, whose parameters take ``keywords`` ("*": a positional or
    unpacked argument; then the function must take at least as many)."""
    head = re.compile(rb"^def[ \t]+%s[ \t]*\(" % re.escape(name.encode()), re.M)
    found = []
    for path, data in _files_naming(name, every, read):
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


_CLASS = re.compile(rb"^class[ \t]+([A-Za-z_]\w*)", re.M)


def hook_classes(name: str, count: int, every, read) -> list:
    """``[(path, class), ...]``: the project's top-level classes defining a method
    ``def <name>(self, ...)`` that takes ``count`` positional arguments after
    ``self`` (-1: any) -- the hooks a trainer runs by that name."""
    head = re.compile(rb"^[ \t]+def[ \t]+%s[ \t]*\(" % re.escape(name.encode()), re.M)
    found = []
    for path, data in _files_naming(name, every, read):
        classes = [(m.start(), m.group(1).decode()) for m in _CLASS.finditer(data)]
        for match in head.finditer(data):
            owner = _owner(data, match.start(), classes)
            params = _positional(data, match.end())
            if owner is not None and params is not None and (
                    count < 0 or params[1] or params[0] <= count <= params[2]):
                found.append((path, owner))
    return list(dict.fromkeys(found))


def _owner(data: bytes, at: int, classes: list) -> Optional[str]:
    """The class whose body holds the def at ``at``: the last ``class`` line before it,
    with no other top-level statement between them."""
    before = [c for c in classes if c[0] < at]
    if not before:
        return None
    start, cls = before[-1]
    between = data[start:at].split(b"\n")[1:]
    if any(line[:1] not in (b"", b" ", b"\t", b"#", b"\r", b")") for line in between):
        return None
    return cls


def _param_text(data: bytes, start: int) -> Optional[str]:
    """The parameter list of the def whose "(" ends at ``start``, up to the matching ")",
    with subscripted annotations (``Dict[str, X]``) removed; None when unreadable."""
    depth, end = 1, start
    while end < len(data) and depth:
        ch = data[end:end + 1]
        depth += ch == b"(" or -(ch == b")")
        end += 1
    if depth:
        return None
    text = data[start:end - 1].decode("utf-8", "replace")
    return re.sub(r"\[[^\[\]]*\]", "", re.sub(r"\[[^\[\]]*\]", "", text))


def _positional(data: bytes, start: int) -> Optional[tuple]:
    """(required, takes *args, at most) positional parameters after ``self`` of the
    def whose "(" ends at ``start``; None when unreadable."""
    text = _param_text(data, start)
    if text is None:
        return None
    parts = [p.strip() for p in text.split(",") if p.strip() and p.strip() != "/"]
    if not parts or not parts[0].startswith(("self", "cls")):
        return None
    required = most = 0
    for part in parts[1:]:
        if part == "*" or part.startswith("**"):
            break
        if part.startswith("*"):
            return required, True, most
        most += 1
        if "=" not in part:
            required += 1
    return required, False, most


def _params(data: bytes, start: int) -> Optional[set]:
    """The parameter names of the def whose "(" ends at ``start`` ("**" when it
    takes ``**kwargs``), read up to the matching ")"; None when unreadable."""
    text = _param_text(data, start)
    if text is None:
        return None
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
