"""``[tool.gnnlint]`` in pyproject.toml, merged with CLI overrides.

Follows ruff's habits: kebab-case keys, the nearest pyproject.toml that has the
tool table wins, unknown keys and codes are errors that name the key, and rule
selection resolves by specificity (a more specific selector beats a less
specific one; at equal specificity ``ignore`` wins).
"""
from __future__ import annotations

import difflib
import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

from gnnlint.finding import SEVERITIES
from gnnlint.path_globs import (  # noqa: F401 - re-exported: discover.py and tests import them from here
    PathGlob,
    _absolute,
    _relative_posix,
    glob_to_regex,
    looks_absolute,
)

try:  # Python 3.11+
    import tomllib as _toml
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as _toml  # type: ignore[no-redef]

SYNTAX_ERROR_CODE = "GNN000"

DEFAULT_INCLUDE: tuple[str, ...] = ("*.py", "*.pyi", "*.ipynb")
DEFAULT_EXCLUDE: tuple[str, ...] = (
    ".git",
    ".hg",
    ".svn",
    ".venv",
    "venv",
    ".tox",
    ".nox",
    "__pycache__",
    "build",
    "dist",
    "node_modules",
    "site-packages",
    ".mypy_cache",
    ".ruff_cache",
    ".pytest_cache",
    ".gnnlint_cache",
    ".eggs",
    "_build",
    "buck-out",
    ".direnv",
    "__pypackages__",
)

ASSUME_COMPILED_VALUES = ("detected", "modules")
BACKENDS = ("eager", "aot_eager", "inductor")


class ConfigError(Exception):
    """A problem with configuration; the message names the key, code or file."""


def known_codes() -> list[str]:
    """Every code a selector may name (GNN000 plus the registered rules)."""
    from gnnlint.rules import all_codes

    return list(all_codes())


# --------------------------------------------------------------------------
# Settings


@dataclass
class VerifySettings:
    targets: list[str] = field(default_factory=list)
    backend: str = "eager"
    timeout: float = 120.0  # --max-seconds


