"""The shared context of one source text, for tests that ask it a question
directly (no project, no rules)."""
from __future__ import annotations

import textwrap

import libcst as cst

from gnnlint.context import FileContext


def context_of(source: str, path: str = "case.py") -> FileContext:
    """The FileContext of ``source`` (dedented), as file ``path``."""
    return FileContext(cst.parse_module(textwrap.dedent(source)), path)
