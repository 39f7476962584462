"""How ``check`` reports: paths relative to the project (or the GitHub
workspace), the reporter for the output format, and a failed write as exit 2."""
from __future__ import annotations

import contextlib
import os
import sys

from gnnlint.cli_common import color_for, fail, is_within


@contextlib.contextmanager
def writing(stream, output_file=None):
    """Report a failed write (a full disk, a character the output's encoding
    lacks) as exit 2 with a message, never a traceback (a reader that closed
    the pipe: quietly, exit 1);
    what stdout still buffers is dropped so the exit flush cannot fail
    again."""
    try:
        yield
        stream.flush()
    except (OSError, UnicodeEncodeError) as exc:
        where = str(output_file) if output_file else getattr(stream, "name", "the output")
        if isinstance(exc, UnicodeEncodeError):
            reason = (f"{exc.reason}: {exc.encoding!r} cannot encode {exc.object[exc.start:exc.end]!r} "
                      f"(set PYTHONIOENCODING=utf-8 or use -o FILE)")
        else:
            reason = exc.strerror or str(exc)
        if stream in (sys.stdout, sys.stderr):
            try:
                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, stream.fileno())
                os.close(devnull)
            except (OSError, ValueError):
                pass
            if isinstance(exc, BrokenPipeError):
                # `gnnlint check | head`: the reader stopped, as it meant to; quiet, as ruff and
                # grep are. Exit 1: a report was being written, so there were findings to write.
                import click

                raise click.exceptions.Exit(1)
        raise fail(f"cannot write the report to {where}: {reason}")


def path_base(fmt: str, settings) -> str:
    """The folder reported paths are relative to: the project root; for
    GitHub annotations the repository's root (``$GITHUB_WORKSPACE``, else the
    git root), which is what GitHub resolves them against whatever the job's
    ``working-directory``."""
    from gnnlint.discover import _find_git_root

    root = os.path.abspath(settings.project_root)
    if fmt == "github":
        workspace = os.environ.get("GITHUB_WORKSPACE")
        if workspace and is_within(root, os.path.abspath(workspace)):
            return os.path.abspath(workspace)
        return _find_git_root(root) or root
    return root


def display_path(base: str, absolute: bool):
    """path (as the run named it) -> as reported: relative to ``base`` (POSIX
    separators kept native), absolute with --absolute-paths or outside it."""
    cwd = os.getcwd()

    def rename(path: str) -> str:
        if path == "-":
            return path
        full = os.path.normpath(os.path.join(cwd, path))
        if absolute or not is_within(full, base):
            return full
        return os.path.relpath(full, base)

    return rename


def report(findings, sources, fmt, out_stream, kw, fix_outcome, settings) -> None:
    from dataclasses import replace

    from gnnlint.report import ReportContext, render, render_statistics

    if kw.get("statistics"):
        render_statistics(findings, out_stream, "json" if fmt == "json" else "text")
        return
    from gnnlint.notebook import localize

    findings, sources = localize(findings, sources)  # a notebook's findings at their cells
    base = path_base(fmt, settings)
    rename = display_path(base, kw.get("absolute_paths", False))
    findings = [replace(f, path=rename(f.path)) for f in findings]
    sources = {rename(path): text for path, text in sources.items()}
    fixed_findings = [replace(f, path=rename(f.path)) for f in fix_outcome.fixed] if fix_outcome is not None else []
    hidden = 0
    if not kw.get("unsafe_fixes"):
        hidden = sum(1 for f in findings if f.fix is not None and f.fix.applicability == "unsafe")
    ctx = ReportContext(
        root=base,
        sources=sources,
        color=color_for(out_stream) and fmt == "full",
        show_source=kw.get("show_source", True),
        fixed=len(fix_outcome.fixed) if fix_outcome is not None else 0,
        unsafe_hidden=hidden,
        show_fixes=kw.get("show_fixes", False),
        summary=not kw.get("quiet"),
    )
    render(fmt, findings, out_stream, ctx)
    if fix_outcome is not None and kw.get("show_fixes") and fix_outcome.fixed and fmt in ("full", "concise"):
        out_stream.write(f"\nFixed {len(fix_outcome.fixed)} finding(s):\n")
        for f in fixed_findings:
            out_stream.write(f"  {f.path}:{f.line}:{f.col}: {f.code} {f.fix.message if f.fix else ''}\n")
