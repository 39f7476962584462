"""Findings and fixes are plain values: rules make them, reporters format them."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Applicability = Literal["safe", "unsafe", "display-only"]


@dataclass(frozen=True)
class Edit:
    """Replace the text between two 1-based (line, column) positions.

    Columns count characters (code points), as libcst's positions do; the end is
    exclusive. An insertion has start == end.
    """

    line: int
    col: int
    end_line: int
    end_col: int
    content: str


@dataclass(frozen=True)
class Fix:
    applicability: Applicability
    message: str
    edits: tuple[Edit, ...]


@dataclass(frozen=True)
class Finding:
    """One diagnostic. Lines and columns are 1-based; end_col is exclusive."""

    path: str
    line: int
    col: int
    end_line: int
    end_col: int
    code: str
    name: str
    message: str
    severity: Literal["error", "warning"] = "error"
    fix: Fix | None = None
    # Line a `# noqa` must sit on to suppress this finding (first line of the
    # enclosing statement); 0 means "the finding's own line".
    noqa_line: int = 0

    @property
    def fixable(self) -> bool:
        return self.fix is not None and self.fix.applicability == "safe"

    def sort_key(self) -> tuple:
        return (self.path, self.line, self.col, self.code)
