"""IPython syntax in Python lines: line magics, shell escapes, help and cell
magics replaced line for line by ``pass`` at the same indentation, so a
notebook cell (or a script exported from one) is Python with no line moved.
The replaced lines are returned so they can be written back as they were.
"""
from __future__ import annotations

import ast
import re
import warnings
from typing import Optional

# Cell magics whose body is Python that runs in the kernel as usual.
PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "debug", "memit", "snakeviz"})

_LINE_RE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
_LINE_RE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
# `files = !ls`, `t = %timeit -o f()`
_ASSIGN_MAGIC = re.compile(r"[A-Za-z_][\w.]*(\s*,\s*[A-Za-z_][\w.]*)*\s*=\s*[%!]")

def split_lines(text: str) -> list[str]:
    """``text`` cut after each ``\\r\\n``, ``\\r`` or ``\\n`` (ends kept), as libcst counts lines."""
    return _LINE_RE.findall(text)


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
