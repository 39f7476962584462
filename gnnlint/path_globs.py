"""Gitignore-style path globs for ``include`` / ``exclude`` / ``per-file-ignores`` (config.py and discover.py).

``glob_to_regex`` translates a pattern, ``PathGlob`` matches one against a file (relative or absolute),
``looks_absolute`` tells an absolute pattern. Moved out of config.py (s11), unchanged; config.py re-exports it.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path


def glob_to_regex(pattern: str, *, star_crosses_slash: bool = False) -> str:
    """Translate a gitignore-style glob to a regex body (no anchors).

    ``**/`` matches zero or more directories, a trailing ``/**`` everything
    below, ``*``/``?`` stay within one path segment unless
    ``star_crosses_slash`` (ruff's per-file-ignores, via globset, let them
    cross), ``[...]`` is a character class (``[!...]`` negated), ``\\x`` a
    literal x.
    """
    star = ".*" if star_crosses_slash else "[^/]*"
    qmark = "." if star_crosses_slash else "[^/]"
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        ch = pattern[i]
        if ch == "*":
            if pattern.startswith("**", i):
                at_start = i == 0 or pattern[i - 1] == "/"
                after = i + 2
                if at_start and after < n and pattern[after] == "/":
                    out.append("(?:.*/)?")  # zero or more directories
                    i = after + 1
                    continue
                if at_start and after == n:
                    out.append(".*")
                    i = after
                    continue
                out.append(star)  # `a**b` behaves like `a*b`
                i = after
                continue
            out.append(star)
        elif ch == "?":
            out.append(qmark)
        elif ch == "[":
            j = i + 1
            if j < n and pattern[j] in "!^":
                j += 1
            if j < n and pattern[j] == "]":
                j += 1
            while j < n and pattern[j] != "]":
                j += 1
            if j >= n:  # unclosed: a literal bracket
                out.append(re.escape(ch))
            else:
                body = pattern[i + 1 : j]
                negate = body[:1] in ("!", "^")
                if negate:
                    body = body[1:]
                body = body.replace("\\", "\\\\").replace("[", "\\[")
                out.append(("[^" if negate else "[") + body + "]")
                i = j
        elif ch == "\\" and i + 1 < n:
            i += 1
            out.append(re.escape(pattern[i]))
        else:
            out.append(re.escape(ch))
        i += 1
    return "".join(out)


@dataclass(frozen=True)
class PathGlob:
    """A ruff-style per-file glob.

    A relative pattern is matched against the project-relative path and also
    against the basename (so "models.py" matches models.py anywhere); an
    absolute pattern against the absolute path. ``*`` crosses ``/`` as in
    ruff (globset), so "tests/*" covers nested test files too. A leading
    ``!`` negates.
    """

    pattern: str
    negated: bool
    absolute: bool
    regex: re.Pattern

    @staticmethod
    @lru_cache(maxsize=1024)
    def compile(pattern: str) -> "PathGlob":
        negated = pattern.startswith("!")
        body = pattern[1:] if negated else pattern
        absolute = looks_absolute(body)
        body = body.replace(os.sep, "/")
        if not absolute:
            body = body.lstrip("/")
        while body.startswith("./"):
            body = body[2:]
        regex = re.compile(glob_to_regex(body, star_crosses_slash=True) + r"\Z", re.DOTALL)
        return PathGlob(pattern, negated, absolute, regex)

    def matches(self, rel: str, abs_path: str, basename: str) -> bool:
        if self.absolute:
            hit = bool(self.regex.match(abs_path.replace(os.sep, "/")))
        else:
            hit = bool(self.regex.match(rel)) or bool(self.regex.match(basename))
        return hit != self.negated


def looks_absolute(pattern: str) -> bool:
    """Is a glob an absolute filesystem path rather than gitignore's root-anchored
    ``/x``? Only when its first component exists at the filesystem root
    (``/home/...``, ``/tmp/...``, ``C:\\...``)."""
    if not os.path.isabs(pattern):
        return False
    drive, rest = os.path.splitdrive(pattern)
    parts = [p for p in re.split(r"[\\/]", rest) if p]
    if not parts:
        return False
    if any(ch in parts[0] for ch in "*?["):
        return False
    return os.path.exists(drive + os.sep + parts[0])


def _absolute(path: Path | str, cwd: Path | str) -> str:
    p = os.fspath(path)
    if not os.path.isabs(p):
        p = os.path.join(os.fspath(cwd), p)
    return os.path.normpath(p)


def _relative_posix(abs_path: str, root: str) -> str:
    """Path relative to root in posix form; the absolute path when outside it."""
    root = os.path.normpath(root)
    if abs_path == root:
        return "."
    prefix = root if root.endswith(os.sep) else root + os.sep
    if abs_path.startswith(prefix):
        return abs_path[len(prefix) :].replace(os.sep, "/")
    return abs_path.replace(os.sep, "/")
