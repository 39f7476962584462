"""``# noqa`` handling.

Directives are read from comment tokens (``tokenize``), so ``"# noqa"`` inside
a string is not a directive. Line forms: ``# noqa`` (every code) and
``# noqa: GNN001, GNN002`` (those codes), case-insensitive ``noqa``, anywhere in
a comment (``# type: ignore  # noqa: GNN001``). File forms, on a comment line
of their own: ``# gnnlint: noqa`` (the whole file), ``# gnnlint: noqa: GNN001``
and ruff's ``# ruff: noqa: GNN001`` (those codes in the whole file). A bare
``# ruff: noqa`` is ruff's business and does not silence gnnlint.
"""
from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass, field
from typing import Iterable, Iterator

from gnnlint.finding import Finding

_CODE = r"[A-Za-z]+[0-9]+"
_CODES = rf"{_CODE}(?:[\s,]*,[\s,]*{_CODE}|[ \t]+{_CODE})*"
# `# noqa`, optionally followed by `:` and codes. The negative lookahead keeps
# `# noqa-ish` / `# noqa123` from counting.
_LINE_RE = re.compile(
    rf"#\s*noqa(?![A-Za-z0-9_-])(?P<colon>\s*:\s*(?P<codes>{_CODES})?)?",
    re.IGNORECASE,
)
_FILE_RE = re.compile(
    rf"^#\s*(?P<tool>gnnlint|ruff)\s*:\s*noqa(?![A-Za-z0-9_-])"
    rf"(?P<colon>\s*:\s*(?P<codes>{_CODES})?)?",
    re.IGNORECASE,
)
_SPLIT_RE = re.compile(r"[\s,]+")


def _codes(text: str) -> frozenset[str]:
    return frozenset(c.upper() for c in _SPLIT_RE.split(text) if c)


@dataclass
class NoqaMap:
    """Directives of one file.

    ``lines`` maps a 1-based line to the codes suppressed there (None: all).
    """

    lines: dict[int, frozenset[str] | None] = field(default_factory=dict)
    file_all: bool = False
    file_codes: frozenset[str] = frozenset()
    # (line, message) for directives that look like noqa but name no codes.
    invalid: list[tuple[int, str]] = field(default_factory=list)

    def _line_matches(self, code: str, line: int) -> bool:
        if line not in self.lines:
            return False
        codes = self.lines[line]
        return codes is None or code in codes

    def is_suppressed(self, code: str, line: int, noqa_line: int = 0) -> bool:
        if self.file_all or code in self.file_codes:
            return True
        if self._line_matches(code, line):
            return True
        return bool(noqa_line) and noqa_line != line and self._line_matches(code, noqa_line)

    def add_line(self, line: int, codes: frozenset[str] | None) -> None:
        if codes is None or self.lines.get(line, frozenset()) is None:
            self.lines[line] = None
        else:
            self.lines[line] = self.lines.get(line, frozenset()) | codes


def _apply_comment(noqa: NoqaMap, line: int, comment: str, own_line: bool) -> None:
    """Record the directives in one comment token."""
    if own_line:
        m = _FILE_RE.match(comment)
        if m is not None:
            codes = m.group("codes")
            if codes:
                noqa.file_codes = noqa.file_codes | _codes(codes)
            elif m.group("colon"):
                noqa.invalid.append((line, "file-level noqa with ':' but no codes"))
            elif m.group("tool").lower() == "gnnlint":
                noqa.file_all = True
            return
    for m in _LINE_RE.finditer(comment):
        codes = m.group("codes")
        if codes:
            noqa.add_line(line, _codes(codes))
        elif m.group("colon"):
            # `# noqa:` without codes: like ruff, not a blanket suppression.
            noqa.invalid.append((line, "noqa with ':' but no codes"))
        else:
            noqa.add_line(line, None)


def _comments_tokenize(source: str) -> Iterator[tuple[int, str, bool]]:
    readline = io.StringIO(source).readline
    for tok in tokenize.generate_tokens(readline):
        if tok.type == tokenize.COMMENT:
            row, col = tok.start
            yield row, tok.string, not tok.line[:col].strip()


def _comments_fallback(source: str) -> Iterator[tuple[int, str, bool]]:
    """A forgiving scan for files tokenize rejects (e.g. syntax errors):
    tracks quotes, including triple-quoted strings across lines."""
    in_triple: str | None = None
    for lineno, line in enumerate(source.splitlines(), start=1):
        i, n = 0, len(line)
        quote: str | None = None
        while i < n:
            ch = line[i]
            if in_triple is not None:
                if line.startswith(in_triple, i):
                    i += 3
                    in_triple = None
                    continue
                i += 2 if ch == "\\" else 1
                continue
            if quote is not None:
                if ch == "\\":
                    i += 2
                    continue
                if ch == quote:
                    quote = None
                i += 1
                continue
            if ch in "\"'":
                if line.startswith(ch * 3, i):
                    in_triple = ch * 3
                    i += 3
                else:
                    quote = ch
                    i += 1
                continue
            if ch == "#":
                yield lineno, line[i:], not line[:i].strip()
                break
            i += 1


def parse_noqa(source: str | bytes) -> NoqaMap:
    """Directives in ``source``. Never raises."""
    noqa = NoqaMap()
    try:
        if isinstance(source, bytes):
            source = source.decode("utf-8", errors="replace")
        if "noqa" not in source.lower():
            return noqa  # the common case: nothing to parse
        try:
            comments = list(_comments_tokenize(source))
        except Exception:  # TokenError, IndentationError, SyntaxError, ValueError...
            comments = list(_comments_fallback(source))
        for line, text, own_line in comments:
            _apply_comment(noqa, line, text, own_line)
    except Exception:  # pragma: no cover - last resort: never break linting
        return noqa
    return noqa


def unknown_codes(noqa: NoqaMap, known: Iterable[str]) -> list[tuple[int, str, str | None]]:
    """(line, code, the rule it likely meant) for each ``GNN`` code a directive
    names that is no gnnlint rule (``# noqa: GNN13``): it suppresses nothing,
    and ruff warns the same way. Other tools' codes are theirs; line 0: the file."""
    import difflib

    known = set(known)
    out = []
    named = [(line, codes) for line, codes in sorted(noqa.lines.items()) if codes] + [(0, noqa.file_codes)]
    for line, codes in named:
        for code in sorted(codes):
            if not code.startswith("GNN") or code in known:
                continue
            padded = f"GNN{int(code[3:]):03d}" if code[3:].isdigit() else ""
            guess = padded if padded in known else next(iter(difflib.get_close_matches(code, known, 1)), None)
            out.append((line, code, guess))
    return out


def filter_findings(findings: Iterable[Finding], noqa: NoqaMap) -> list[Finding]:
    """Findings not suppressed by a directive on their line, their statement's
    first line (``noqa_line``), or the file."""
    return [
        f for f in findings if not noqa.is_suppressed(f.code, f.line, f.noqa_line)
    ]
