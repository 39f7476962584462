"""Validation of a ``[tool.gnnlint]`` table and of command-line overrides:
each value checked, an error naming the key (kebab-case in a file, the
option on the command line) and the file; values come out snake_case."""
from __future__ import annotations

import difflib
import os
import re
from pathlib import Path
from typing import Any, Iterable, Mapping

from gnnlint.config_selectors import ConfigError, is_valid_selector
from gnnlint.config_settings import ASSUME_COMPILED_VALUES, BACKENDS, VerifySettings
from gnnlint.finding import SEVERITIES
from gnnlint.path_globs import glob_to_regex

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
