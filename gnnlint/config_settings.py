"""The settings objects: ``Settings`` (what a run lints and reports, which
codes are enabled for a file, the cache key) and ``VerifySettings``."""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gnnlint import config_selectors as selectors
from gnnlint.config_selectors import SYNTAX_ERROR_CODE, _expand, resolve_codes
from gnnlint.path_globs import PathGlob, _absolute, _relative_posix

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
            known = selectors.known_codes()
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
            "known": sorted(selectors.known_codes()),
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
