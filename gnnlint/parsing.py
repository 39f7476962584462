"""Handing a file to the parsers without letting any input crash the process.

Python's own compiler looks at a file first: what it rejects (a syntax
error, ``from __future__`` misuse, nesting past its limits: "too many nested
parentheses", ``RecursionError``, ``MemoryError``) is GNN000, exactly what
``python -m py_compile`` says, and libcst never sees it. libcst's native
parser recurses on the C stack once per nesting level and overflows it -- a
segfault, not an exception -- where Python has no limit (5,000 chained
``and``s, a 60,000-part dotted import), so it runs on a thread whose stack
fits the file. What libcst still cannot parse although Python compiles it
(its limit of 3,000 adjacent string literals) is a named skip, not GNN000.

The compiler is the running interpreter's: syntax newer than it (PEP 695
``def f[T]``, ``class C[T]``, ``type X = ...``, and PEP 701 f-strings that
reuse their quotes, ``f"{name}{"_c" if c else ""}"``, on Python < 3.12) is
not the user's error when the project targets a newer Python, so such a
rejection is handed to libcst, which knows that grammar (``newer_syntax``).
"""
from __future__ import annotations

import ast
import threading
import warnings
from dataclasses import dataclass
import re
import sys
from typing import Optional

# Measured with libcst 1.x: ~1.1 KB of stack per chained `and`, and a level
# takes at least 2 bytes of source (`.a` in a dotted name); deeper structures
# (parentheses, `not`) cost ~4 KB a level but Python stops them at ~3,000.
_STACK_BASE = 32 << 20
_STACK_PER_BYTE = 1024
_STACK_MAX = 1 << 30


def past_stack_cap(size: int) -> bool:
    """Whether a file of ``size`` bytes could nest deeper than the parse
    thread's capped stack holds (only with ``max-file-size = 0`` or a limit
    raised past ~1 MB): parse it where a crash costs only that file."""
    return _STACK_BASE + size * _STACK_PER_BYTE > _STACK_MAX


@dataclass
class PythonVerdict:
    error: Optional[BaseException] = None  # what Python's compiler raised
    tree: Optional[ast.Module] = None  # the ast, when asked for and the file compiles


def python_verdict(data: bytes, path: str, want_ast: bool = False) -> PythonVerdict:
    """Compile ``data`` as ``py_compile`` would (nothing is executed;
    warnings are silenced). ``want_ast``: also return the ast (one C-parser
    pass serves both)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # invalid escape sequences and the like
        try:
            if not want_ast:
                compile(data, path, "exec", dont_inherit=True)
                return PythonVerdict()
            tree = compile(data, path, "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
            compile(tree, path, "exec", dont_inherit=True)  # what only the compiler checks (__future__, return)
            return PythonVerdict(tree=tree)
        except (SyntaxError, ValueError, OverflowError, MemoryError, RecursionError) as exc:
            return PythonVerdict(error=exc)


# Statements of Python 3.12's grammar (PEP 695) that older compilers reject.
_PEP695 = re.compile(rb"^[ \t]*(?:type[ \t]+\w+[ \t]*(?:\[|=)|(?:async[ \t]+)?def[ \t]+\w+[ \t]*\[|class[ \t]+\w+[ \t]*\[)")


def newer_syntax(data: bytes, exc: BaseException) -> bool:
    """Whether ``exc`` is the running compiler rejecting grammar of a newer
    Python (3.12's type parameters and ``type`` statements, its PEP 701
    f-strings) that libcst parses: then the file is linted, not reported as
    GNN000 (libcst still rejects a truly broken f-string: Python's message stands)."""
    if sys.version_info >= (3, 12) or type(exc) is not SyntaxError or not exc.lineno:
        return False
    if (exc.msg or "").startswith("f-string"):  # the pre-3.12 f-string tokenizer's messages
        return True
    lines = data.splitlines()
    # the error is reported on the statement or just after its header
    for lineno in (exc.lineno, exc.lineno - 1):
        if 0 < lineno <= len(lines) and _PEP695.match(lines[lineno - 1]):
            return True
    return False


def describe(exc: BaseException) -> tuple[int, int, str]:
    """(line, column, message) of a compile error, as py_compile reports it."""
    if isinstance(exc, SyntaxError):
        # an encoding error has lineno 0 and offset -1: report line 1, column 1
        return max(exc.lineno or 1, 1), max(exc.offset or 1, 1), f"SyntaxError: {exc.msg}"
    if isinstance(exc, MemoryError):
        return 1, 1, "too complex for Python's parser (MemoryError)"
    if isinstance(exc, RecursionError):
        return 1, 1, f"too deeply nested for Python's compiler (RecursionError: {exc})"
    return 1, 1, f"{type(exc).__name__}: {exc}"


def parse_module(data: bytes):
    """``libcst.parse_module(data)`` on a thread with a stack large enough
    for any nesting the file can hold. Raises what libcst raises."""
    import libcst as cst

    size = min(_STACK_BASE + len(data) * _STACK_PER_BYTE, _STACK_MAX)
    size -= size % 4096
    outcome: dict = {}

    def parse() -> None:
        try:
            outcome["module"] = cst.parse_module(data)
        except BaseException as exc:  # noqa: BLE001 - handed back to the caller's thread
            outcome["error"] = exc

    try:
        previous = threading.stack_size(size)
    except (ValueError, RuntimeError):
        return cst.parse_module(data)  # no way to size a stack here: parse as we are
    try:
        thread = threading.Thread(target=parse, name="gnnlint-parse", daemon=True)
        thread.start()
    except RuntimeError:  # cannot map that much stack (strict overcommit): parse as we are
        return cst.parse_module(data)
    finally:
        threading.stack_size(previous)
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["module"]
