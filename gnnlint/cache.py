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

The directory is gnnlint's only when gnnlint created it: a ``CACHEDIR.TAG``
with gnnlint's version inside marks it, and only then is a ``.gitignore``
written into it or does ``gnnlint clean`` remove it (and then only the files
gnnlint writes). A ``--cache-dir`` naming a folder of the user's (``src``,
``.``) is never written to nor deleted.
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
# The marker (the CACHEDIR.TAG convention: backup tools skip the folder).
MARKER = "CACHEDIR.TAG"
_SIGNATURE = "Signature: 8a477f597d28d172789f06886806bc55"
_GITIGNORE = "# Automatically created by gnnlint.\n*\n"
PACK = "pack.json"
STATS = "stat.json"


class Cache:
    # Entries kept in the pack at most (oldest dropped first).
    MAX_ENTRIES = 50_000

    def __init__(self, root: Path) -> None:
        self.root = root
        self._rules_key = _rules_fingerprint()
        self._entries: Optional[dict] = None
        self._options_keys: dict = {}
        self._digests: dict = {}  # id(bytes) -> (bytes, content digest)
        self._dirty = False
        self._stats: Optional[dict] = None
        self._stats_dirty = False
        # Why this directory is not used (it is not gnnlint's), for a warning.
        self.refused: Optional[str] = None

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
        digest = self.digest(data)
        if path is not None:
            self._remember(path, digest)
        return self.key_for_digest(digest, options, facts)

    def digest(self, data: bytes) -> str:
        """The content digest of ``data``, hashed once per bytes object in a run (the fact
        joins ask it of the bytes the engine read)."""
        held = self._digests.get(id(data))
        if held is not None and held[0] is data:
            return held[1]
        digest = hashlib.sha256(data).hexdigest()
        self._digests[id(data)] = (data, digest)  # the bytes held: their id is not reused
        return digest

    def forget_digests(self) -> None:
        self._digests.clear()

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
            if os.path.isdir(self.root) and not self._usable():
                self._stats = {}
                return self._stats
            try:
                loaded = json.loads((self.root / STATS).read_text(encoding="utf-8"))
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
        return self.root / PACK

    def _load(self) -> dict:
        if self._entries is None:
            self._entries = {}
            if os.path.isdir(self.root) and not self._usable():
                return self._entries
            try:
                loaded = json.loads(self._pack.read_text(encoding="utf-8"))
                self._entries = loaded if isinstance(loaded, dict) else {}
            except (OSError, ValueError):
                pass  # missing or corrupt: start afresh
        return self._entries

    def _usable(self) -> bool:
        """Is the existing root gnnlint's (or empty, so it can become ours)?"""
        problem = foreign(self.root, adopt_empty=True)
        if problem is not None and self.refused is None:
            self.refused = f"cache-dir {self.root}: {problem}; not caching"
        return problem is None

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
            if not isinstance(raw, dict) or not isinstance(raw.get("findings"), list):
                raise TypeError("not an entry")
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
                                        for kind in FACT_KINDS if raw["exported"].get(kind)})
            return FileResult(path, findings, exported, parsed=raw["parsed"], too_big=int(raw.get("too_big", 0)),
                              unread_options=int(raw.get("unread", 0)),
                              sweep_imports=tuple((str(m), int(lv), str(n)) for m, lv, n in raw.get("sweeps", ())))
        except (ValueError, KeyError, TypeError, AttributeError):
            self._entries.pop(key, None)  # a wrong shape is a miss (and is dropped)
            self._dirty = True
            return None

    def put_facts_only(self, key: str, sweep_imports: tuple = ()) -> None:
        """Remember that the file of ``key`` tells other files nothing (its
        bytes cannot export facts, or only sweeps to the ``sweep_imports``,
        whose files compile nothing today): a one-file run does not prefilter
        it again."""
        entries = self._load()
        value = [list(ref) for ref in sweep_imports] if sweep_imports else 0
        if entries.get("F" + key) != value:
            entries["F" + key] = value
            self._dirty = True

    def get_facts_only(self, key: str, path: str):
        from gnnlint.engine import FileResult

        value = self._load().get("F" + key)
        if value == 0:
            return FileResult(path)
        try:
            return FileResult(path, sweep_imports=tuple((str(m), int(lv), str(n)) for m, lv, n in value)) \
                if isinstance(value, list) else None
        except (TypeError, ValueError):
            return None

    # -- per-content facts the project joins read (gnnlint/fact_joins.py) ---
    # keyed on the file's content digest and gnnlint's code (what extracts them may change)

    def _words_key(self, digest: str) -> str:
        return "W" + hashlib.sha256(f"{digest}:{__version__}:{self._rules_key}".encode()).hexdigest()

    def import_words(self, digest: str) -> Optional[frozenset]:
        """The words after an ``import`` in the bytes of ``digest``
        (``fact_joins._import_words``), or None when not cached."""
        value = self._load().get(self._words_key(digest))
        if not isinstance(value, str):
            return None
        return frozenset(value.encode("ascii").split())

    def put_import_words(self, digest: str, words: frozenset) -> None:
        value = " ".join(sorted(word.decode("ascii") for word in words))
        entries = self._load()
        key = self._words_key(digest)
        if entries.get(key) != value:
            entries[key] = value
            self._dirty = True

    def put(self, key: str, result) -> None:
        entries = self._load()
        entries.pop(key, None)  # re-insert: dict order is the age order
        entries[key] = {
            "findings": [asdict(f) for f in result.findings],
            # the kinds a file exports (most export none): a smaller pack, read by every warm run
            "exported": {kind: [[asdict(r), why] for r, why in getattr(result.exported, kind)]
                         for kind in FACT_KINDS if getattr(result.exported, kind)},
            "parsed": result.parsed,
        }
        if result.too_big:
            entries[key]["too_big"] = result.too_big
        if result.unread_options:
            entries[key]["unread"] = result.unread_options
        if result.sweep_imports:
            entries[key]["sweeps"] = [list(ref) for ref in result.sweep_imports]
        self._dirty = True

    def flush(self) -> None:
        """Write the pack (and the stat index) atomically if anything was added."""
        if self._stats_dirty and self._stats is not None:
            if len(self._stats) > self.MAX_ENTRIES:
                for old in list(self._stats)[: len(self._stats) - self.MAX_ENTRIES]:
                    del self._stats[old]
            if self._write(STATS, self._stats):
                self._stats_dirty = False
        if not self._dirty or self._entries is None:
            return
        entries = self._entries
        if len(entries) > self.MAX_ENTRIES:
            for old in list(entries)[: len(entries) - self.MAX_ENTRIES]:
                del entries[old]
        if self._write(PACK, entries):
            self._dirty = False

    def _write(self, name: str, value) -> bool:
        """Replace ``name`` in the cache folder atomically -- only in a folder
        gnnlint created (or an empty one it now marks as its own)."""
        tmp = ""
        try:
            if not os.path.isdir(self.root):
                self.root.mkdir(parents=True, exist_ok=True)
            elif not self._usable():
                return False
            _tag_dir(self.root)
            _remove_stale_temps(self.root)
            fd, tmp = tempfile.mkstemp(dir=self.root, prefix=f"{name.split('.')[0]}.{os.getpid()}.", suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump(value, out, separators=(",", ":"))
            os.replace(tmp, self.root / name)
            tmp = ""
            return True
        except OSError:
            return False  # a read-only tree still lints; it just isn't cached
        finally:
            if tmp:  # interrupted or failed: never leave a half-written file behind
                try:
                    os.unlink(tmp)
                except OSError:
                    pass


def _tag_dir(root: Path) -> None:
    """Mark the folder as gnnlint's (first the marker, then, like ruff, a
    .gitignore so it never gets committed). Only called on a folder that is
    gnnlint's or empty."""
    marker = root / MARKER
    if not marker.exists():
        marker.write_text(f"{_SIGNATURE}\n# This file is a cache directory tag created by gnnlint {__version__}.\n"
                          "# For information about cache directory tags see https://bford.info/cachedir/\n")
    ignore = root / ".gitignore"
    if not ignore.exists():
        ignore.write_text(_GITIGNORE)


def _is_ours(name: str) -> bool:
    """The files gnnlint writes in its cache folder."""
    return name in (MARKER, ".gitignore", PACK, STATS) or \
        (name.startswith(("pack.", "stat.", "tmp")) and name.endswith(".tmp"))


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists, not ours to signal
    return True


def _remove_stale_temps(root: Path) -> None:
    """Half-written packs of runs that were killed (their pid is gone)."""
    for name in os.listdir(root):
        parts = name.split(".")
        if name.endswith(".tmp") and len(parts) >= 4 and parts[0] in ("pack", "stat") and parts[1].isdigit() \
                and not _pid_alive(int(parts[1])):
            try:
                os.unlink(root / name)
            except OSError:
                pass


def foreign(root: Path, adopt_empty: bool = False) -> Optional[str]:
    """Why ``root`` is not a gnnlint cache folder, or None when it is one:
    it holds gnnlint's marker (or, from gnnlint before the marker, only a
    pack.json and gnnlint's .gitignore) and nothing but the files gnnlint
    writes. ``adopt_empty``: an empty folder may become one."""
    if os.path.islink(root):
        return "is a symbolic link"
    if not os.path.isdir(root):
        return "is not a directory"
    try:
        names = os.listdir(root)
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc})"
    if not names and adopt_empty:
        return None
    try:
        tag = (root / MARKER).read_text(encoding="utf-8", errors="replace")
        marked = tag.startswith(_SIGNATURE) and "created by gnnlint" in tag
    except OSError:
        marked = False
    if not marked:
        try:
            legacy = (root / ".gitignore").read_text(encoding="utf-8") == _GITIGNORE and \
                (PACK in names or STATS in names)
        except (OSError, ValueError):
            legacy = False
        if not legacy:
            return f"is not a gnnlint cache (no {MARKER} written by gnnlint)"
    others = sorted(n for n in names if not _is_ours(n) or os.path.isdir(root / n))
    if others:
        shown = ", ".join(others[:3]) + (", ..." if len(others) > 3 else "")
        return f"holds files gnnlint did not write ({shown})"
    return None


def remove(root: Path) -> Optional[str]:
    """``gnnlint clean``: delete the cache folder ``root`` if it is gnnlint's
    (only the files gnnlint writes, then the empty folder). Returns why it
    was refused, or None."""
    problem = foreign(root)
    if problem is not None:
        return problem
    for name in os.listdir(root):
        os.unlink(root / name)
    os.rmdir(root)
    return None


def _rules_fingerprint() -> str:
    """Changes when any module of gnnlint changes (a development install): the
    rules, and the analyses they ask (``semantic/``), which decide findings as much."""
    import gnnlint

    h = hashlib.sha256()
    package = Path(gnnlint.__file__).parent
    for folder in (package, package / "rules", package / "semantic"):
        for path in sorted(folder.glob("*.py")):
            try:
                stat = path.stat()
            except OSError:
                continue
            h.update(f"{path.name}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    return h.hexdigest()[:16]
