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
        self._stats: Optional[dict] = None
        self._stats_dirty = False

    @classmethod
    def for_settings(cls, settings) -> "Cache":
        base = settings.cache_dir or os.environ.get("GNNLINT_CACHE_DIR")
        root = Path(base) if base else Path(settings.project_root) / CACHE_DIR_NAME
        if not root.is_absolute():
            root = Path(settings.cwd) / root
        return cls(root)

    def key(self, data: bytes, options, facts, path: Optional[str] = None) -> str:
        """The entry's key; ``path`` (absolute): remember its stat and digest,
        so a later run that indexes it only for facts need not read it."""
        digest = hashlib.sha256(data).hexdigest()
        if path is not None:
            self._remember(path, digest)
        return self.key_for_digest(digest, options, facts)

    def key_for_digest(self, digest: str, options, facts) -> str:
        h = hashlib.sha256()
        h.update(digest.encode())
        options_key = self._options_keys.get(options)
        if options_key is None:
            options_key = self._options_keys[options] = repr((
                sorted(options.codes), options.assume_compiled, options.torch_version,
                options.pyg_version, __version__, self._rules_key)).encode()
        h.update(options_key)
        if facts is not None and not facts.is_empty():
            h.update(json.dumps([sorted(getattr(facts, kind).items()) for kind in FACT_KINDS]).encode())
        return h.hexdigest()

    # -- stat index: path -> (mtime_ns, size, content digest) ---------------
    # For files read only for the facts they give others (not reported), an
    # unchanged stat stands for unchanged bytes, as in ruff's cache: a
    # one-file run in a large project then reads no other file.

    def _stats_map(self) -> dict:
        if self._stats is None:
            try:
                loaded = json.loads((self.root / "stat.json").read_text(encoding="utf-8"))
                self._stats = loaded if isinstance(loaded, dict) else {}
            except (OSError, ValueError):
                self._stats = {}
        return self._stats

    def digest_if_unchanged(self, path: str) -> Optional[str]:
        """The content digest recorded for ``path`` if its mtime and size
        are still those recorded, else None."""
        try:
            st = os.stat(path)
        except OSError:
            return None
        entry = self._stats_map().get(path)
        if isinstance(entry, list) and len(entry) == 3 and entry[0] == st.st_mtime_ns and entry[1] == st.st_size:
            return entry[2]
        return None

    def _remember(self, path: str, digest: str) -> None:
        try:
            st = os.stat(path)
        except OSError:
            return
        entry = [st.st_mtime_ns, st.st_size, digest]
        stats = self._stats_map()
        if stats.get(path) != entry:
            stats[path] = entry
            self._stats_dirty = True

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

    def get(self, key: str, path: str, findings: bool = True):
        """The cached result, or None. ``findings=False``: only what the file
        tells others (a file indexed for facts: its findings are not wanted)."""
        from gnnlint.engine import FileResult
        from gnnlint.finding import Edit, Finding, Fix

        raw = self._load().get(key)
        if raw is None:
            return None
        wanted = findings
        try:
            findings = []
            for f in raw["findings"] if wanted else ():
                fix = None
                if f.get("fix"):
                    fx = f["fix"]
                    fix = Fix(fx["applicability"], fx["message"], tuple(Edit(**e) for e in fx["edits"]))
                values = {k: v for k, v in f.items() if k != "fix"}
                values["path"] = path  # the same bytes may live under another name
                findings.append(Finding(**values, fix=fix))
            exported = ExportedFacts(**{kind: [(ImportRef(**r), why) for r, why in raw["exported"][kind]]
                                        for kind in FACT_KINDS if raw["exported"][kind]})
            return FileResult(path, findings, exported, parsed=raw["parsed"], too_big=int(raw.get("too_big", 0)))
        except (ValueError, KeyError, TypeError):
            return None

    def put_facts_only(self, key: str) -> None:
        """Remember that the file of ``key`` tells other files nothing (its
        bytes cannot export facts): a one-file run does not prefilter it again."""
        entries = self._load()
        if ("F" + key) not in entries:
            entries["F" + key] = 0
            self._dirty = True

    def get_facts_only(self, key: str, path: str):
        from gnnlint.engine import FileResult

        return FileResult(path) if self._load().get("F" + key) == 0 else None

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
        """Write the pack (and the stat index) atomically if anything was added."""
        if self._stats_dirty and self._stats is not None:
            if len(self._stats) > self.MAX_ENTRIES:
                for old in list(self._stats)[: len(self._stats) - self.MAX_ENTRIES]:
                    del self._stats[old]
            if self._write("stat.json", self._stats):
                self._stats_dirty = False
        if not self._dirty or self._entries is None:
            return
        entries = self._entries
        if len(entries) > self.MAX_ENTRIES:
            for old in list(entries)[: len(entries) - self.MAX_ENTRIES]:
                del entries[old]
        if self._write("pack.json", entries):
            self._dirty = False

    def _write(self, name: str, value) -> bool:
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            _tag_dir(self.root)
            fd, tmp = tempfile.mkstemp(dir=self.root, suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump(value, out, separators=(",", ":"))
            os.replace(tmp, self.root / name)
            return True
        except OSError:
            return False  # a read-only tree still lints; it just isn't cached


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
