"""Output formats for findings: one module per format, like ruff's.

``render(fmt, findings, out, ctx)`` is the one entry point the CLI uses;
``render_statistics`` prints ``--statistics``. Every format sorts the findings
by (path, line, col, code) first, whatever order they arrive in.

Reporters only format values: they never import the engine, and the ``sarif``
format imports the rule registry lazily (for the rule catalogue).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterable, TextIO

from gnnlint.finding import Finding

if TYPE_CHECKING:
    from rich.console import Console

FORMATS = ("full", "concise", "json", "github", "sarif")

# The one place rule documentation URLs are made.
RULES_URL_BASE = "https://github.com/gnnlint/gnnlint/blob/main/rules/"
INFORMATION_URI = "https://github.com/gnnlint/gnnlint"

# GNN000 is produced by the engine for files that do not parse; it has no
# rule class, so its catalogue entry lives here.
SYNTAX_ERROR_CODE = "GNN000"
SYNTAX_ERROR_NAME = "syntax-error"
SYNTAX_ERROR_SUMMARY = "File could not be parsed"
SYNTAX_ERROR_DOC = (
    "A file that libcst cannot parse is reported as a finding with the line of "
    "the parse error, instead of a traceback; no other rule runs on it.\n\n"
    "Fix the syntax error (or exclude the file) and run gnnlint again."
)

FIX_COMMAND = "gnnlint check --fix"


@dataclass
class ReportContext:
    # path -> source text, for the full format's snippets (a missing path
    # prints no snippet).
    sources: dict[str, str] = field(default_factory=dict)
    # False when not a tty or NO_COLOR is set (the CLI decides).
    color: bool = False
    # The full format shows the source line(s) with a caret underline.
    show_source: bool = True
    # Findings fixed by --fix (for the summary line).
    fixed: int = 0
    # Fixes available only with --unsafe-fixes (a hint line, like ruff's).
    unsafe_hidden: int = 0
    # The full format shows each fix as a diff under the finding.
    show_fixes: bool = False
    # --quiet: findings only, no summary line.
    summary: bool = True
    # The folder relative paths are relative to (the project root): SARIF's
    # originalUriBaseIds. None: the current directory.
    root: "str | None" = None


def json_text(value, **kwargs) -> str:
    """``json.dumps(value, ensure_ascii=False, ...)`` that is always valid
    UTF-8: a file name that is not UTF-8 (Python holds its bytes as lone
    surrogates) is written with its bad bytes escaped (``caf\\xe9.py``)."""
    import json
    import re

    text = json.dumps(value, ensure_ascii=False, **kwargs)
    if re.search("[\ud800-\udfff]", text) is None:
        return text
    return json.dumps(_escape_surrogates(value), ensure_ascii=False, **kwargs)


def _escape_surrogates(value):
    if isinstance(value, str):
        return value.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    if isinstance(value, dict):
        return {_escape_surrogates(k): _escape_surrogates(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_escape_surrogates(v) for v in value]
    return value


def rule_url(code: str) -> str:
    """The documentation page of a rule (its page in the ``rules/`` catalogue)."""
    return f"{RULES_URL_BASE}{code}.md"


def sort_findings(findings: Iterable[Finding]) -> list[Finding]:
    """Findings in report order: path, line, col, code (stable for ties).

    Per-finding extras given to ``render_json`` / ``render_sarif`` are aligned
    with this order: build them from ``sort_findings(findings)``.
    """
    return sorted(findings, key=lambda f: f.sort_key())


def make_console(out: TextIO, color: bool) -> "Console":
    """A rich console writing to ``out``: ANSI styles iff ``color``; never wraps."""
    from rich.console import Console

    return Console(
        file=out,
        color_system="standard" if color else None,
        force_terminal=color,
        no_color=not color,
        highlight=False,
        markup=False,
        emoji=False,
        soft_wrap=True,
        width=100_000,
        legacy_windows=False,
        force_jupyter=False,
        force_interactive=False,
        _environ={},
    )


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def summary_lines(findings: list[Finding], ctx: ReportContext) -> list[str]:
    """The closing lines of the full and concise formats (ruff's wording, ours)."""
    n = len(findings)
    lines: list[str] = []
    if ctx.fixed:
        lines.append(f"Fixed {_plural(ctx.fixed, 'finding')} ({n} remaining).")
    elif n == 0:
        lines.append("All checks passed!")
    else:
        fixable = sum(1 for f in findings if f.fixable)
        tail = f" ({fixable} fixable with `{FIX_COMMAND}`)" if fixable else ""
        lines.append(f"Found {_plural(n, 'finding')}{tail}.")
    if ctx.unsafe_hidden:
        verb = "fix" if ctx.unsafe_hidden == 1 else "fixes"
        lines.append(
            f"{ctx.unsafe_hidden} hidden {verb} can be enabled with the "
            "`--unsafe-fixes` option."
        )
    return lines


def render(fmt: str, findings: list[Finding], out: TextIO, ctx: ReportContext) -> None:
    """Write ``findings`` to ``out`` in format ``fmt`` (one of ``FORMATS``)."""
    if fmt == "full":
        from gnnlint.report.full import render_full

        render_full(findings, out, ctx)
    elif fmt == "concise":
        from gnnlint.report.concise import render_concise

        render_concise(findings, out, ctx)
    elif fmt == "json":
        from gnnlint.report.json_format import render_json

        render_json(findings, out)
    elif fmt == "github":
        from gnnlint.report.github import render_github

        render_github(findings, out)
    elif fmt == "sarif":
        from gnnlint.report.sarif import render_sarif

        render_sarif(findings, out, ctx)
    else:
        raise ValueError(f"unknown output format {fmt!r}; expected one of {', '.join(FORMATS)}")


def render_statistics(findings: list[Finding], out: TextIO, fmt: str) -> None:
    """``--statistics``: one row per code (count, code, name, ``[*]`` if fixable).

    A JSON list for the ``json`` format, text otherwise.
    """
    from gnnlint.report.stats import render_statistics as _render

    _render(findings, out, fmt)


__all__ = [
    "FORMATS",
    "ReportContext",
    "render",
    "render_statistics",
    "rule_url",
    "sort_findings",
    "summary_lines",
    "SYNTAX_ERROR_CODE",
    "SYNTAX_ERROR_NAME",
    "SYNTAX_ERROR_SUMMARY",
]
