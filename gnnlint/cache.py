"""Per-file result cache in ``.gnnlint_cache/``.

A result is keyed on the file's content hash, everything that changes its
findings (enabled codes, library mode, target versions, gnnlint's version
and rule set) and the project facts other files told it (a class in
``models.py`` becomes compiled when ``train.py`` starts compiling it: its
findings change although its bytes did not). Entries are written atomically;
a corrupt or unreadable entry is a miss, never an error.

All entries live in one pack file (``pack.json``): a warm run over a large
tree reads one file instead of one per source file. It is rewritten
atomically at the end of a run (``flush``); two concurrent runs lose at most
each other's new entries, which are then recomputed.
"""
from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import asdict
from pathlib import Path
from typing import Optional

from gnnlint import __version__
from gnnlint.facts import FACT_KINDS, ExportedFacts, ImportRef

CACHE_DIR_NAME = ".gnnlint_cache"


class Cache:
    # Entries kept in the pack at most (oldest dropped first).
    MAX_ENTRIES = 50_000

    def __init__(self, root: Path) -> None:
        self.root = root
        self._rules_key = _rules_fingerprint()
        self._entries: Optional[dict] = None
        self._options_keys: dict = {}
        self._dirty = False

    @classmethod
    def for_settings(cls, settings) -> "Cache":
        base = settings.cache_dir or os.environ.get("GNNLINT_CACHE_DIR")
        root = Path(base) if base else Path(settings.project_root) / CACHE_DIR_NAME
        if not root.is_absolute():
            root = Path(settings.cwd) / root
        return cls(root)

    def key(self, data: bytes, options, facts) -> str:
        h = hashlib.sha256()
        h.update(data)
        options_key = self._options_keys.get(options)
        if options_key is None:
            options_key = self._options_keys[options] = repr((
                sorted(options.codes), options.assume_compiled, options.torch_version,
                options.pyg_version, __version__, self._rules_key)).encode()
        h.update(options_key)
        if facts is not None and not facts.is_empty():
            h.update(json.dumps([sorted(getattr(facts, kind).items()) for kind in FACT_KINDS]).encode())
        return h.hexdigest()

    @property
    def _pack(self) -> Path:
        return self.root / "pack.json"

    def _load(self) -> dict:
        if self._entries is None:
            try:
                loaded = json.loads(self._pack.read_text(encoding="utf-8"))
                self._entries = loaded if isinstance(loaded, dict) else {}
            except (OSError, ValueError):
                self._entries = {}  # missing or corrupt: start afresh
        return self._entries

    def get(self, key: str, path: str):
        from gnnlint.engine import FileResult
        from gnnlint.finding import Edit, Finding, Fix

        raw = self._load().get(key)
        if raw is None:
            return None
        try:
            findings = []
            for f in raw["findings"]:
                fix = None
                if f.get("fix"):
                    fx = f["fix"]
                    fix = Fix(fx["applicability"], fx["message"], tuple(Edit(**e) for e in fx["edits"]))
                values = {k: v for k, v in f.items() if k != "fix"}
                values["path"] = path  # the same bytes may live under another name
                findings.append(Finding(**values, fix=fix))
            exported = ExportedFacts(**{kind: [(ImportRef(**r), why) for r, why in raw["exported"][kind]]
                                        for kind in FACT_KINDS})
            return FileResult(path, findings, exported, parsed=raw["parsed"], too_big=int(raw.get("too_big", 0)))
        except (ValueError, KeyError, TypeError):
            return None

    def put(self, key: str, result) -> None:
        entries = self._load()
        entries.pop(key, None)  # re-insert: dict order is the age order
        entries[key] = {
            "findings": [asdict(f) for f in result.findings],
            "exported": {kind: [[asdict(r), why] for r, why in getattr(result.exported, kind)]
                         for kind in FACT_KINDS},
            "parsed": result.parsed,
        }
        if result.too_big:
            entries[key]["too_big"] = result.too_big
        self._dirty = True

    def flush(self) -> None:
        """Write the pack atomically if anything was added."""
        if not self._dirty or self._entries is None:
            return
        entries = self._entries
        if len(entries) > self.MAX_ENTRIES:
            for old in list(entries)[: len(entries) - self.MAX_ENTRIES]:
                del entries[old]
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            _tag_dir(self.root)
            fd, tmp = tempfile.mkstemp(dir=self.root, suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump(entries, out, separators=(",", ":"))
            os.replace(tmp, self._pack)
            self._dirty = False
        except OSError:
            pass  # a read-only tree still lints; it just isn't cached


def _tag_dir(root: Path) -> None:
    """Like ruff: a .gitignore inside the cache so it never gets committed."""
    marker = root / ".gitignore"
    if not marker.exists():
        try:
            marker.write_text("# Automatically created by gnnlint.\n*\n")
        except OSError:
            pass


def _rules_fingerprint() -> str:
    """Changes when any rule module changes (a development install)."""
    from gnnlint import rules

    h = hashlib.sha256()
    for folder in (Path(rules.__file__).parent, Path(rules.__file__).parent.parent):
        for path in sorted(folder.glob("*.py")):
            try:
                stat = path.stat()
            except OSError:
                continue
            h.update(f"{path.name}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    return h.hexdigest()[:16]
