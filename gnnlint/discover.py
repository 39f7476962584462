"""Find the Python files to lint: walk directories, apply excludes and .gitignore.

Explicitly named files are always returned (ruff's ``force-exclude = false``);
inside directories, excluded and git-ignored directories are pruned while
walking so large ignored trees (``.venv``, ``node_modules``) cost nothing.
Git is never run: .gitignore files are read by a small matcher below.
"""
from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from gnnlint.config import Settings, glob_to_regex, looks_absolute

PY_SUFFIXES = (".py", ".pyi")


# --------------------------------------------------------------------------
# Exclude patterns


class ExcludeMatcher:
    """``exclude`` + ``extend-exclude``: gitignore-ish globs.

    A pattern without ``/`` (``build``, ``*.pyi``) matches a file or directory
    name at any depth; one with ``/`` (``a/b/*.py``, ``**/x``, ``/gen``) matches
    the path relative to the project root; an absolute pattern the absolute
    path. A trailing ``/`` restricts a pattern to directories.
    """

    def __init__(self, patterns: list[str], project_root: Path | str) -> None:
        self.root = os.path.normpath(os.path.abspath(os.fspath(project_root)))
        buckets: dict[tuple[str, bool], list[str]] = {}
        for raw in patterns:
            pat = raw.strip().replace(os.sep, "/")
            if not pat:
                continue
            dir_only = pat.endswith("/")
            pat = pat.rstrip("/")
            if not pat:
                continue
            if looks_absolute(raw.strip()):
                kind = "abs"
            else:
                while pat.startswith("./"):
                    pat = pat[2:]
                kind = "rel" if "/" in pat else "name"
                pat = pat.lstrip("/")
            buckets.setdefault((kind, dir_only), []).append(glob_to_regex(pat))
        # One alternation per bucket keeps matching to a handful of regex calls.
        self._rx = {
            key: re.compile("(?:" + "|".join(bodies) + r")\Z", re.DOTALL)
            for key, bodies in buckets.items()
        }
        self._name_any = self._rx.get(("name", False))
        self._name_dir = self._rx.get(("name", True))

    def rel(self, abs_path: str) -> str | None:
        prefix = self.root + os.sep if not self.root.endswith(os.sep) else self.root
        if abs_path.startswith(prefix):
            return abs_path[len(prefix) :].replace(os.sep, "/")
        return None

    def excluded(self, abs_path: str, name: str, is_dir: bool) -> bool:
        if self._name_any is not None and self._name_any.match(name):
            return True
        if is_dir and self._name_dir is not None and self._name_dir.match(name):
            return True
        rx = self._rx
        if ("rel", False) in rx or ("rel", True) in rx:
            rel = self.rel(abs_path)
            if rel is not None:
                r = rx.get(("rel", False))
                if r is not None and r.match(rel):
                    return True
                r = rx.get(("rel", True))
                if is_dir and r is not None and r.match(rel):
                    return True
        if ("abs", False) in rx or ("abs", True) in rx:
            posix = abs_path.replace(os.sep, "/")
            r = rx.get(("abs", False))
            if r is not None and r.match(posix):
                return True
            r = rx.get(("abs", True))
            if is_dir and r is not None and r.match(posix):
                return True
        return False


class IncludeMatcher:
    """``include`` + ``extend-include``: the files a walk lints, with the
    exclude patterns' glob rules; plain ``*.ext`` patterns are a suffix test."""

    def __init__(self, patterns: list[str], project_root: Path | str) -> None:
        plain = [p for p in patterns if re.fullmatch(r"\*\.[A-Za-z0-9_]+", p.strip())]
        self.suffixes = tuple(p.strip()[1:] for p in plain)
        rest = [p for p in patterns if p not in plain]
        self.matcher = ExcludeMatcher(rest, project_root) if rest else None

    def included(self, abs_path: str, name: str) -> bool:
        if name.endswith(self.suffixes):
            return True
        return self.matcher is not None and self.matcher.excluded(abs_path, name, False)


# --------------------------------------------------------------------------
# .gitignore


@dataclass(frozen=True)
class _GitRule:
    regex: re.Pattern
    negated: bool
    dir_only: bool
    anchored: bool  # matched against the path relative to the file's dir


def _strip_trailing_spaces(line: str) -> str:
    # Trailing spaces are ignored unless escaped with a backslash.
    end = len(line)
    while end > 0 and line[end - 1] == " ":
        if end >= 2 and line[end - 2] == "\\":
            break
        end -= 1
    return line[:end]


def parse_gitignore(text: str) -> list[_GitRule]:
    rules: list[_GitRule] = []
    for raw in text.splitlines():
        line = _strip_trailing_spaces(raw.rstrip("\r"))
        if not line or line.startswith("#"):
            continue
        negated = False
        if line.startswith("!"):
            negated, line = True, line[1:]
        elif line.startswith("\\!") or line.startswith("\\#"):
            line = line[1:]
        dir_only = line.endswith("/") and not line.endswith("\\/")
        if dir_only:
            line = line.rstrip("/")
        if not line:
            continue
        anchored = "/" in line
        if line.startswith("/"):
            line = line[1:]
        try:
            regex = re.compile(glob_to_regex(line) + r"\Z", re.DOTALL)
        except re.error:
            continue  # an unusable pattern is skipped, as git does
        rules.append(_GitRule(regex, negated, dir_only, anchored))
    return rules


