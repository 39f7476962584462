"""Applying fixes to files safely (``gnnlint check --fix`` / ``gnnlint fix``).

Edits address 1-based (line, column) positions in characters, as libcst's
positions do. Everything outside the edited spans is kept byte-for-byte:
lines are split only at ``\\r\\n``, ``\\r`` and ``\\n`` (libcst's line breaks,
not ``str.splitlines``' form feeds and ``\\u2028``), a BOM and the file's
encoding are restored when the text is encoded back, and newlines inside an
inserted text follow the file's own line endings.

``fix_paths`` is ruff's contract:

- every allowed fix is applied: safe ones, unsafe ones with ``unsafe``, only
  for codes in ``settings.fixable_codes``, never for a finding a ``# noqa``
  suppresses;
- several fixes in a file are applied together; a fix that overlaps one
  already taken waits for the next pass; the file is linted again (with the
  same cross-file facts) and fixed until stable, at most ``MAX_PASSES`` times;
- a fixed text that does not parse (libcst, and ``compile()`` when the
  original compiled) is never written: the rule whose fix broke it is dropped
  for that file and reported as an internal error;
- writes are atomic (a temporary file in the same directory, then
  ``os.replace``), keep the file's mode, and a file that changed on disk since
  it was read is not overwritten (reported instead);
- with ``diff``, unified diffs are returned and nothing is written.
"""
from __future__ import annotations

import codecs
import difflib
import io
import os
import re
import stat
import tempfile
import tokenize
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Optional, Sequence

from gnnlint.finding import Finding

_RANK = {"safe": 0, "unsafe": 1, "display-only": 2}

# How many lint -> fix rounds a file gets before we stop and report it.
MAX_PASSES = 5

# libcst's (and Python's tokenizer's) line breaks. ``str.splitlines`` also
# breaks at \x0b, \x0c, \x1c-\x1e, \x85, \u2028 and \u2029, which would shift
# every position after such a character in a comment or a string.
_LINE_RE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
_NEWLINE_RE = re.compile(r"\r\n|\r|\n")


def split_lines(text: str) -> list[str]:
    """``text`` cut after each ``\\r\\n``, ``\\r`` or ``\\n`` (ends kept)."""
    return _LINE_RE.findall(text)


def _line_offsets(text: str) -> list[int]:
    offsets = [0]
    for line in split_lines(text):
        offsets.append(offsets[-1] + len(line))
    return offsets


def _offset(offsets: list[int], line: int, col: int) -> int:
    if line - 1 >= len(offsets):
        return offsets[-1]
    return offsets[line - 1] + col - 1


def newline_of(text: str) -> str:
    """The file's line ending: the first one it uses (``\\n`` when none)."""
    m = _NEWLINE_RE.search(text)
    return m.group(0) if m else "\n"


def allowed(finding: Finding, unsafe: bool) -> bool:
    fix = finding.fix
    if fix is None or fix.applicability == "display-only":
        return False
    return fix.applicability == "safe" or unsafe


def apply_fixes(text: str, findings: Iterable[Finding], unsafe: bool = False) -> tuple[str, list[Finding]]:
    """Apply the non-overlapping fixes of ``findings``; return the new text and
    the findings whose fixes were applied. A fix that overlaps one already
    taken waits for the next pass (the caller loops until stable).

    Newlines in an inserted text are written in the file's own style (a rule
    writes ``"import torch\\n"``; a CRLF file gets ``"import torch\\r\\n"``)."""
    offsets = _line_offsets(text)
    newline = newline_of(text)
    chosen: list[tuple[int, int, str]] = []
    applied: list[Finding] = []
    taken: list[tuple[int, int]] = []
    for finding in sorted(findings, key=lambda f: (f.line, f.col, f.code)):
        if not allowed(finding, unsafe):
            continue
        spans = []
        for edit in finding.fix.edits:  # type: ignore[union-attr]
            start = _offset(offsets, edit.line, edit.col)
            end = _offset(offsets, edit.end_line, edit.end_col)
            content = edit.content
            if newline != "\n" and "\n" in content:
                content = _NEWLINE_RE.sub(newline, content)
            spans.append((start, end, content))
        if any(_overlaps(s, e, ts, te) for s, e, _ in spans for ts, te in taken):
            continue
        if any(_overlaps(s1, e1, s2, e2) for i, (s1, e1, _) in enumerate(spans)
               for (s2, e2, _) in spans[i + 1:]):
            continue  # a fix whose own edits overlap is malformed: never applied
        taken.extend((s, e) for s, e, _ in spans)
        chosen.extend(spans)
        applied.append(finding)
    for start, end, content in sorted(chosen, key=lambda s: (s[0], s[1]), reverse=True):
        text = text[:start] + content + text[end:]
    return text, applied


