"""Findings and fixes are plain values: rules make them, reporters format them."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Applicability = Literal["safe", "unsafe", "display-only"]
Severity = Literal["error", "warning", "info"]

# Lowest to highest. error: wrong results or the compiled code silently runs
# eagerly; warning: a cost paid on every call (a graph break, a sync);
# info: a one-off cost (one extra compile).
SEVERITIES: tuple[str, ...] = ("info", "warning", "error")


def severity_rank(severity: str) -> int:
    """0 for info, 1 for warning, 2 for error (an unknown value ranks as error)."""
    return SEVERITIES.index(severity) if severity in SEVERITIES else len(SEVERITIES) - 1


def at_least(findings, minimum: str) -> list:
    """The findings whose severity is ``minimum`` or higher."""
    floor = severity_rank(minimum)
    return [f for f in findings if severity_rank(f.severity) >= floor]


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
    severity: Severity = "error"
    fix: Fix | None = None
    # Line a `# noqa` must sit on to suppress this finding (first line of the
    # enclosing statement); 0 means "the finding's own line".
    noqa_line: int = 0
    # A notebook's finding, as reported: its cell (1-based, among all cells);
    # line and columns are then within the cell. None: a file's positions.
    cell: int | None = None
    # The first line of the loop each of whose iterations runs this finding's
    # code (GNN013: the step loop its message names); 0: none. `gnnlint
    # verify` counts the finding's runtime events per iteration of it.
    step_loop: int = 0

    @property
    def fixable(self) -> bool:
        return self.fix is not None and self.fix.applicability == "safe"

    @property
    def where(self) -> str:
        """The file as reported: ``nb.ipynb:cell 3`` for a notebook's cell."""
        return self.path if self.cell is None else f"{self.path}:cell {self.cell}"

    def sort_key(self) -> tuple:
        return (self.path, self.cell or 0, self.line, self.col, self.code)
