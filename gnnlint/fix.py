"""Applying fixes to source text.

Edits address 1-based (line, column) positions in characters. Everything
outside the edited spans is kept byte-for-byte: the text is split with
``keepends=True`` so CRLF, tabs and a missing final newline survive.
"""
from __future__ import annotations

from typing import Iterable

from gnnlint.finding import Edit, Finding

_RANK = {"safe": 0, "unsafe": 1, "display-only": 2}


def _line_offsets(text: str) -> list[int]:
    offsets = [0]
    for line in text.splitlines(keepends=True):
        offsets.append(offsets[-1] + len(line))
    return offsets


def _offset(offsets: list[int], line: int, col: int) -> int:
    if line - 1 >= len(offsets):
        return offsets[-1]
    return offsets[line - 1] + col - 1


def allowed(finding: Finding, unsafe: bool) -> bool:
    fix = finding.fix
    if fix is None or fix.applicability == "display-only":
        return False
    return fix.applicability == "safe" or unsafe


def apply_fixes(text: str, findings: Iterable[Finding], unsafe: bool = False) -> tuple[str, list[Finding]]:
    """Apply the non-overlapping fixes of ``findings``; return the new text and
    the findings whose fixes were applied. A fix that overlaps one already
    taken waits for the next pass (the caller loops until stable)."""
    offsets = _line_offsets(text)
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
            spans.append((start, end, edit.content))
        if any(_overlaps(s, e, ts, te) for s, e, _ in spans for ts, te in taken):
            continue
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
