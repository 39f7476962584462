"""Jupyter notebooks: their code cells as one Python module, and back.

The engine lints a notebook as the module its code cells make when joined in
order (ruff's way), so the cross-file facts and ``# noqa`` work as in a
``.py`` file; a finding is then reported at its cell and the line within it.

- Every code cell contributes its lines, ending with a newline; markdown and
  raw cells contribute nothing. A notebook whose kernel is not Python has no
  code to lint.
- IPython syntax is not Python: line magics (``%time f()``), shell escapes
  (``!pip install``, ``files = !ls``), help (``obj?``, ``?obj``) and cells
  that start with a cell magic (``%%bash``) are replaced, line for line, by
  ``pass`` at the same indentation, so no line moves. A cell magic whose body
  is Python (``%%time``, ``%%timeit``, ``%%capture``...) keeps its body.
- Fixes are applied to the joined module and written back into the cells
  they touch: only those cells' ``source`` values change in the file, in the
  file's own JSON style (the raw text of everything else, outputs and
  metadata included, is kept byte for byte); the magic lines come back as
  they were. The rewritten notebook is read again and must give the fixed
  module, or nothing is written.
"""
from __future__ import annotations

import ast
import bisect
import difflib
import json
import re
import warnings
from dataclasses import dataclass, field, replace
from typing import Optional

NOTEBOOK_SUFFIX = ".ipynb"

# Cell magics whose body is Python that runs in the kernel as usual.
PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "debug", "memit", "snakeviz"})

_LINE_RE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
_WS = re.compile(r"[ \t\n\r]*")
# `files = !ls`, `t = %timeit -o f()`
_ASSIGN_MAGIC = re.compile(r"[A-Za-z_][\w.]*(\s*,\s*[A-Za-z_][\w.]*)*\s*=\s*[%!]")


class NotebookError(ValueError):
    """The file is not a notebook we can read (or write back)."""


def is_notebook(path) -> bool:
    return str(path).endswith(NOTEBOOK_SUFFIX)


def split_lines(text: str) -> list[str]:
    """``text`` cut after each ``\\r\\n``, ``\\r`` or ``\\n`` (ends kept), as libcst counts lines."""
    return _LINE_RE.findall(text)


# ---------------------------------------------------------------------- magics
def _is_magic(line: str) -> bool:
    s = line.strip()
    if not s or s.startswith("#"):
        return False
    if s.startswith(("%", "?")) or (s.startswith("!") and not s.startswith("!=")):
        return True
    if s.endswith("?") and "#" not in s:  # `obj?`, `obj??` (help)
        return True
    return _ASSIGN_MAGIC.match(s) is not None


class _Scanner:
    """Just enough of Python's lexer to know whether a line starts a new
    statement: open brackets, an open triple-quoted string, a backslash."""

    def __init__(self) -> None:
        self.depth = 0
        self.quote: Optional[str] = None  # the open triple quote
        self.continued = False

    @property
    def at_statement_start(self) -> bool:
        return self.depth == 0 and self.quote is None and not self.continued

    def feed(self, line: str) -> None:
        i, n = 0, len(line)
        self.continued = False
        while i < n:
            if self.quote is not None:
                end = line.find(self.quote, i)
                while end > 0 and _escaped(line, end):
                    end = line.find(self.quote, end + 1)
                if end < 0:
                    return
                i = end + 3
                self.quote = None
                continue
            ch = line[i]
            if ch == "#":
                return
            if ch in "([{":
                self.depth += 1
            elif ch in ")]}":
                self.depth = max(0, self.depth - 1)
            elif ch in "'\"":
                if line.startswith(ch * 3, i):
                    self.quote = ch * 3
                    i += 3
                    continue
                j = i + 1
                while j < n and line[j] != ch and line[j] not in "\r\n":
                    j += 2 if line[j] == "\\" else 1
                i = j + 1
                continue
            elif ch == "\\" and line[i + 1:].strip("\r\n") == "":
                self.continued = True
                return
            i += 1


def _escaped(line: str, at: int) -> bool:
    k, count = at - 1, 0
    while k >= 0 and line[k] == "\\":
        count += 1
        k -= 1
    return count % 2 == 1


def _placeholder(line: str, indent: Optional[str] = None) -> str:
    body = line.rstrip("\r\n")
    if indent is None:
        indent = body[: len(body) - len(body.lstrip())]
    return indent + "pass" + line[len(body):]


