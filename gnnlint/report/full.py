"""``full``: ruff's full output.

::

    train.py:12:15: GNN001 host sync every batch: `loss.item()` ...
       |
    11 |         loss.backward()
    12 |         total += loss.item()
       |                  ^^^^^^^^^^^ GNN001
    13 |         opt.step()
       |
       = help: keep a device tensor

then the summary line. Tabs are expanded to 4-column tab stops and control
characters shown as their Unicode control pictures, so the caret lines up with
what the terminal shows (wide characters count two cells).
"""
from __future__ import annotations

import difflib
import re
from typing import TextIO

from rich.cells import cell_len, get_character_cell_size
from rich.text import Text

from gnnlint.finding import Fix, Finding
from gnnlint.report import ReportContext, make_console, sort_findings
from gnnlint.report.concise import header, summary

TAB_SIZE = 4
CONTEXT_LINES = 2
# A span longer than this shows its first and last lines around a "..." row.
MAX_SPAN_LINES = 8

_LINE_BREAK = re.compile(r"\r\n|\r|\n")
GUTTER_STYLE = "bold blue"
CARET_STYLE = "bold red"


def split_lines(source: str) -> list[str]:
    """Lines as libcst counts them (``\\n``, ``\\r\\n``, ``\\r``), without the breaks."""
    lines = _LINE_BREAK.split(source)
    if lines and lines[-1] == "" and source:
        lines.pop()
    return lines


def display_line(line: str) -> tuple[str, list[int]]:
    """The text to show for ``line`` and each character's starting cell.

    Returns ``(text, cells)`` where ``cells[i]`` is the display column (in
    terminal cells, 0-based) where character ``i`` starts; ``cells[len(line)]``
    is the width of the whole line.
    """
    parts: list[str] = []
    cells: list[int] = []
    col = 0
    for ch in line:
        cells.append(col)
        if ch == "\t":
            width = TAB_SIZE - col % TAB_SIZE
            parts.append(" " * width)
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            pic = chr(0x2400 + ord(ch)) if ord(ch) < 0x20 else "\u2421"
            parts.append(pic)
            width = 1
        else:
            parts.append(ch)
            width = get_character_cell_size(ch)
        col += width
    cells.append(col)
    text = "".join(parts)
    if not line.isascii():
        # Trust rich's own measure of the prefixes (grapheme clusters) so the
        # caret lines up with what rich prints.
        offsets: list[int] = []
        pos = 0
        for ch, part in zip(line, parts):
            offsets.append(pos)
            pos += len(part)
        offsets.append(pos)
        cells = [cell_len(text[:o]) for o in offsets]
    return text, cells


def _underline(line: str, start: int, end: int) -> tuple[int, int]:
    """Cell offset and width of the underline for characters [start, end)."""
    _, cells = display_line(line)
    n = len(line)
    start = max(0, min(start, n))
    end = max(start, min(end, n))
    begin = cells[start]
    width = cells[end] - begin
    return begin, max(1, width)


def _span_on_line(f: Finding, lineno: int, line: str) -> tuple[int, int] | None:
    """Character range [start, end) of the finding's span on ``lineno``."""
    if lineno == f.line:
        start = f.col - 1
    else:
        stripped = len(line) - len(line.lstrip())
        if stripped == len(line):
            return None  # a blank line inside the span: no caret row
        start = stripped
    if lineno == f.end_line:
        end = f.end_col - 1
    else:
        end = len(line)
    return start, max(start, end)


def _gutter(width: int, number: int | None, mark: str = "|") -> Text:
    t = Text()
    label = str(number) if number is not None else ""
    t.append(label.rjust(width) + " " + mark, style=GUTTER_STYLE)
    return t


def _snippet(console, f: Finding, lines: list[str]) -> bool:
    """Print the source lines of ``f`` with carets; False if they are unavailable."""
    if not (1 <= f.line <= len(lines)):
        # A finding just past the last line (e.g. a syntax error at EOF) points
        # at the end of the last line.
        if f.line == len(lines) + 1 and lines:
            f = _at_end_of(f, lines)
        else:
            return False
    first = f.line
    end_line = f.end_line
    if end_line > first and f.end_col <= 1:
        end_line -= 1  # a span ending at the start of a line does not cover it
    last = max(first, min(end_line, len(lines)))
    span_rows = list(range(first, last + 1))
    elided = False
    if len(span_rows) > MAX_SPAN_LINES:
        span_rows = span_rows[:4] + span_rows[-3:]
        elided = True
    before = list(range(max(1, first - CONTEXT_LINES), first))
    after = list(range(last + 1, min(len(lines), last + CONTEXT_LINES) + 1))
    # Context lines that are blank at the edges are not worth showing.
    while before and not lines[before[0] - 1].strip():
        before.pop(0)
    while after and not lines[after[-1] - 1].strip():
        after.pop()
    width = len(str((after or span_rows)[-1]))

    console.print(_gutter(width, None))
    for n in before:
        _source_row(console, width, n, lines[n - 1])
    caret_rows = [n for n in span_rows if _span_on_line(f, n, lines[n - 1]) is not None]
    last_caret = caret_rows[-1] if caret_rows else None
    for i, n in enumerate(span_rows):
        if elided and i == 4:
            console.print(Text("...", style=GUTTER_STYLE))
        line = lines[n - 1]
        _source_row(console, width, n, line)
        span = _span_on_line(f, n, line)
        if span is None:
            continue
        begin, length = _underline(line, *span)
        row = _gutter(width, None)
        row.append(" " + " " * begin)
        row.append("^" * length, style=CARET_STYLE)
        if n == last_caret:
            row.append(" " + f.code, style=CARET_STYLE)
        console.print(row)
    for n in after:
        _source_row(console, width, n, lines[n - 1])
    console.print(_gutter(width, None))
    if f.fix is not None:
        help_row = Text(" " * width + " = ", style=GUTTER_STYLE)
        help_row.append("help", style="bold")
        help_row.append(": " + f.fix.message)
        console.print(help_row)
    return True


