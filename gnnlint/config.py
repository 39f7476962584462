"""``[tool.gnnlint]`` in pyproject.toml, merged with CLI overrides.

Follows ruff's habits: kebab-case keys, the nearest pyproject.toml that has the
tool table wins, unknown keys and codes are errors that name the key, and rule
selection resolves by specificity (a more specific selector beats a less
specific one; at equal specificity ``ignore`` wins).

This module finds and loads the config files (``find_config``,
``find_project_root``, ``ConfigHierarchy``, ``load_settings``); the other
questions live in ``config_settings`` (the settings objects),
``config_selectors`` (rule selection) and ``config_tables`` (validating a
table or the command line). Their public names stay importable from here.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Mapping

from gnnlint import config_selectors as selectors
from gnnlint.config_selectors import (  # noqa: F401 - re-exported: cli, engine, server and tests import them from here
    SYNTAX_ERROR_CODE,
    ConfigError,
    is_valid_selector,
    known_codes,
    resolve_codes,
    validate_selectors,
)
from gnnlint.config_settings import (  # noqa: F401 - re-exported
    ASSUME_COMPILED_VALUES,
    BACKENDS,
    DEFAULT_EXCLUDE,
    DEFAULT_INCLUDE,
    Settings,
    VerifySettings,
)
from gnnlint.config_tables import _parse_overrides, _parse_table
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
    known = selectors.known_codes()
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