def python_lines(lines: list[str]) -> tuple[list[str], dict[int, str]]:
    """A cell's lines with IPython syntax replaced (same count), and the
    replaced lines by their index in the cell."""
    out = list(lines)
    magic: dict[int, str] = {}
    if not lines:
        return out, magic
    first = lines[0].strip()
    if first.startswith("%%"):
        words = first[2:].split()
        whole = not (words and words[0] in PYTHON_CELL_MAGICS)
        for k in range(len(lines) if whole else 1):
            magic[k] = lines[k]
            # unindented: a %%bash heredoc or a %%writefile body may be indented
            out[k] = _placeholder(lines[k], "")
        if whole:
            return out, magic
    scanner = _Scanner()
    in_magic = None  # the indentation of a magic continued with a backslash
    for k, line in enumerate(lines):
        if k in magic:
            continue
        if in_magic is not None or (scanner.at_statement_start and _is_magic(line)):
            magic[k] = line
            out[k] = _placeholder(line, in_magic)
            if in_magic is None:
                in_magic = out[k][: len(out[k]) - len(out[k].lstrip())]
            if not line.rstrip("\r\n").endswith("\\"):
                in_magic = None
            continue
        scanner.feed(line)
    return out, magic


# ---------------------------------------------------------------------- the notebook
@dataclass
class Cell:
    number: int  # 1-based, among all the notebook's cells (what ruff reports)
    start: int  # its first line in the joined module (1-based)
    text: str  # its source as stored
    lines: list[str]  # its Python lines (magics replaced), each ending with a newline
    magic: dict[int, str]  # index in the cell -> the original line
    span: tuple[int, int]  # the raw JSON text of its `source` value
    is_list: bool  # `source` stored as a list of lines (else one string)


