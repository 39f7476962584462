"""``concise``: one ``path:line:col: CODE [*] severity: message`` line per finding, then the summary.

The severity sits where compilers put it (``error:``/``warning:``/``info:``
before the message), after ruff's ``CODE [*]``, so tools that match
``path:line:col: CODE`` keep working.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, TextIO

from gnnlint.finding import Finding
from gnnlint.report import ReportContext, make_console, sort_findings, summary_lines

if TYPE_CHECKING:
    from rich.text import Text


SEVERITY_STYLES = {"error": "bold red", "warning": "bold yellow", "info": "bold blue"}


def plain_header(f: Finding) -> str:
    return f"{f.where}:{f.line}:{f.col}: {f.code} {'[*] ' if f.fixable else ''}{f.severity}: {f.message}"


def header(f: Finding) -> "Text":
    """``path:line:col: CODE [*] severity: message`` with ruff's colours."""
    from rich.text import Text

    t = Text()
    t.append(f.where, style="bold")
    t.append(":", style="cyan")
    t.append(str(f.line))
    t.append(":", style="cyan")
    t.append(str(f.col))
    t.append(":", style="cyan")
    t.append(" ")
    t.append(f.code, style="bold red")
    t.append(" ")
    if f.fixable:
        t.append("[*]", style="cyan")
        t.append(" ")
    t.append(f"{f.severity}:", style=SEVERITY_STYLES.get(f.severity, ""))
    t.append(" ")
    t.append(f.message)
    return t


def summary(console, findings: list[Finding], ctx: ReportContext) -> None:
    from rich.text import Text

    if not ctx.summary:
        return
    for line in summary_lines(findings, ctx):
        if line.startswith("All checks passed"):
            style = "bold green"
        elif line.startswith(("Found", "Fixed")):
            style = "bold"
        else:
            style = ""
        console.print(Text(line, style=style))


def render_concise(findings: list[Finding], out: TextIO, ctx: ReportContext) -> None:
    ordered = sort_findings(findings)
    if not ctx.color:
        # Plain text needs no rich (~15 ms of imports: a warm run's budget).
        for f in ordered:
            out.write(plain_header(f) + "\n")
        for line in summary_lines(ordered, ctx) if ctx.summary else ():
            out.write(line + "\n")
        return
    console = make_console(out, ctx.color)
    for f in ordered:
        console.print(header(f))
    summary(console, ordered, ctx)
