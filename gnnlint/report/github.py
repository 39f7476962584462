"""``github``: GitHub Actions workflow commands, one annotation per finding::

    ::error title=gnnlint (GNN001),file=train.py,line=3,col=5,endLine=3,endColumn=9::GNN001 message

The command is the finding's severity: ``::error``, ``::warning``, or
``::notice`` for ``info``.

Values are escaped as GitHub's toolkit does: ``%``, ``\\r``, ``\\n`` everywhere,
and ``:`` and ``,`` in properties too.
"""
from __future__ import annotations

from typing import TextIO

from gnnlint.finding import Finding
from gnnlint.report import sort_findings


# finding severity -> workflow command
LEVELS = {"error": "error", "warning": "warning", "info": "notice"}


def escape_data(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(value: str) -> str:
    return escape_data(value).replace(":", "%3A").replace(",", "%2C")


def annotation(f: Finding) -> str:
    level = LEVELS.get(f.severity, "error")
    props = [
        ("title", f"gnnlint ({f.code})"),
        ("file", f.path),
        ("line", str(f.line)),
        ("col", str(f.col)),
        ("endLine", str(f.end_line)),
        ("endColumn", str(f.end_col)),
    ]
    joined = ",".join(f"{k}={escape_property(v)}" for k, v in props)
    cell = f"cell {f.cell}: " if f.cell is not None else ""  # GitHub cannot point into a notebook's cell
    return f"::{level} {joined}::{escape_data(f'{cell}{f.code} {f.message}')}"


def render_github(findings: list[Finding], out: TextIO) -> None:
    for f in sort_findings(findings):
        out.write(annotation(f) + "\n")
