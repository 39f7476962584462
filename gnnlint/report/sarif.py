"""``sarif``: a SARIF 2.1.0 log with one run (GitHub code scanning reads it).

The driver lists every rule (``all_rules()`` plus GNN000); each result names
its rule by id and index, has one physical location (a relative POSIX URI with
``uriBaseId`` PROJECTROOT when the file is under the project root -- the run's
``originalUriBaseIds`` says where that is -- else a ``file://`` URI) and, when the
finding has a fix, a SARIF ``fix`` whose replacements are the fix's edits.
Columns count Unicode code points (``columnKind``), end columns exclusive, as
in the findings.
"""
from __future__ import annotations

import os
from pathlib import Path, PurePath
from typing import Any, TextIO
from urllib.parse import quote

import gnnlint
from gnnlint.finding import Finding, Fix
from gnnlint.report import (
    INFORMATION_URI,
    SYNTAX_ERROR_CODE,
    SYNTAX_ERROR_DOC,
    SYNTAX_ERROR_NAME,
    SYNTAX_ERROR_SUMMARY,
    ReportContext,
    json_text,
    rule_url,
    sort_findings,
)

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SARIF_VERSION = "2.1.0"


def _first_paragraph(doc: str) -> str:
    text = doc.strip()
    if not text:
        return ""
    para = text.split("\n\n", 1)[0]
    return " ".join(line.strip() for line in para.splitlines())


# finding severity -> SARIF result level
LEVELS = {"error": "error", "warning": "warning", "info": "note"}


def _descriptor(code: str, name: str, summary: str, doc: str, fix: str | None,
                severity: str = "error") -> dict[str, Any]:
    entry: dict[str, Any] = {
        "id": code,
        "name": name,
        "shortDescription": {"text": summary or name},
    }
    full = _first_paragraph(doc)
    if full:
        entry["fullDescription"] = {"text": full}
    entry["helpUri"] = rule_url(code)
    if doc.strip():
        entry["help"] = {"text": doc.strip(), "markdown": doc.strip()}
    entry["defaultConfiguration"] = {"level": LEVELS.get(severity, "error")}
    entry["properties"] = {
        "fixAvailability": fix or "none",
        "fixable": fix == "safe",
    }
    return entry


def rule_descriptors() -> list[dict[str, Any]]:
    """The driver's rule catalogue: GNN000 first, then every registered rule."""
    from gnnlint.rules import all_rules

    rules = [
        _descriptor(SYNTAX_ERROR_CODE, SYNTAX_ERROR_NAME, SYNTAX_ERROR_SUMMARY, SYNTAX_ERROR_DOC, None)
    ]
    for rule in all_rules():
        if rule.code == SYNTAX_ERROR_CODE:
            continue
        rules.append(
            _descriptor(rule.code, rule.name, rule.summary, rule.doc(), rule.fix_applicability,
                        rule.severity)
        )
    return rules


def artifact_uri(path: str, cwd: str | None = None) -> str:
    """A relative POSIX URI for a path under ``cwd``, else an absolute file URI."""
    base = Path(cwd) if cwd is not None else Path.cwd()
    p = Path(path)
    absolute = p if p.is_absolute() else base / p
    absolute = Path(os.path.normpath(absolute))
    try:
        rel = absolute.relative_to(Path(os.path.normpath(base)))
    except ValueError:
        return absolute.as_uri()
    return quote(os.fsencode(PurePath(rel).as_posix()))  # bytes: a non-UTF-8 name is %-escaped as is


ROOT_BASE_ID = "PROJECTROOT"


def _location(uri: str) -> dict[str, str]:
    if uri.startswith("file:"):
        return {"uri": uri}
    return {"uri": uri, "uriBaseId": ROOT_BASE_ID}


def _region(line: int, col: int, end_line: int, end_col: int) -> dict[str, int]:
    return {"startLine": line, "startColumn": col, "endLine": end_line, "endColumn": end_col}


def _fix(fix: Fix, uri: str) -> dict[str, Any]:
    return {
        "description": {"text": fix.message},
        "artifactChanges": [
            {
                "artifactLocation": _location(uri),
                "replacements": [
                    {
                        "deletedRegion": _region(e.line, e.col, e.end_line, e.end_col),
                        "insertedContent": {"text": e.content},
                    }
                    for e in fix.edits
                ],
            }
        ],
        "properties": {"applicability": fix.applicability},
    }


def build_sarif(
    findings: list[Finding],
    extra_properties: dict[int, dict] | None = None,
    cwd: str | None = None,
) -> dict[str, Any]:
    rules = rule_descriptors()
    index = {r["id"]: i for i, r in enumerate(rules)}
    results = []
    base = os.path.abspath(cwd) if cwd is not None else os.getcwd()
    for i, f in enumerate(sort_findings(findings)):
        uri = artifact_uri(f.path, base)
        result: dict[str, Any] = {"ruleId": f.code}
        if f.code in index:
            result["ruleIndex"] = index[f.code]
        result["level"] = LEVELS.get(f.severity, "error")
        result["message"] = {"text": f.message}
        result["locations"] = [
            {
                "physicalLocation": {
                    "artifactLocation": _location(uri),
                    "region": _region(f.line, f.col, f.end_line, f.end_col),
                }
            }
        ]
        if f.fix is not None and f.fix.edits:
            result["fixes"] = [_fix(f.fix, uri)]
        props = dict((extra_properties or {}).get(i) or {})
        if f.cell is not None:  # a notebook's finding: the region is within this cell
            props["cell"] = f.cell
        if props:
            result["properties"] = props
        results.append(result)
    return {
        "$schema": SARIF_SCHEMA,
        "version": SARIF_VERSION,
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "gnnlint",
                        "version": gnnlint.__version__,
                        "informationUri": INFORMATION_URI,
                        "rules": rules,
                    }
                },
                # relative URIs resolve against the project root
                "originalUriBaseIds": {ROOT_BASE_ID: {"uri": Path(base).as_uri().rstrip("/") + "/"}},
                "columnKind": "unicodeCodePoints",
                "results": results,
            }
        ],
    }


def render_sarif(
    findings: list[Finding],
    out: TextIO,
    ctx: ReportContext | None = None,
    extra_properties: dict[int, dict] | None = None,
) -> None:
    """Write the SARIF log.

    ``extra_properties[i]`` (if given) becomes the ``properties`` bag of the
    result for the i-th finding in report order, i.e. of
    ``sort_findings(findings)[i]`` (e.g. a ``gnnlint verify`` verdict).
    """
    log = build_sarif(findings, extra_properties, cwd=ctx.root if ctx is not None else None)
    out.write(json_text(log, indent=2))
    out.write("\n")
