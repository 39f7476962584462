"""``json``: a JSON list of findings with ruff's keys (plus ``name`` and ``severity``).

Each entry::

    {"cell": null, "code": "GNN001", "end_location": {"column": 9, "row": 3},
     "filename": "train.py", "fix": null | {"applicability": "safe",
     "message": "...", "edits": [{"content": "...", "end_location": {...},
     "location": {...}}]}, "location": {"column": 5, "row": 3},
     "message": "...", "noqa_row": 3, "url": "https://...", "name": "host-sync",
     "severity": "error"}

Rows and columns are 1-based; columns count characters and the end is
exclusive. No summary line; ``[]`` when there is nothing to report.
"""
from __future__ import annotations

from typing import Any, TextIO

from gnnlint.finding import Edit, Finding
from gnnlint.report import json_text, rule_url, sort_findings


def _loc(row: int, column: int) -> dict[str, int]:
    return {"column": column, "row": row}


def _edit(e: Edit) -> dict[str, Any]:
    return {
        "content": e.content,
        "end_location": _loc(e.end_line, e.end_col),
        "location": _loc(e.line, e.col),
    }


def finding_to_json(f: Finding) -> dict[str, Any]:
    fix = None
    if f.fix is not None:
        fix = {
            "applicability": f.fix.applicability,
            "message": f.fix.message,
            "edits": [_edit(e) for e in f.fix.edits],
        }
    return {
        "cell": f.cell,
        "code": f.code,
        "end_location": _loc(f.end_line, f.end_col),
        "filename": f.path,
        "fix": fix,
        "location": _loc(f.line, f.col),
        "message": f.message,
        "noqa_row": f.noqa_line or f.line,
        "url": rule_url(f.code),
        "name": f.name,
        "severity": f.severity,
    }


def render_json(
    findings: list[Finding], out: TextIO, extra: list[dict] | None = None
) -> None:
    """Write the findings as a JSON list.

    ``extra[i]`` (if given) is merged into the entry of the i-th finding in
    report order, i.e. of ``sort_findings(findings)[i]``; its keys are added
    after the standard ones (and win over them).
    """
    ordered = sort_findings(findings)
    if extra is not None and len(extra) != len(ordered):
        raise ValueError(
            f"extra has {len(extra)} entries for {len(ordered)} findings"
        )
    entries = []
    for i, f in enumerate(ordered):
        entry = finding_to_json(f)
        if extra is not None and extra[i]:
            entry.update(extra[i])
        entries.append(entry)
    out.write(json_text(entries, indent=2))
    out.write("\n")
