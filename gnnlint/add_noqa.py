"""``gnnlint check --add-noqa[=REASON]``: a ``# noqa: CODE`` on every line with
a finding, so an existing codebase adopts gnnlint in one commit and pays the
debt later (ruff's ``--add-noqa``).

The directive goes on the line a ``# noqa`` must sit on (the first line of the
finding's statement); codes already named by a ``# noqa: ...`` there are kept
and the new ones added to it. Everything else is kept byte for byte (line
endings, encoding, BOM). A line whose end lies inside a string or after a
backslash continuation cannot carry a comment: the finding's own line is
tried, else the finding is left as it is and counted as skipped. Running it
twice changes nothing the second time: every finding is suppressed by then.
"""
from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass, field
from typing import Iterable, Optional

from gnnlint.finding import Finding
from gnnlint.fix import SourceCodec, split_lines
from gnnlint.suppress import _LINE_RE

SYNTAX_ERROR_CODE = "GNN000"


@dataclass
class NoqaEdit:
    text: str
    added: int = 0  # directives added or extended
    skipped: list[Finding] = field(default_factory=list)


def _comment_lines(text: str) -> tuple[dict[int, int], set[int]]:
    """(line -> column of its comment, lines that cannot end with a comment:
    inside a multi-line string or continued with a backslash)."""
    comments: dict[int, int] = {}
    blocked: set[int] = set()
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type == tokenize.COMMENT:
            comments[tok.start[0]] = tok.start[1]
        elif tok.start[0] != tok.end[0] and tok.type not in (tokenize.NEWLINE, tokenize.NL):
            blocked.update(range(tok.start[0], tok.end[0]))  # a string spanning lines
    return comments, blocked


def add_noqa(text: str, findings: Iterable[Finding], reason: Optional[str] = None) -> NoqaEdit:
    """``text`` with a ``# noqa: CODES`` for each of ``findings``."""
    findings = [f for f in findings if f.code != SYNTAX_ERROR_CODE]
    out = NoqaEdit(text)
    if not findings:
        return out
    lines = split_lines(text)
    comments, blocked = _comment_lines(text)

    def usable(n: int) -> bool:
        if n < 1 or n > len(lines) or n in blocked:
            return False
        body = lines[n - 1].rstrip("\r\n")
        return not body.endswith("\\") or n in comments

    wanted: dict[int, list[str]] = {}
    for f in findings:
        target = next((n for n in (f.noqa_line or f.line, f.line) if usable(n)), None)
        if target is None:
            out.skipped.append(f)
            continue
        codes = wanted.setdefault(target, [])
        if f.code not in codes:
            codes.append(f.code)
    for n, codes in wanted.items():
        line = lines[n - 1]
        body = line.rstrip("\r\n")
        ending = line[len(body):]
        col = comments.get(n)
        match = _LINE_RE.search(body, col) if col is not None else None
        if match is not None and match.group("codes"):
            have = {c.upper() for c in re.split(r"[\s,]+", match.group("codes")) if c}
            new = [c for c in sorted(codes) if c not in have]
            if not new:
                continue
            at = match.end("codes")
            body = body[:at] + ", " + ", ".join(new) + body[at:]
        elif match is not None:
            continue  # a bare `# noqa` already covers every code
        else:
            directive = "# noqa: " + ", ".join(sorted(codes)) + (f" {reason}" if reason else "")
            body = body.rstrip(" \t") + "  " + directive if body.strip() else body
        lines[n - 1] = body + ending
        out.added += 1
    out.text = "".join(lines)
    return out


def add_noqa_to_file(path: str, findings: list[Finding], reason: Optional[str] = None) -> tuple[int, list[str]]:
    """Add the directives to the file at ``path`` (atomically; a file changed
    since it was read is not overwritten). Returns (added, error messages)."""
    from gnnlint.fix import FileChangedError, write_atomic

    if path.endswith(".ipynb"):
        return _add_noqa_to_notebook(path, findings, reason)
    try:
        with open(path, "rb") as fh:
            data = fh.read()
        codec = SourceCodec.detect(data)
        text = codec.decode(data)
    except (OSError, SyntaxError, UnicodeDecodeError, LookupError) as exc:
        return 0, [f"{path}: cannot add noqa: {exc}"]
    if codec.encode(text) != data:
        return 0, [f"{path}: noqa not added: its bytes do not round-trip through {codec.encoding}"]
    try:
        edit = add_noqa(text, findings, reason)
    except (tokenize.TokenError, SyntaxError, IndentationError) as exc:
        return 0, [f"{path}: cannot add noqa: {exc}"]
    errors = [f"{f.path}:{f.line}: {f.code}: no line of its statement can carry a # noqa comment"
              for f in edit.skipped]
    if edit.text == text:
        return 0, errors
    try:
        write_atomic(path, data, codec.encode(edit.text))
    except FileChangedError:
        return 0, errors + [f"{path}: changed on disk while adding noqa; not overwritten"]
    except OSError as exc:
        return 0, errors + [f"{path}: cannot write: {exc.strerror or exc}"]
    return edit.added, errors


def _add_noqa_to_notebook(path: str, findings: list[Finding], reason: Optional[str]) -> tuple[int, list[str]]:
    """The directives written into the cells (the findings are at their cells'
    lines; the module the cells make carries them, as ``--fix`` does), only
    the changed cells' ``source`` rewritten; the notebook's JSON otherwise kept."""
    from dataclasses import replace

    from gnnlint.fix import FileChangedError, write_atomic
    from gnnlint.notebook import Notebook, NotebookError

    try:
        with open(path, "rb") as fh:
            data = fh.read()
        nb = Notebook.parse(data)
        starts = {c.number: c.start for c in nb.cells}
        joined = []  # at the lines of the module the cells make (a finding localized to its cell moved back)
        for f in findings:
            if f.cell is not None:
                if f.cell not in starts:
                    continue
                base = starts[f.cell] - 1
                f = replace(f, line=f.line + base, end_line=f.end_line + base, cell=None,
                            noqa_line=f.noqa_line + base if f.noqa_line else 0)
            joined.append(f)
        edit = add_noqa(nb.source, joined, reason)
        errors = []
        for f in edit.skipped:
            cell, line = nb.locate(f.line)
            errors.append(f"{path}:cell {cell.number if cell else '?'}:{line}: {f.code}: "
                          f"no line of its statement can carry a # noqa comment")
        if edit.text == nb.source:
            return 0, errors
        raw = nb.with_source(edit.text)
    except (OSError, NotebookError, UnicodeDecodeError, tokenize.TokenError, SyntaxError) as exc:
        return 0, [f"{path}: cannot add noqa: {exc}"]
    new = raw.encode("utf-8")
    if data.startswith(b"\xef\xbb\xbf"):
        new = b"\xef\xbb\xbf" + new
    try:
        write_atomic(path, data, new)
    except FileChangedError:
        return 0, errors + [f"{path}: changed on disk while adding noqa; not overwritten"]
    except OSError as exc:
        return 0, errors + [f"{path}: cannot write: {exc.strerror or exc}"]
    return edit.added, errors