@dataclass
class Settings:
    select: list[str] = field(default_factory=lambda: ["ALL"])
    extend_select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    per_file_ignores: dict[str, list[str]] = field(default_factory=dict)
    exclude: list[str] = field(default_factory=lambda: list(DEFAULT_EXCLUDE))
    extend_exclude: list[str] = field(default_factory=list)
    # Which files a folder's walk lints (ruff's include / extend-include;
    # notebooks by default, as ruff >= 0.6). Files named are always linted.
    include: list[str] = field(default_factory=lambda: list(DEFAULT_INCLUDE))
    extend_include: list[str] = field(default_factory=list)
    respect_gitignore: bool = True
    fixable: list[str] = field(default_factory=lambda: ["ALL"])
    unfixable: list[str] = field(default_factory=list)
    assume_compiled: str = "detected"
    torch_version: str | None = None
    pyg_version: str | None = None
    cache_dir: str | None = None
    # Files larger than this many KiB are reported and skipped (0: no limit):
    # libcst needs ~570 bytes of memory per byte of source (770 MB for
    # torch's 1.4 MB common_methods_invocations.py).
    max_file_size: int = 1024
    # Report only findings of this severity or higher (info < warning < error).
    severity: str = "info"
    verify: VerifySettings = field(default_factory=VerifySettings)
    project_root: Path = field(default_factory=Path.cwd)
    config_path: Path | None = None
    # Directory relative paths are resolved against (the CLI's cwd).
    cwd: Path = field(default_factory=Path.cwd)
    # Later rule-selection layers, applied in order on top of select /
    # extend-select / ignore (ruff's): a config that ``extend``s another, then
    # the command line. Each is (select or None, extend-select, ignore); a
    # layer with a select starts afresh, one without adds and removes codes,
    # so ``--extend-select`` re-enables a code the config ignores.
    layers: list = field(default_factory=list)
    # Where each value came from (field -> "path" or "command line"), for
    # --show-settings; the hierarchy of configs below the project root.
    origins: dict = field(default_factory=dict)
    layer_origins: list = field(default_factory=list)  # where each of ``layers`` came from
    hierarchy: Any = None
    # what marks the project root: "config", "pyproject", "git", "--config",
    # or "cwd" (nothing found: the current directory)
    root_marker: str = "cwd"

    def __post_init__(self) -> None:
        self._memo: dict[str, Any] = {}

    def for_path(self, path: Path | str) -> "Settings":
        """The settings of ``path``: those of its closest [tool.gnnlint]
        between its folder and the project root (ruff's hierarchical
        configuration), these when there is none or --config/--isolated."""
        if self.hierarchy is None:
            return self
        return self.hierarchy.settings_for(_absolute(path, self.cwd))

    # -- codes ---------------------------------------------------------------

    def _memoized(self, name: str, key: Any, compute) -> Any:
        # Settings is mutable; key the memo on the inputs so edits invalidate it.
        hit = self._memo.get(name)
        if hit is not None and hit[0] == key:
            return hit[1]
        value = compute()
        self._memo[name] = (key, value)
        return value

    @property
    def enabled_codes(self) -> frozenset[str]:
        """Codes enabled for every file (before per-file-ignores)."""
        key = (tuple(self.select), tuple(self.extend_select), tuple(self.ignore), repr(self.layers))
        return self._memoized("enabled", key, self._resolve_enabled)

    def _resolve_enabled(self) -> frozenset[str]:
        codes = resolve_codes(self.select, self.extend_select, self.ignore)
        for select, extend_select, ignore in self.layers:
            if select is not None:
                codes = resolve_codes(select, extend_select, ignore)
            else:
                codes = resolve_codes([], extend_select, ignore, initial=codes)
        return frozenset(codes)

    def _per_file_matchers(self) -> list[tuple[PathGlob, frozenset[str]]]:
        key = tuple((k, tuple(v)) for k, v in self.per_file_ignores.items())

        def build() -> list[tuple[PathGlob, frozenset[str]]]:
            known = known_codes()
            out = []
            for pattern, codes in self.per_file_ignores.items():
                removed = frozenset(
                    c for sel in codes for c in _expand(sel, known) if c != SYNTAX_ERROR_CODE
                )
                if SYNTAX_ERROR_CODE in codes:  # only its exact code removes GNN000
                    removed |= {SYNTAX_ERROR_CODE}
                out.append((PathGlob.compile(pattern), removed))
            return out

        return self._memoized("per_file", key, build)

    def codes_for(self, path: Path | str) -> frozenset[str]:
        """Codes enabled for ``path``: the enabled set minus matching per-file-ignores."""
        enabled = self.enabled_codes
        if not self.per_file_ignores:
            return enabled
        abs_path = _absolute(path, self.cwd)
        rel = _relative_posix(abs_path, str(self.project_root))
        base = os.path.basename(abs_path)
        removed: set[str] = set()
        for glob, codes in self._per_file_matchers():
            if glob.matches(rel, abs_path, base):
                removed |= codes
        return enabled - removed if removed else enabled

    @property
    def fixable_codes(self) -> frozenset[str]:
        """Codes whose fixes may be applied: ``fixable`` minus ``unfixable``."""
        key = (tuple(self.fixable), tuple(self.unfixable))
        return self._memoized(
            "fixable",
            key,
            # GNN000 never has a fix, whatever the selectors say.
            lambda: frozenset(
                resolve_codes(self.fixable, [], self.unfixable, keep_syntax_error=False)
                - {SYNTAX_ERROR_CODE}
            ),
        )

    # -- cache key -----------------------------------------------------------

    def fingerprint(self) -> str:
        """Stable hash of everything that changes a file's findings."""
        from gnnlint import __version__

        payload = {
            "version": __version__,
            "known": sorted(known_codes()),
            "enabled": sorted(self.enabled_codes),
            "per_file_ignores": sorted(
                (k, sorted(v)) for k, v in self.per_file_ignores.items()
            ),
            "project_root": str(self.project_root),
            "assume_compiled": self.assume_compiled,
            "torch_version": self.torch_version,
            "pyg_version": self.pyg_version,
        }
        blob = json.dumps(payload, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(blob.encode()).hexdigest()


# --------------------------------------------------------------------------
# Rule selection


def _specificity(selector: str) -> int:
    return 0 if selector == "ALL" else len(selector)


def _expand(selector: str, known: Iterable[str]) -> list[str]:
    if selector == "ALL":
        return list(known)
    return [c for c in known if c.startswith(selector)]


def is_valid_selector(selector: str, known: Iterable[str] | None = None) -> bool:
    if selector == "ALL":
        return True
    if not selector:
        return False
    known = known_codes() if known is None else known
    return any(c.startswith(selector) for c in known)


def validate_selectors(
    selectors: Iterable[str], where: str, known: Iterable[str] | None = None
) -> None:
    """Raise ConfigError for the first selector that names no known code."""
    known = list(known_codes() if known is None else known)
    for sel in selectors:
        if not is_valid_selector(sel, known):
            raise ConfigError(f"unknown rule code or prefix {sel!r} in {where}")


def resolve_codes(
    select: Iterable[str],
    extend_select: Iterable[str] = (),
    ignore: Iterable[str] = (),
    known: Iterable[str] | None = None,
    *,
    keep_syntax_error: bool = True,
    initial: Iterable[str] = (),
) -> set[str]:
    """Enabled codes for these selectors, ruff's way.

    Selectors are applied from least to most specific (``ALL`` < ``GNN`` <
    ``GNN0`` < ... < ``GNN001``); at each level the selects are applied and
    then the ignores, so the more specific selector wins and a tie goes to
    ignore. GNN000 (syntax-error) stays on unless ignored by its exact code.
    """
    known = list(known_codes() if known is None else known)
    select, extend_select, ignore = list(select), list(extend_select), list(ignore)
    validate_selectors(select, "'select'", known)
    validate_selectors(extend_select, "'extend-select'", known)
    validate_selectors(ignore, "'ignore'", known)
    chosen = select + extend_select
    # ``initial``: the codes an earlier layer enabled (its ignores of GNN000 included)
    state: dict[str, bool] = {c: True for c in initial}
    initial = set(initial)
    if initial and SYNTAX_ERROR_CODE not in initial and SYNTAX_ERROR_CODE not in chosen:
        state[SYNTAX_ERROR_CODE] = False
        ignore = ignore + [SYNTAX_ERROR_CODE]
    for level in sorted({_specificity(s) for s in chosen + ignore}):
        for sel in chosen:
            if _specificity(sel) == level:
                for code in _expand(sel, known):
                    state[code] = True
        for sel in ignore:
            if _specificity(sel) == level:
                for code in _expand(sel, known):
                    state[code] = False
    enabled = {c for c, on in state.items() if on}
    if keep_syntax_error and SYNTAX_ERROR_CODE not in ignore:
        enabled.add(SYNTAX_ERROR_CODE)
    return enabled


# --------------------------------------------------------------------------
# Loading


def _read_toml(path: Path) -> dict:
    try:
        with open(path, "rb") as fh:
            return _toml.load(fh)
    except FileNotFoundError:
        raise ConfigError(f"config file not found: {path}") from None
    except (_toml.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"invalid TOML in {path}: {exc}") from None
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from None


def _gnnlint_table(doc: dict) -> dict | None:
    tool = doc.get("tool")
    if not isinstance(tool, dict):
        return None
    return tool.get("gnnlint")


def find_config(start: Path) -> Path | None:
    """Nearest pyproject.toml at or above ``start`` that has a [tool.gnnlint] table."""
    here = Path(os.path.abspath(start))
    if here.is_file():
        here = here.parent
    for directory in (here, *here.parents):
        candidate = directory / "pyproject.toml"
        if not candidate.is_file():
            continue
        try:
            text = candidate.read_bytes()
        except OSError:
            continue
        if b"gnnlint" not in text:  # cheap skip: no table can be there
            continue
        if _gnnlint_table(_read_toml(candidate)) is not None:
            return candidate
    return None


_FILE_KEYS = {
    "extend": "extend",
    "select": "select",
    "extend-select": "extend_select",
    "ignore": "ignore",
    "per-file-ignores": "per_file_ignores",
    "exclude": "exclude",
    "extend-exclude": "extend_exclude",
    "include": "include",
    "extend-include": "extend_include",
    "respect-gitignore": "respect_gitignore",
    "fixable": "fixable",
    "unfixable": "unfixable",
    "assume-compiled": "assume_compiled",
    "torch-version": "torch_version",
    "pyg-version": "pyg_version",
    "cache-dir": "cache_dir",
    "max-file-size": "max_file_size",
    "severity": "severity",
    "verify": "verify",
}
_VERIFY_KEYS = ("targets", "backend", "timeout")
_CODE_LISTS = ("select", "extend_select", "ignore", "fixable", "unfixable")
_STR_LISTS = _CODE_LISTS + ("exclude", "extend_exclude", "include", "extend_include")
_OPT_STRS = ("torch_version", "pyg_version", "cache_dir")
_OVERRIDE_KEYS = frozenset(_STR_LISTS + _OPT_STRS) | {
    "max_file_size",
    "severity",
    "respect_gitignore",
    "assume_compiled",
    "per_file_ignores",
}
_VERSION_RE = re.compile(r"^\d+(\.\d+)*([.+-]?[0-9A-Za-z.+-]*)?$")


def _type_name(value: Any) -> str:
    return {bool: "boolean", int: "integer", float: "float", str: "string",
            list: "array", dict: "table"}.get(type(value), type(value).__name__)


class _Where:
    """How to name a key in messages: file keys kebab-case with the table and
    file, CLI keys as their option."""

    def __init__(self, table: str | None, path: Path | None) -> None:
        self.table, self.path = table, path

    def key(self, field_name: str) -> str:
        if self.table is None:
            return "'--" + field_name.replace("_", "-") + "'"
        return "'" + field_name.replace("_", "-") + "'"

    def suffix(self) -> str:
        if self.table is None:
            return " (command line)"
        return f" in [{self.table}] ({self.path})"


def _check_str_list(value: Any, name: str, where: _Where) -> list[str]:
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return list(value)
    raise ConfigError(
        f"{where.key(name)} must be a list of strings, got {_type_name(value)}"
        f" {value!r}{where.suffix()}"
    )


def _check_globs(patterns: list[str], name: str, where: _Where, star_crosses_slash: bool = False) -> None:
    """An unusable glob (``[z-a]``) is a config error naming the key and the
    pattern, never a traceback when the files are walked."""
    for pattern in patterns:
        body = pattern.strip()
        body = body[1:] if body.startswith("!") else body
        try:
            re.compile(glob_to_regex(body, star_crosses_slash=star_crosses_slash))
        except re.error as exc:
            raise ConfigError(f"invalid glob {pattern!r} in {where.key(name)}: {exc}{where.suffix()}") from None


def _check_codes(values: list[str], name: str, where: _Where, known: list[str]) -> None:
    for sel in values:
        if not is_valid_selector(sel, known):
            raise ConfigError(
                f"unknown rule code or prefix {sel!r} in {where.key(name)}{where.suffix()}"
            )


def _check_choice(value: Any, name: str, choices: tuple[str, ...], where: _Where) -> str:
    if isinstance(value, str) and value in choices:
        return value
    allowed = ", ".join(repr(c) for c in choices)
    raise ConfigError(
        f"{where.key(name)} must be one of {allowed}, got {value!r}{where.suffix()}"
    )


def _check_version(value: Any, name: str, where: _Where) -> str | None:
    if value is None:
        return None
    if isinstance(value, str) and _VERSION_RE.match(value.strip()):
        return value.strip()
    raise ConfigError(
        f"{where.key(name)} must be a version string such as \"2.5\", got {value!r}{where.suffix()}"
    )


def _check_per_file(value: Any, where: _Where, known: list[str]) -> dict[str, list[str]]:
    name = "per_file_ignores"
    if not isinstance(value, Mapping):
        raise ConfigError(
            f"{where.key(name)} must be a table of glob = [codes], got "
            f"{_type_name(value)}{where.suffix()}"
        )
    out: dict[str, list[str]] = {}
    for pattern, codes in value.items():
        if not isinstance(pattern, str) or not pattern:
            raise ConfigError(f"{where.key(name)} has an empty glob{where.suffix()}")
        _check_globs([pattern], name, where, star_crosses_slash=True)
        if not (isinstance(codes, (list, tuple)) and all(isinstance(c, str) for c in codes)):
            raise ConfigError(
                f"{where.key(name)} ({pattern!r}) must be a list of codes, got "
                f"{_type_name(codes)} {codes!r}{where.suffix()}"
            )
        for sel in codes:
            if not is_valid_selector(sel, known):
                raise ConfigError(
                    f"unknown rule code or prefix {sel!r} in {where.key(name)} "
                    f"({pattern!r}){where.suffix()}"
                )
        out[pattern] = list(codes)
    return out


def _unknown_key(key: str, valid: Iterable[str], table: str, path: Path) -> ConfigError:
    msg = f"unknown key {key!r} in [{table}] ({path})"
    close = difflib.get_close_matches(str(key), list(valid), n=1)
    if close:
        msg += f"; did you mean {close[0]!r}?"
    return ConfigError(msg)


def _parse_table(table: Any, path: Path, known: list[str]) -> tuple[dict, VerifySettings]:
    """Validate a [tool.gnnlint] table into snake_case values."""
    if not isinstance(table, dict):
        raise ConfigError(f"[tool.gnnlint] must be a table, got {_type_name(table)} ({path})")
    where = _Where("tool.gnnlint", path)
    values: dict[str, Any] = {}
    verify = VerifySettings()
    for key, value in table.items():
        name = _FILE_KEYS.get(key)
        if name is None:
            raise _unknown_key(key, _FILE_KEYS, "tool.gnnlint", path)
        if name == "extend":
            if not isinstance(value, str) or not value:
                raise ConfigError(f"'extend' must be a path to a pyproject.toml, got {value!r}{where.suffix()}")
            values[name] = value
        elif name == "verify":
            verify = _parse_verify(value, path)
        elif name in _STR_LISTS:
            values[name] = _check_str_list(value, name, where)
            if name in _CODE_LISTS:
                _check_codes(values[name], name, where, known)
            else:
                _check_globs(values[name], name, where)
        elif name == "respect_gitignore":
            if not isinstance(value, bool):
                raise ConfigError(
                    f"'respect-gitignore' must be a boolean, got {_type_name(value)}"
                    f" {value!r}{where.suffix()}"
                )
            values[name] = value
        elif name == "assume_compiled":
            values[name] = _check_choice(value, name, ASSUME_COMPILED_VALUES, where)
        elif name == "severity":
            values[name] = _check_choice(value, name, SEVERITIES, where)
        elif name in ("torch_version", "pyg_version"):
            values[name] = _check_version(value, name, where)
        elif name == "cache_dir":
            if not isinstance(value, str) or not value:
                raise ConfigError(
                    f"'cache-dir' must be a non-empty string, got {value!r}{where.suffix()}"
                )
            values[name] = value
        elif name == "max_file_size":
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ConfigError(
                    f"'max-file-size' must be a non-negative integer (KiB), got {value!r}{where.suffix()}"
                )
            values[name] = value
        elif name == "per_file_ignores":
            values[name] = _check_per_file(value, where, known)
    return values, verify


def _parse_verify(table: Any, path: Path) -> VerifySettings:
    where = _Where("tool.gnnlint.verify", path)
    if not isinstance(table, dict):
        raise ConfigError(
            f"'verify' must be a table ([tool.gnnlint.verify]), got {_type_name(table)} ({path})"
        )
    out = VerifySettings()
    for key, value in table.items():
        if key not in _VERIFY_KEYS:
            raise _unknown_key(key, _VERIFY_KEYS, "tool.gnnlint.verify", path)
        if key == "targets":
            out.targets = _check_str_list(value, "targets", where)
        elif key == "backend":
            out.backend = _check_choice(value, "backend", BACKENDS, where)
        elif key == "timeout":
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
                raise ConfigError(
                    f"'timeout' must be a positive number of seconds, got {value!r}"
                    f"{where.suffix()}"
                )
            out.timeout = float(value)
    return out


def _parse_overrides(overrides: Mapping[str, Any], known: list[str]) -> dict[str, Any]:
    """Validate CLI values (snake_case keys; None means "not given")."""
    where = _Where(None, None)
    values: dict[str, Any] = {}
    for name, value in overrides.items():
        if name not in _OVERRIDE_KEYS:
            raise ConfigError(f"unknown setting {name!r} (command line)")
        if value is None:
            continue
        if name in _STR_LISTS:
            if isinstance(value, str):  # "--select GNN001,GNN002"
                value = [v.strip() for v in value.split(",") if v.strip()]
            else:
                value = _check_str_list(value, name, where)
                # click's multiple=True may still carry "a,b" items.
                value = [p.strip() for v in value for p in v.split(",") if p.strip()]
            if name in _CODE_LISTS:
                _check_codes(value, name, where, known)
            else:
                _check_globs(value, name, where)
            values[name] = value
        elif name == "respect_gitignore":
            if not isinstance(value, bool):
                raise ConfigError(f"'--respect-gitignore' must be a boolean, got {value!r}")
            values[name] = value
        elif name == "assume_compiled":
            values[name] = _check_choice(value, name, ASSUME_COMPILED_VALUES, where)
        elif name == "severity":
            values[name] = _check_choice(value, name, SEVERITIES, where)
        elif name in ("torch_version", "pyg_version"):
            values[name] = _check_version(value, name, where)
        elif name == "cache_dir":
            if not isinstance(value, (str, os.PathLike)) or not os.fspath(value):
                raise ConfigError(f"'--cache-dir' must be a path, got {value!r}")
            values[name] = os.fspath(value)
        elif name == "max_file_size":
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ConfigError(f"'--max-file-size' must be a non-negative integer (KiB), got {value!r}")
            values[name] = value
        elif name == "per_file_ignores":
            values[name] = _check_per_file(value, where, known)
    return values


def find_project_root(start: Path) -> tuple[Path, str]:
    """The project root for ``start`` (a folder or a file) and what marks it:
    the folder of the closest pyproject.toml with a [tool.gnnlint] table
    ("config"), else of the closest pyproject.toml ("pyproject"), else the
    git root ("git"), else ``start`` itself ("cwd")."""
    here = Path(os.path.abspath(start))
    if here.is_file():
        here = here.parent
    config = find_config(here)
    if config is not None:
        return config.parent, "config"
    git_root = None
    for directory in (here, *here.parents):
        if (directory / "pyproject.toml").is_file():
            return directory, "pyproject"
        if git_root is None and (directory / ".git").exists():
            git_root = directory
    return (git_root, "git") if git_root is not None else (here, "cwd")


def _load_file(path: Path, known: list[str], seen: tuple = ()) -> tuple[dict, VerifySettings, list, dict]:
    """A config file's values, following ``extend`` (a base config whose
    values this one overrides): (values, verify, selection layers after the
    base's own selection as (layer, origin), origins field -> file)."""
    path = Path(os.path.normpath(path))
    if path in seen:
        raise ConfigError(f"'extend' cycle: {' -> '.join(str(p) for p in (*seen, path))}")
    table = _gnnlint_table(_read_toml(path))
    if table is None:
        if seen:
            raise ConfigError(f"{path} (named by 'extend' in {seen[-1]}) has no [tool.gnnlint] table")
        return {}, VerifySettings(), [], {}
    values, verify = _parse_table(table, path, known)
    base_ref = values.pop("extend", None)
    if base_ref is None:
        return values, verify, [], {name: str(path) for name in values} | (
            {"verify": str(path)} if "verify" in table else {})
    base_path = Path(base_ref).expanduser()
    if not base_path.is_absolute():
        base_path = path.parent / base_path
    if not base_path.is_file():
        raise ConfigError(f"'extend' names a missing file {base_ref!r} in [tool.gnnlint] ({path})")
    merged, base_verify, layers, origins = _load_file(base_path, known, (*seen, path))
    selection = {k: values.pop(k) for k in ("select", "extend_select", "ignore") if k in values}
    if selection:
        layers = layers + [((selection.get("select"), selection.get("extend_select", []),
                             selection.get("ignore", [])), str(path))]
    for name, value in values.items():
        if name in ("extend_exclude", "extend_include", "unfixable"):
            value = merged.get(name, []) + value
        merged[name] = value
        origins[name] = str(path)
    if "verify" in table:
        base_verify, origins["verify"] = verify, str(path)
    return merged, base_verify, layers, origins


def _settings_from_file(used: Path | None, root: Path, cwd: Path, known: list[str], cli: dict) -> Settings:
    file_values: dict[str, Any] = {}
    verify = VerifySettings()
    layers: list = []
    origins: dict = {}
    if used is not None:
        file_values, verify, layers, origins = _load_file(used, known)
    settings = Settings(project_root=root, config_path=used, cwd=cwd, verify=verify)
    for name, value in file_values.items():
        setattr(settings, name, value)
    settings.layers = [layer for layer, _ in layers]
    settings.layer_origins = [origin for _, origin in layers]
    settings.origins = dict(origins)
    if "select" in cli:  # starts afresh: the files' selection layers are dropped
        settings.select = cli["select"]
        settings.extend_select = cli.get("extend_select", [])
        settings.ignore = cli.get("ignore", [])
        settings.layers, settings.layer_origins = [], []
        settings.origins.update({k: "command line" for k in ("select", "extend_select", "ignore")})
    elif "extend_select" in cli or "ignore" in cli:
        settings.layers.append((None, cli.get("extend_select", []), cli.get("ignore", [])))
        settings.layer_origins.append("command line")
    settings.extend_exclude = settings.extend_exclude + cli.get("extend_exclude", [])
    settings.unfixable = settings.unfixable + cli.get("unfixable", [])
    for name in ("extend_exclude", "unfixable"):
        if name in cli:
            settings.origins[name] = "command line"
    for name in (
        "exclude",
        "fixable",
        "respect_gitignore",
        "assume_compiled",
        "torch_version",
        "pyg_version",
        "cache_dir",
        "max_file_size",
        "severity",
        "per_file_ignores",
    ):
        if name in cli:
            setattr(settings, name, cli[name])
            settings.origins[name] = "command line"
    return settings


class ConfigHierarchy:
    """Each file's settings come from its closest [tool.gnnlint] between its
    folder and the project root (the root's own config when there is none
    below it); command-line values apply to all of them. Loaded once per
    folder."""

    def __init__(self, root_settings: Settings, known: list[str], cli: dict) -> None:
        self.root_settings = root_settings
        self.root = Path(os.path.normpath(os.path.abspath(root_settings.project_root)))
        self.known, self.cli = known, cli
        self._by_dir: dict[str, Settings] = {}
        self._config_memo: dict[str, Path | None] = {}
        self._by_config: dict[Path, Settings] = {}

    def config_for(self, directory: str) -> Path | None:
        """The closest config strictly below the project root, or None
        (memoised per folder: a folder's answer is its own config or its
        parent's)."""
        memo = self._config_memo
        if directory in memo:
            return memo[directory]
        root = str(self.root)
        if directory == root or not directory.startswith(root.rstrip(os.sep) + os.sep):
            found = None
        else:
            candidate = os.path.join(directory, "pyproject.toml")
            found = None
            if os.path.isfile(candidate):
                try:
                    with open(candidate, "rb") as fh:
                        text = fh.read()
                except OSError:
                    text = b""
                if b"gnnlint" in text and _gnnlint_table(_read_toml(Path(candidate))) is not None:
                    found = Path(candidate)
            if found is None:
                found = self.config_for(os.path.dirname(directory))
        memo[directory] = found
        return found

    def settings_for(self, abs_path: str) -> Settings:
        directory = os.path.dirname(abs_path)
        hit = self._by_dir.get(directory)
        if hit is None:
            config = self.config_for(directory)
            if config is None:
                hit = self.root_settings
            else:
                hit = self._by_config.get(config)
                if hit is None:
                    hit = _settings_from_file(config, config.parent, self.root_settings.cwd, self.known, self.cli)
                    self._by_config[config] = hit
            self._by_dir[directory] = hit
        return hit


def load_settings(
    *,
    cwd: Path,
    config_path: Path | None = None,
    isolated: bool = False,
    overrides: Mapping[str, Any] | None = None,
    start: Path | None = None,
) -> Settings:
    """Settings from the nearest [tool.gnnlint] (or ``config_path``) plus CLI overrides.

    The project root (``find_project_root``) is looked for from ``start``
    (default ``cwd``). CLI values win: the CLI's selectors are a last
    selection layer (``--select`` starts afresh, ``--extend-select`` and
    ``--ignore`` add and remove codes, whatever the file ignores or selects);
    CLI ``extend_exclude``/``unfixable`` are added to the file's lists and
    other values replace them. Without ``config_path``/``isolated``, files
    below the project root with their own [tool.gnnlint] get theirs
    (``Settings.for_path``).
    """
    cwd = Path(os.path.abspath(cwd))
    start = Path(os.path.abspath(cwd / start)) if start is not None else cwd
    if isolated and config_path is not None:
        raise ConfigError("--config cannot be used with --isolated")
    known = known_codes()
    cli = _parse_overrides(overrides or {}, known)

    used: Path | None = None
    if config_path is not None:
        used = Path(config_path)
        if not used.is_absolute():
            used = cwd / used
        if not used.is_file():
            raise ConfigError(f"config file not found: {used}")
        root, marker = used.parent, "--config"
    else:
        root, marker = find_project_root(start)
        if not isolated and marker == "config":
            used = find_config(start)
    settings = _settings_from_file(used, root, cwd, known, cli)
    settings.root_marker = marker
    if config_path is None and not isolated:
        settings.hierarchy = ConfigHierarchy(settings, known, cli)
    return settings