def _overlaps(s1: int, e1: int, s2: int, e2: int) -> bool:
    if s1 == e1 or s2 == e2:  # insertions conflict only at the same point inside a span
        return s2 < s1 < e2 or s1 < s2 < e1 or (s1 == s2 and e1 == e2)
    return s1 < e2 and s2 < e1


# ---------------------------------------------------------------------- encoding
@dataclass(frozen=True)
class SourceCodec:
    """How a file's bytes map to its text and back (BOM, encoding cookie)."""

    encoding: str  # a codec name; "utf-8-sig" means UTF-8 with a BOM

    @classmethod
    def detect(cls, data: bytes) -> "SourceCodec":
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        return cls(codecs.lookup(encoding).name)

    def decode(self, data: bytes) -> str:
        text = data.decode(self.encoding)
        return text[1:] if text.startswith("\ufeff") else text

    def encode(self, text: str) -> bytes:
        if self.encoding == "utf-8-sig":
            return codecs.BOM_UTF8 + text.encode("utf-8")
        return text.encode(self.encoding)


# ---------------------------------------------------------------------- one file
@dataclass
class FileFix:
    """What fixing one file did (in memory; nothing is written here)."""

    path: str
    original: bytes
    fixed: bytes  # == original when nothing changed
    original_text: str = ""
    text: str = ""  # the fixed text (decoded)
    applied: list[Finding] = field(default_factory=list)
    remaining: list[Finding] = field(default_factory=list)  # noqa applied, for ``text``
    original_remaining: list[Finding] = field(default_factory=list)  # for ``original_text``
    errors: list[str] = field(default_factory=list)
    diff: str = ""  # set when the text is not the file (a notebook's per-cell diff)

    @property
    def changed(self) -> bool:
        return self.fixed != self.original


def _visible(findings: list[Finding], text: str) -> list[Finding]:
    from gnnlint.suppress import filter_findings, parse_noqa

    return filter_findings(findings, parse_noqa(text))