def _at_end_of(f: Finding, lines: list[str]) -> Finding:
    from dataclasses import replace

    n = len(lines)
    col = len(lines[-1]) + 1
    return replace(f, line=n, col=col, end_line=n, end_col=col)


def _source_row(console, width: int, number: int, line: str) -> None:
    text, _ = display_line(line)
    row = _gutter(width, number)
    row.append(" " + text)
    console.print(row)


def apply_edits(source: str, fix: Fix) -> str | None:
    """``source`` with the fix's edits applied, or None if an edit is out of range."""
    # str.splitlines also breaks on \f, \v and others; libcst does not.
    lines = _LINE_BREAK.split(source)
    breaks = _LINE_BREAK.findall(source)
    starts = [0]
    for text, brk in zip(lines, breaks):
        starts.append(starts[-1] + len(text) + len(brk))

    def offset(line: int, col: int) -> int | None:
        if not (1 <= line <= len(lines)):
            return None
        if not (1 <= col <= len(lines[line - 1]) + 1):
            return None
        return starts[line - 1] + col - 1

    spans = []
    for e in fix.edits:
        a, b = offset(e.line, e.col), offset(e.end_line, e.end_col)
        if a is None or b is None or b < a:
            return None
        spans.append((a, b, e.content))
    spans.sort(key=lambda s: (s[0], s[1]))
    for (a1, b1, _), (a2, _, _) in zip(spans, spans[1:]):
        if a2 < b1:
            return None  # overlapping edits: nothing sensible to show
    result = source
    for a, b, content in reversed(spans):
        result = result[:a] + content + result[b:]
    return result


def _fix_diff(console, f: Finding, source: str) -> None:
    assert f.fix is not None
    label = {"safe": "Safe fix", "unsafe": "Unsafe fix", "display-only": "Display-only fix"}
    fixed = apply_edits(source, f.fix)
    if fixed is None:
        return
    console.print(Text("\u2139 " + label.get(f.fix.applicability, "Fix"), style="bold"))
    old, new = split_lines(source), split_lines(fixed)
    width = len(str(max(len(old), len(new), 1)))
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    for group in matcher.get_grouped_opcodes(1):
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                for k in range(i1, i2):
                    text, _ = display_line(old[k])
                    row = Text(f"{k + 1:>{width}} {j1 + k - i1 + 1:>{width}} |  ", style=GUTTER_STYLE)
                    row.append(text)
                    console.print(row)
                continue
            for k in range(i1, i2):
                text, _ = display_line(old[k])
                row = Text(f"{k + 1:>{width}} {'':>{width}} |", style=GUTTER_STYLE)
                row.append("-" + text, style="red")
                console.print(row)
            for k in range(j1, j2):
                text, _ = display_line(new[k])
                row = Text(f"{'':>{width}} {k + 1:>{width}} |", style=GUTTER_STYLE)
                row.append("+" + text, style="green")
                console.print(row)


def render_full(findings: list[Finding], out: TextIO, ctx: ReportContext) -> None:
    console = make_console(out, ctx.color)
    ordered = sort_findings(findings)
    split_cache: dict[str, list[str]] = {}
    for f in ordered:
        console.print(header(f))
        source = ctx.sources.get(f.where)  # a notebook's finding: its cell's source
        shown = False
        if ctx.show_source and source is not None:
            lines = split_cache.get(f.where)
            if lines is None:
                lines = split_cache[f.where] = split_lines(source)
            shown = _snippet(console, f, lines)
        if not shown and f.fix is not None:
            console.print(Text("  = help: " + f.fix.message))
        if ctx.show_fixes and f.fix is not None and source is not None:
            _fix_diff(console, f, source)
        console.print()
    summary(console, ordered, ctx)
