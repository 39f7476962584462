"""``concise``: one ``path:line:col: CODE [*] message`` line per finding, then the summary."""
from __future__ import annotations

from typing import TextIO

from rich.text import Text

from gnnlint.finding import Finding
from gnnlint.report import ReportContext, make_console, sort_findings, summary_lines


def header(f: Finding) -> Text:
    """``path:line:col: CODE [*] message`` with ruff's colours."""
    t = Text()
    t.append(f.path, style="bold")
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
    t.append(f.message)
    return t


def summary(console, findings: list[Finding], ctx: ReportContext) -> None:
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
    console = make_console(out, ctx.color)
    ordered = sort_findings(findings)
    for f in ordered:
        console.print(header(f))
    summary(console, ordered, ctx)