class GitIgnoreLevel:
    """The rules of one ignore file, relative to ``base`` (an absolute dir)."""

    __slots__ = ("base", "prefix", "rules", "_fast")

    def __init__(self, base: str, rules: list[_GitRule]) -> None:
        self.base = base
        self.prefix = base if base.endswith(os.sep) else base + os.sep
        self.rules = rules
        # Without negations order does not matter: one alternation per kind
        # (anchored?, dir-only?) replaces a regex call per rule.
        self._fast = None
        if not any(r.negated for r in rules):
            groups: dict[tuple[bool, bool], list[str]] = {}
            for r in rules:
                groups.setdefault((r.anchored, r.dir_only), []).append(r.regex.pattern)
            self._fast = {
                k: re.compile("|".join(f"(?:{p})" for p in v), re.DOTALL)
                for k, v in groups.items()
            }

    def decide(self, abs_path: str, name: str, is_dir: bool) -> bool | None:
        """True ignored, False re-included by ``!``, None no rule matched."""
        if not abs_path.startswith(self.prefix):
            return None
        rel = None
        if self._fast is not None:
            for (anchored, dir_only), rx in self._fast.items():
                if dir_only and not is_dir:
                    continue
                if anchored:
                    if rel is None:
                        rel = abs_path[len(self.prefix) :].replace(os.sep, "/")
                    if rx.match(rel):
                        return True
                elif rx.match(name):
                    return True
            return None
        for rule in reversed(self.rules):  # the last matching rule wins
            if rule.dir_only and not is_dir:
                continue
            if rule.anchored:
                if rel is None:
                    rel = abs_path[len(self.prefix) :].replace(os.sep, "/")
                hit = rule.regex.match(rel)
            else:
                hit = rule.regex.match(name)
            if hit:
                return not rule.negated
        return None


def _load_level(directory: str, filename: str = ".gitignore", base: str | None = None):
    path = os.path.join(directory, filename)
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            rules = parse_gitignore(fh.read())
    except OSError:
        return None
    return GitIgnoreLevel(base or directory, rules) if rules else None


def _is_ignored(levels: tuple[GitIgnoreLevel, ...], abs_path: str, name: str, is_dir: bool) -> bool:
    # Deeper ignore files take precedence over shallower ones.
    for level in reversed(levels):
        verdict = level.decide(abs_path, name, is_dir)
        if verdict is not None:
            return verdict
    return False


def _find_git_root(directory: str) -> str | None:
    d = directory
    while True:
        if os.path.exists(os.path.join(d, ".git")):
            return d
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent


def _initial_levels(top: str, project_root: str) -> tuple[GitIgnoreLevel, ...]:
    """Ignore files that apply to ``top`` from its ancestors (``top``'s own
    .gitignore is read when the walk enters it)."""
    root = _find_git_root(top)
    levels: list[GitIgnoreLevel] = []
    if root is not None:
        info = _load_level(os.path.join(root, ".git", "info"), "exclude", base=root)
        if info is not None:
            levels.append(info)  # lowest precedence
    else:
        # Outside a repository, honour .gitignore files from the project root down.
        pr = project_root
        if top == pr or top.startswith(pr.rstrip(os.sep) + os.sep):
            root = pr
    if root is None:
        return tuple(levels)
    chain = []
    d = os.path.dirname(top)
    if top != root:
        while True:
            chain.append(d)
            if d == root:
                break
            parent = os.path.dirname(d)
            if parent == d:
                break
            d = parent
    for directory in reversed(chain):
        level = _load_level(directory)
        if level is not None:
            levels.append(level)
    return tuple(levels)


# --------------------------------------------------------------------------
# Walking


def _join_out(out_dir: str, name: str) -> str:
    return name if out_dir in ("", ".") else os.path.join(out_dir, name)


class TooManyFiles(Exception):
    """``discover(..., limit=N)`` found more than N files (the walk stops there)."""