@dataclass
class Notebook:
    raw: str
    cells: list[Cell] = field(default_factory=list)
    source: str = ""  # the joined module

    @classmethod
    def parse(cls, data: bytes | str) -> "Notebook":
        raw = data.decode("utf-8-sig") if isinstance(data, bytes) else data
        try:
            doc = json.loads(raw)
        except ValueError as exc:
            raise NotebookError(f"not valid JSON: {exc}") from None
        if not isinstance(doc, dict) or not isinstance(doc.get("cells"), list):
            if isinstance(doc, dict) and "worksheets" in doc:
                raise NotebookError("nbformat 3 notebooks are not supported (convert with `jupyter nbconvert --to notebook`)")
            raise NotebookError("not a Jupyter notebook (no 'cells' list)")
        nb = cls(raw)
        if not _is_python(doc):
            return nb
        spans = _source_spans(raw)
        if len(spans) != len(doc["cells"]):
            raise NotebookError("cannot locate the cells' sources")
        parts: list[str] = []
        line = 1
        for number, (cell, span) in enumerate(zip(doc["cells"], spans), start=1):
            if not isinstance(cell, dict) or cell.get("cell_type") != "code":
                continue
            source = cell.get("source", "")
            is_list = isinstance(source, list)
            if is_list:
                if not all(isinstance(s, str) for s in source):
                    raise NotebookError(f"cell {number}: 'source' must be strings")
                text = "".join(source)
            elif isinstance(source, str):
                text = source
            else:
                raise NotebookError(f"cell {number}: 'source' must be a string or a list of strings")
            if span is None:
                raise NotebookError(f"cell {number}: cannot locate its 'source'")
            lines, magic = python_lines(split_lines(text))
            if lines and not lines[-1].endswith(("\n", "\r")):
                lines[-1] += "\n"
            nb.cells.append(Cell(number, line, text, lines, magic, span, is_list))
            parts.extend(lines)
            line += len(lines)
        nb.source = "".join(parts)
        return nb

    # -- positions -----------------------------------------------------------
    def locate(self, line: int) -> tuple[Optional[Cell], int]:
        """(the cell, the line within it) of a line of the joined module."""
        if not self.cells:
            return None, line
        starts = [c.start for c in self.cells]
        k = max(0, bisect.bisect_right(starts, line) - 1)
        return self.cells[k], line - self.cells[k].start + 1

    def cell_text(self, cell: Cell) -> str:
        """The cell's source as shown (magics as written)."""
        return cell.text

    # -- writing back --------------------------------------------------------
    def split(self, new_source: str) -> list[list[str]]:
        """The joined module ``new_source`` (an edit of ``self.source``) cut
        back into the code cells' lines, the magic lines restored. A line an
        edit inserts belongs to the cell of the line it replaced, or of the
        line before it (an import added after the last import stays in the
        imports' cell; a line added before the module's first goes to cell 1)."""
        owner: list[tuple[int, int]] = []  # old line -> (cell index, index in the cell)
        for k, cell in enumerate(self.cells):
            owner.extend((k, i) for i in range(len(cell.lines)))
        old = split_lines(self.source)
        new = split_lines(new_source)
        out: list[list[str]] = [[] for _ in self.cells]
        if not self.cells:
            if new_source:
                raise NotebookError("the notebook has no code cell to write into")
            return out

        def cell_at(i: int) -> int:
            return owner[min(i, len(owner) - 1)][0] if owner else 0

        def is_magic(i: int) -> bool:
            k, j = owner[i]
            return j in self.cells[k].magic

        matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag == "equal":
                for t in range(i2 - i1):
                    k, j = owner[i1 + t]
                    out[k].append(self.cells[k].magic.get(j, new[j1 + t]))
                continue
            if any(is_magic(i) for i in range(i1, i2)):
                raise NotebookError("an edit touches a magic line")
            for t in range(j2 - j1):
                i = i1 + t if i1 + t < i2 else (i2 - 1 if i2 > i1 else max(0, i1 - 1))
                out[cell_at(i)].append(new[j1 + t])
        return out

    def cell_texts(self, new_source: str) -> list[str]:
        """Each code cell's new source text for the edited module."""
        texts = []
        for cell, lines in zip(self.cells, self.split(new_source)):
            text = "".join(lines)
            if not cell.text.endswith(("\n", "\r")) and text.endswith("\n"):
                text = text[:-2] if text.endswith("\r\n") else text[:-1]
            texts.append(text)
        return texts

    def with_source(self, new_source: str) -> str:
        """The notebook's JSON text with ``new_source`` written into its
        cells (only the changed cells' ``source`` values are rewritten)."""
        if new_source == self.source:
            return self.raw
        texts = self.cell_texts(new_source)
        ascii_only = self.raw.isascii()
        out = self.raw
        for cell, text in sorted(zip(self.cells, texts), key=lambda ct: -ct[0].span[0]):
            if text == cell.text:
                continue
            start, end = cell.span
            value = _render_source(self.raw, start, end, text, cell.is_list, ascii_only)
            out = out[:start] + value + out[end:]
        check = Notebook.parse(out)
        if check.source != new_source or [c.number for c in check.cells] != [c.number for c in self.cells]:
            raise NotebookError("the rewritten notebook does not read back as the fixed code")
        return out

    def localize(self, finding, source: Optional[str] = None):
        """``finding`` (joined-module positions) at its cell and the line
        within it; ``source``: the module the finding was made on, when it is
        not ``self.source`` (a fixed module not written)."""
        starts = self._starts(source)
        if not starts:
            return finding

        def where(line: int) -> tuple[int, int]:
            k = max(0, bisect.bisect_right([s for s, _ in starts], line) - 1)
            return starts[k][1], line - starts[k][0] + 1

        number, line = where(finding.line)
        base = finding.line - line
        end_line = max(line, finding.end_line - base)
        fix = finding.fix
        if fix is not None:
            fix = replace(fix, edits=tuple(replace(e, line=e.line - base, end_line=e.end_line - base)
                                           for e in fix.edits))
        noqa = finding.noqa_line - base if finding.noqa_line else 0
        return replace(finding, line=line, end_line=end_line, fix=fix, noqa_line=max(0, noqa), cell=number)

    def _starts(self, source: Optional[str]) -> list[tuple[int, int]]:
        if source is None or source == self.source:
            return [(c.start, c.number) for c in self.cells]
        starts, line = [], 1
        for cell, lines in zip(self.cells, self.split(source)):
            starts.append((line, cell.number))
            line += len(lines)
        return starts

    def cells_for(self, source: Optional[str] = None) -> dict[int, str]:
        """Cell number -> its source text (as shown), for ``source``."""
        if source is None or source == self.source:
            return {c.number: c.text for c in self.cells}
        return {c.number: t for c, t in zip(self.cells, self.cell_texts(source))}