def _compiles(data: bytes, path: str) -> bool:
    """Does CPython compile these bytes (what ``py_compile`` checks)? Nothing
    is executed; warnings (invalid escapes...) are silenced."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(data, path, "exec", dont_inherit=True)
        return True
    except (SyntaxError, ValueError, OverflowError, MemoryError, RecursionError):
        return False


def _parses(data: bytes) -> bool:
    import libcst as cst

    try:
        cst.parse_module(data)
        return True
    except Exception:  # noqa: BLE001 - ParserSyntaxError, RecursionError, decode errors
        return False


def _candidates(findings: Iterable[Finding], unsafe: bool, fixable: Optional[frozenset[str]],
                dropped: set[str]) -> list[Finding]:
    return [f for f in findings
            if allowed(f, unsafe) and (fixable is None or f.code in fixable) and f.code not in dropped]


def fix_source(path: str, data: bytes, options, facts=None, *, unsafe: bool = False,
               fixable: Optional[frozenset[str]] = None, findings: Optional[list[Finding]] = None,
               lint: Optional[Callable[[bytes], list[Finding]]] = None) -> FileFix:
    """Fix one file's bytes in memory: lint -> apply -> lint ... until stable.

    ``options``: the file's ``LintOptions``; ``facts``: the ``ProjectFacts``
    other files gave it (the same facts for every pass); ``fixable``: codes
    whose fixes may be applied (None: all); ``findings``: the raw findings of
    ``data`` if already known; ``lint``: replaces the engine (tests).
    """
    if lint is None:
        from gnnlint.engine import lint_one

        def lint(blob: bytes) -> list[Finding]:
            result = lint_one(path, blob, options, facts)
            return list(result.findings)

    result = FileFix(path, data, data)
    try:
        codec = SourceCodec.detect(data)
        text = codec.decode(data)
    except (SyntaxError, UnicodeDecodeError, LookupError) as exc:
        result.errors.append(f"{path}: cannot decode source: {exc}")
        return result
    result.original_text = result.text = text
    if codec.encode(text) != data:  # a codec that does not round-trip: never rewrite
        raw = findings if findings is not None else lint(data)
        result.original_remaining = result.remaining = _visible(raw, text)
        if _candidates(result.remaining, unsafe, fixable, set()):
            result.errors.append(f"{path}: not fixed: its bytes do not round-trip through {codec.encoding}")
        return result

    raw = findings if findings is not None else lint(data)
    visible = _visible(raw, text)
    result.original_remaining = visible
    must_compile = _compiles(data, path)

    def valid(candidate: str) -> bool:
        try:
            blob = codec.encode(candidate)
        except UnicodeEncodeError:
            return False
        return _parses(blob) and (not must_compile or _compiles(blob, path))

    dropped: set[str] = set()
    passes = 0
    while True:
        todo = _candidates(visible, unsafe, fixable, dropped)
        if not todo:
            break
        if passes == MAX_PASSES:
            codes = ", ".join(sorted({f.code for f in todo}))
            result.errors.append(f"{path}: fixes did not converge after {MAX_PASSES} passes ({codes})")
            break
        passes += 1
        new_text, applied, bad = _apply_checked(text, todo, unsafe, valid)
        for code in bad:
            dropped.add(code)
            result.errors.append(f"internal error: fix for {code} produced invalid code in {path}")
        if new_text == text:
            if bad:
                continue  # the other codes' fixes are tried again without the bad one
            break  # fixes that change nothing: stable
        text = new_text
        result.applied.extend(applied)
        visible = _visible(lint(codec.encode(text)), text)
    result.text = text
    result.fixed = codec.encode(text)
    result.remaining = visible
    return result


def _apply_checked(text: str, todo: list[Finding], unsafe: bool,
                   valid: Callable[[str], bool]) -> tuple[str, list[Finding], list[str]]:
    """``apply_fixes`` whose result must be ``valid``. When it is not, codes are
    added back one at a time (in code order) and a code whose fixes make the
    text invalid is dropped: deterministic, and it names the culprit even when
    only a combination breaks."""
    new_text, applied = apply_fixes(text, todo, unsafe)
    if new_text == text or valid(new_text):
        return new_text, applied, []
    good: list[str] = []
    bad: list[str] = []
    for code in sorted({f.code for f in applied}):
        trial, _ = apply_fixes(text, [f for f in applied if f.code in good or f.code == code], unsafe)
        if trial == text or valid(trial):
            good.append(code)
        else:
            bad.append(code)
    new_text, applied = apply_fixes(text, [f for f in applied if f.code in good], unsafe)
    if new_text != text and not valid(new_text):  # cannot happen; never write it anyway
        return text, [], sorted(set(bad) | set(good))
    return new_text, applied, bad


# ---------------------------------------------------------------------- diff
def unified_diff(path: str, old: str, new: str) -> str:
    """A ``diff -u`` / ``git diff`` style patch (``--- a/path`` ``+++ b/path``)."""
    a, b = split_lines(old), split_lines(new)
    out: list[str] = []
    for line in difflib.unified_diff(a, b, fromfile=f"a/{path}", tofile=f"b/{path}", lineterm="\n", n=3):
        if line.endswith(("\n", "\r")):
            out.append(line)
        else:
            out.append(line + "\n\\ No newline at end of file\n")
    return "".join(out)


# ---------------------------------------------------------------------- writing
class FileChangedError(Exception):
    pass


def write_atomic(path: str, expected: bytes, data: bytes) -> None:
    """Replace ``path``'s contents by ``data`` if they are still ``expected``.

    The bytes go to a temporary file in the same directory that is flushed,
    given the original's mode and renamed over it with ``os.replace``, so a
    reader sees the old file or the new one, never a partial one; an
    interruption leaves the old file and removes the temporary one. A symlink
    is followed: its target is rewritten and the link kept.
    """
    target = os.path.realpath(path)
    folder = os.path.dirname(target) or "."
    st = os.stat(target)
    if not os.access(target, os.W_OK):  # like an editor (and ruff): a read-only file stays as it is
        raise PermissionError(13, "Permission denied (the file is read-only)", path)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{os.path.basename(target)}.{os.getpid()}.",
                               suffix=TMP_SUFFIX)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(tmp, stat.S_IMODE(st.st_mode))
        if hasattr(os, "chown") and (st.st_uid != os.getuid() or st.st_gid != os.getgid()):
            try:
                os.chown(tmp, st.st_uid, st.st_gid)
            except OSError:
                pass
        # Last moment check: the file must still hold what was linted.
        with open(target, "rb") as current:
            if current.read() != expected:
                raise FileChangedError(path)
        os.replace(tmp, target)
        tmp = ""
    finally:
        if tmp:
            try:
                os.unlink(tmp)
            except OSError:
                pass


TMP_SUFFIX = ".gnnlint.tmp"
_TMP_RE = re.compile(r"\.(?P<name>.+)\.(?P<pid>\d+)\.[^.]+" + re.escape(TMP_SUFFIX) + r"\Z")


def remove_stale_temps(folders: Iterable[str]) -> None:
    """Remove the temporary files of ``write_atomic`` that a killed run left
    in ``folders`` (the run that wrote one, named in it, is gone)."""
    from gnnlint.cache import _pid_alive

    for folder in folders:
        try:
            names = [n for n in os.listdir(folder) if n.endswith(TMP_SUFFIX)]
        except OSError:
            continue
        for name in names:
            m = _TMP_RE.match(name)
            if m is not None and not _pid_alive(int(m.group("pid"))):
                try:
                    os.unlink(os.path.join(folder, name))
                except OSError:
                    pass


# ---------------------------------------------------------------------- many files
@dataclass
class FixOutcome:
    remaining: list[Finding] = field(default_factory=list)
    fixed: list[Finding] = field(default_factory=list)
    diffs: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    sources: dict[str, str] = field(default_factory=dict)
    changed_files: list[str] = field(default_factory=list)


def lint_project(files: Sequence[Path], options_for, jobs: int = 1, index: Sequence[Path] = (),
                 contents: Optional[dict] = None, cache=None):
    """The engine's two-phase lint (no cache) and the ``ProjectFacts`` each
    file was linted with, so a fixed file is linted again knowing what the
    rest of the project (``index``) says about it."""
    from gnnlint.engine import check_files

    result = check_files(files, options_for, jobs, cache, index=index, contents=contents)
    return result, result.facts


def _fix_job(args) -> FileFix:
    path, options, facts, unsafe, fixable = args
    from gnnlint.engine import read_source

    data, error = read_source(path, magics=False)  # fixes are written back: never over blanked IPython lines
    if data is None:
        return FileFix(path, b"", b"", errors=[error or f"{path}: cannot read"])
    try:
        result = fix_source(path, data, options, facts, unsafe=unsafe, fixable=fixable)
        if path.endswith(".ipynb"):
            from gnnlint.notebook import notebook_fix

            result = notebook_fix(result)
        return result
    except Exception as exc:  # noqa: BLE001 - one file's bug must not lose the others' fixes
        return FileFix(path, data, data, errors=[f"internal error while fixing {path}: {exc!r}"])


def _one_name_per_file(files: Sequence[Path]) -> list[Path]:
    """A file reached under two names (a symlink, a hard link) is fixed under
    the first one only: the second write would find it changed on disk and
    leave a stale finding."""
    seen: set = set()
    out = []
    for path in files:
        try:
            st = os.stat(path)
            key: object = (st.st_dev, st.st_ino)
        except OSError:
            key = os.path.realpath(path)
        if key not in seen:
            seen.add(key)
            out.append(path)
    return out


def fix_paths(files: list[Path], settings, *, unsafe: bool, diff: bool, jobs: int,
              project_facts: bool = True, use_cache: bool = False) -> FixOutcome:
    """Fix ``files`` (already discovered) per ``settings``; see the module doc.
    ``project_facts``: the rest of the project is read for cross-file facts
    (``use_cache``: through the on-disk cache, as ``check`` does)."""
    from gnnlint.engine import UnmarkedRootTooLarge, apply_noqa, options_resolver, parallel_map, project_index_files

    outcome = FixOutcome()
    files = _one_name_per_file(files)
    if not diff:
        remove_stale_temps({os.path.dirname(os.path.realpath(p)) for p in files})
    options_for = options_resolver(settings)
    fixable = frozenset(settings.fixable_codes)
    from gnnlint.config import ConfigError

    try:
        index = project_index_files(files, settings) if project_facts else []
    except ConfigError as exc:  # a broken config elsewhere in the tree: the named files still get fixed
        index = []
        outcome.errors.append(f"the rest of the project was not read for cross-file facts: {exc}")
    except UnmarkedRootTooLarge as exc:
        index = []
        outcome.errors.append(str(exc))
    cache = None
    if use_cache:
        from gnnlint.cache import Cache

        cache = Cache.for_settings(settings)
    try:
        first, facts_by_path = lint_project(files, options_for, jobs, index, cache=cache)
    finally:
        if cache is not None:
            cache.flush()
    outcome.errors.extend(first.errors)

    by_path: dict[str, list[Finding]] = {}
    for f in first.findings:
        by_path.setdefault(f.path, []).append(f)
    # Only files with a fix we may apply are read again and fixed; whether a
    # `# noqa` hides it is decided on the text the fixer reads.
    todo = [p for p, group in by_path.items() if _candidates(group, unsafe, fixable, set())]
    jobs_args = [(p, options_for(Path(p)), facts_by_path.get(p), unsafe, fixable) for p in todo]
    results: dict[str, FileFix] = {r.path: r for r in parallel_map(jobs, _fix_job, jobs_args) if r is not None}
    for path in todo:
        if path not in results:  # its worker process died: the file is left as it was
            outcome.errors.append(f"{path}: not fixed: the worker process fixing it died")

    remaining: list[Finding] = []
    texts: dict[str, str] = {}
    for path, group in by_path.items():
        res = results.get(path)
        if res is None:
            remaining.extend(group)  # noqa applied below, with the rest
            continue
        outcome.errors.extend(res.errors)
        if not res.changed:
            remaining.extend(res.remaining)
            texts[path] = res.text
            continue
        if diff:
            outcome.diffs.append(res.diff or unified_diff(path, res.original_text, res.text))
            outcome.fixed.extend(res.applied)
            outcome.changed_files.append(path)
            remaining.extend(res.remaining)
            texts[path] = res.text
            continue
        try:
            write_atomic(path, res.original, res.fixed)
        except FileChangedError:
            outcome.errors.append(f"{path}: changed on disk while it was being fixed; not overwritten")
            remaining.extend(res.original_remaining)
            texts[path] = res.original_text
            continue
        except OSError as exc:
            outcome.errors.append(f"{path}: cannot write: {exc.strerror or exc}")
            remaining.extend(res.original_remaining)
            texts[path] = res.original_text
            continue
        outcome.fixed.extend(res.applied)
        outcome.changed_files.append(path)
        remaining.extend(res.remaining)
        texts[path] = res.text
    # apply_noqa is idempotent: findings the fixer already filtered stay.
    outcome.remaining = apply_noqa(remaining, sources=texts, sources_out=outcome.sources)
    for path, text in texts.items():
        outcome.sources.setdefault(path, text)
    return outcome