def discover(paths: list[Path], settings: Settings, excluded: list | None = None,
             as_strings: bool = False, limit: int | None = None) -> tuple[list, list[str]]:
    """Files to lint under ``paths`` (sorted, unique) and warnings.
    ``excluded``: collects (path, why) for each file or folder left out
    (--show-files -v). ``limit``: raise ``TooManyFiles`` as soon as more
    than ``limit`` files are found (a guessed project root that is really
    a home folder or /tmp is not walked to its end).

    Returned paths keep the form they were given in (relative paths stay
    relative to ``settings.cwd``); relative inputs are resolved against
    ``settings.cwd``.
    """
    cwd = os.fspath(settings.cwd)
    project_root = os.path.normpath(os.path.abspath(os.fspath(settings.project_root)))
    excluder = ExcludeMatcher(list(settings.exclude) + list(settings.extend_exclude), project_root)
    matchers: dict[int, ExcludeMatcher] = {id(settings): excluder}

    def excluder_for(directory: str) -> ExcludeMatcher:
        """The excludes of the closest [tool.gnnlint] at or above ``directory``
        (a subproject's own exclude / extend-exclude apply below it)."""
        mine = settings.for_path(os.path.join(directory, "__gnnlint__.py")) if settings.hierarchy else settings
        hit = matchers.get(id(mine))
        if hit is None:
            hit = matchers[id(mine)] = ExcludeMatcher(list(mine.exclude) + list(mine.extend_exclude),
                                                      mine.project_root)
        return hit
    includer = IncludeMatcher(list(settings.include) + list(settings.extend_include), project_root)
    gitignore = settings.respect_gitignore

    found: dict[str, str] = {}  # absolute key -> output form
    warnings: list[str] = []
    visited_dirs: set[tuple[int, int]] = set()

    for given in paths:
        given_str = os.fspath(given)
        out = os.path.normpath(given_str)
        abs_path = os.path.normpath(
            given_str if os.path.isabs(given_str) else os.path.join(cwd, given_str)
        )
        try:
            st = os.stat(abs_path)
        except OSError as exc:
            if isinstance(exc, FileNotFoundError) or not os.path.lexists(abs_path):
                warnings.append(f"{given_str}: No such file or directory")
            else:
                warnings.append(f"{given_str}: {exc.strerror or exc}")
            continue
        if not stat.S_ISDIR(st.st_mode):
            found.setdefault(abs_path, out)  # explicit files are always linted
            continue
        levels = _initial_levels(abs_path, project_root) if gitignore else ()
        _walk(abs_path, out, levels, st, excluder_for(abs_path), gitignore, found, warnings, visited_dirs, excluded,
              excluder_for if settings.hierarchy else None, includer, limit)

    files = sorted(found.values(), key=lambda p: (p.replace(os.sep, "/"), p))
    if as_strings:  # a whole project's index: Path objects cost more than the walk
        return files, warnings
    return [Path(p) for p in files], warnings


def _walk(
    top: str,
    top_out: str,
    levels: tuple[GitIgnoreLevel, ...],
    top_stat: os.stat_result,
    excluder: ExcludeMatcher,
    gitignore: bool,
    found: dict[str, str],
    warnings: list[str],
    visited: set[tuple[int, int]],
    excluded: list | None = None,
    excluder_for=None,
    includer: "IncludeMatcher | None" = None,
    limit: int | None = None,
) -> None:
    key = (top_stat.st_dev, top_stat.st_ino)
    if key in visited:
        return
    visited.add(key)
    stack: list[tuple[str, str, tuple[GitIgnoreLevel, ...], ExcludeMatcher]] = [(top, top_out, levels, excluder)]
    while stack:
        directory, out_dir, levels, excluder = stack.pop()
        try:
            with os.scandir(directory) as it:
                entries = list(it)
        except OSError as exc:
            warnings.append(f"{out_dir}: {exc.strerror or exc}")
            continue
        if excluder_for is not None and directory != top and any(e.name == "pyproject.toml" for e in entries):
            excluder = excluder_for(directory)  # a subproject's config: its excludes below it
        if gitignore:
            for entry in entries:
                if entry.name == ".gitignore":
                    level = _load_level(directory)
                    if level is not None:
                        levels = levels + (level,)
                    break
        for entry in entries:
            name = entry.name
            try:
                is_dir = entry.is_dir()  # follows symlinks
            except OSError:
                continue
            abs_path = entry.path
            if is_dir:
                if excluder.excluded(abs_path, name, True):
                    if excluded is not None:
                        excluded.append((_join_out(out_dir, name) + os.sep, "exclude / extend-exclude"))
                    continue
                if levels and _is_ignored(levels, abs_path, name, True):
                    if excluded is not None:
                        excluded.append((_join_out(out_dir, name) + os.sep, ".gitignore"))
                    continue
                try:
                    st = entry.stat()
                except OSError:
                    continue
                dkey = (st.st_dev, st.st_ino)
                if dkey in visited:  # symlink loop or a tree already walked
                    continue
                visited.add(dkey)
                stack.append((abs_path, _join_out(out_dir, name), levels, excluder))
            elif includer.included(abs_path, name) if includer is not None else name.endswith(PY_SUFFIXES):
                try:
                    if not entry.is_file():  # broken symlink, socket, ...
                        continue
                except OSError:
                    continue
                if excluder.excluded(abs_path, name, False):
                    if excluded is not None:
                        excluded.append((_join_out(out_dir, name), "exclude / extend-exclude"))
                    continue
                if levels and _is_ignored(levels, abs_path, name, False):
                    if excluded is not None:
                        excluded.append((_join_out(out_dir, name), ".gitignore"))
                    continue
                found.setdefault(os.path.normpath(abs_path), _join_out(out_dir, name))
                if limit is not None and len(found) > limit:
                    raise TooManyFiles(top)