def _is_python(doc: dict) -> bool:
    meta = doc.get("metadata") if isinstance(doc.get("metadata"), dict) else {}
    for key in ("language_info", "kernelspec"):
        info = meta.get(key)
        if isinstance(info, dict):
            lang = info.get("name") if key == "language_info" else info.get("language")
            if isinstance(lang, str) and lang:
                return lang.lower() == "python"
    return True  # no kernel named (a fresh or stripped notebook): Python, as Jupyter assumes


# ---------------------------------------------------------------------- raw JSON
def _source_spans(raw: str) -> list[Optional[tuple[int, int]]]:
    """For each element of the top-level ``cells`` list, the (start, end)
    offsets of its ``source`` value in ``raw`` (None when it has none).
    Values are skipped with the C JSON decoder, so outputs cost little."""
    decoder = json.JSONDecoder()
    scan = json.decoder.scanstring

    def ws(i: int) -> int:
        return _WS.match(raw, i).end()

    def members(i: int):
        """Yield (key, value start, value end) for the object at ``i``."""
        assert raw[i] == "{"
        i = ws(i + 1)
        if raw[i] == "}":
            return
        while True:
            key, i = scan(raw, i + 1)
            i = ws(ws(i) + 1)  # past ':'
            _, end = decoder.raw_decode(raw, i)
            yield key, i, end
            i = ws(end)
            if raw[i] == "}":
                return
            i = ws(i + 1)  # past ','

    i = ws(0)
    for key, start, end in members(i):
        if key != "cells":
            continue
        spans: list[Optional[tuple[int, int]]] = []
        j = ws(start + 1)
        if raw[j] == "]":
            return spans
        while True:
            _, cell_end = decoder.raw_decode(raw, j)
            span = None
            if raw[j] == "{":
                for ckey, cstart, cend in members(j):
                    if ckey == "source":
                        span = (cstart, cend)
            spans.append(span)
            j = ws(cell_end)
            if raw[j] == "]":
                return spans
            j = ws(j + 1)
    return []


def _render_source(raw: str, start: int, end: int, text: str, is_list: bool, ascii_only: bool) -> str:
    """The new ``source`` value in the style of the old one (raw[start:end])."""
    dump = lambda s: json.dumps(s, ensure_ascii=ascii_only)  # noqa: E731
    if not is_list:
        return dump(text)
    decoder = json.JSONDecoder()
    old = raw[start:end]
    elements: list[tuple[int, int]] = []
    i = _WS.match(old, 1).end()
    while old[i] != "]":
        _, e = decoder.raw_decode(old, i)
        elements.append((i, e))
        i = _WS.match(old, e).end()
        if old[i] == ",":
            i = _WS.match(old, i + 1).end()
    lines = split_lines(text)
    if not lines:
        return "[]"
    if elements:
        sep = old[1:elements[0][0]]
        close = old[elements[-1][1]:len(old) - 1]
        between = old[elements[0][1]:elements[1][0]] if len(elements) > 1 else "," + sep
        reuse = {json.loads(old[s:e]): old[s:e] for s, e in elements}
    else:
        prefix = raw[raw.rfind("\n", 0, start) + 1:start]  # `   "source": `
        key_indent = prefix[:len(prefix) - len(prefix.lstrip())]
        unit = _indent_unit(raw)
        sep, close, between, reuse = "\n" + key_indent + unit, "\n" + key_indent, ",\n" + key_indent + unit, {}
    body = between.join(reuse.get(line) or dump(line) for line in lines)
    return "[" + sep + body + close + "]"


def _indent_unit(raw: str) -> str:
    m = re.match(r"\{\r?\n([ \t]+)", raw)
    return m.group(1) if m else " "


# ---------------------------------------------------------------------- engine hooks
def python_source(data: bytes) -> bytes:
    """The joined module of a notebook's bytes (raises NotebookError)."""
    return Notebook.parse(data).source.encode("utf-8")


# A line starting (after indentation) with a shell escape or a line magic: `!pip install x`, `%cd dir`.
_SCRIPT_MAGIC = re.compile(rb"^[ \t]*(?:![A-Za-z]|%[A-Za-z])", re.MULTILINE)
_MAGIC_LINE = re.compile(rb"[ \t]*[!%][A-Za-z]")


def _has_magic_line(data: bytes) -> bool:
    """``_SCRIPT_MAGIC.search(data) is not None``, ~40x faster: every file of
    a run is asked, and the regex tries each byte; here ``bytes.find`` jumps
    to each ``!`` / ``%`` and only that line's start is matched."""
    for char in (b"!", b"%"):
        at = data.find(char)
        while at >= 0:
            if _MAGIC_LINE.match(data, data.rfind(b"\n", 0, at) + 1):
                return True
            end = data.find(b"\n", at)
            if end < 0:
                break
            at = data.find(char, end)
    return False


def script_source(data: bytes) -> bytes:
    """A ``.py`` script exported from a notebook (Colab's download, a
    ``# %%`` percent-format script) may keep IPython lines (``!pip install``,
    ``%load_ext``) that Python rejects: the module the rest makes, those
    lines replaced by ``pass`` as in a notebook cell (same line count), when
    Python rejects the file as it is and accepts it so. Otherwise ``data``
    unchanged (the search for such a line gates everything else)."""
    if not _has_magic_line(data) or _compiles(data):  # `%` continuing an expression: as it is
        return data
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data
    lines, magic = python_lines(split_lines(text))
    if not magic:
        return data
    new = "".join(lines).encode("utf-8")
    return new if _compiles(new) else data


def _compiles(data: bytes) -> bool:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # invalid escape sequences and the like
        try:
            compile(data, "<script>", "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
        except (SyntaxError, ValueError, OverflowError, MemoryError, RecursionError):
            return False
    return True


def localize(findings: list, sources: dict[str, str], read=None) -> tuple[list, dict[str, str]]:
    """Findings of notebooks moved to their cells, and the cells' texts as
    ``sources`` entries named ``"<path>:cell <n>"`` (what the reporters show
    a cell's finding under). ``sources[path]``: the module the findings were
    made on; ``read(path) -> bytes``: the notebook file (default: from disk)."""
    if not any(is_notebook(f.path) for f in findings):
        return findings, sources
    if read is None:
        def read(path: str) -> bytes:
            with open(path, "rb") as fh:
                return fh.read()
    books: dict[str, Optional[Notebook]] = {}
    out, extra = [], dict(sources)
    for f in findings:
        if not is_notebook(f.path) or f.cell is not None:
            out.append(f)
            continue
        if f.path not in books:
            try:
                books[f.path] = Notebook.parse(read(f.path))
            except (OSError, NotebookError, UnicodeDecodeError):
                books[f.path] = None
            nb = books[f.path]
            if nb is not None:
                try:
                    for number, text in nb.cells_for(sources.get(f.path)).items():
                        extra[f"{f.path}:cell {number}"] = text
                except NotebookError:
                    books[f.path] = None
        nb = books[f.path]
        if nb is None:
            out.append(f)
            continue
        try:
            out.append(nb.localize(f, sources.get(f.path)))
        except NotebookError:
            out.append(f)
    return out, extra


def notebook_fix(result):
    """A ``fix.FileFix`` made on a notebook's module, turned into one on the
    notebook file: ``original``/``fixed`` are the notebook's bytes (what is
    written), ``diff`` is per cell. A fixed module that cannot be written
    back leaves the notebook as it was, with an error."""
    from gnnlint.fix import unified_diff

    try:
        with open(result.path, "rb") as fh:
            data = fh.read()
        nb = Notebook.parse(data)
        if nb.source.encode("utf-8") != result.original:
            raise NotebookError("changed on disk while it was being fixed")
        if not result.changed:
            result.original = result.fixed = data
            return result
        raw = nb.with_source(result.text)
        old_cells = {c.number: c.text for c in nb.cells}
        diffs = [unified_diff(f"{result.path}:cell {number}", old_cells[number], text)
                 for number, text in nb.cells_for(result.text).items() if text != old_cells[number]]
    except (OSError, NotebookError, UnicodeDecodeError) as exc:
        result.errors.append(f"{result.path}: not fixed: {exc}")
        result.fixed = result.original = b""
        result.text, result.remaining = result.original_text, result.original_remaining
        result.applied = []
        return result
    result.original = data
    result.fixed = raw.encode("utf-8") if not data.startswith(b"\xef\xbb\xbf") else b"\xef\xbb\xbf" + raw.encode("utf-8")
    result.diff = "".join(diffs)
    return result
