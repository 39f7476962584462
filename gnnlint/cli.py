"""The command line: check, fix, verify, rule, rules, clean (ruff's habits).

Exit codes: 0 no findings, 1 findings, 2 usage/config/internal error.
Heavy modules (libcst, rich, the engine) are imported inside the commands so
``gnnlint --version`` and a one-file pre-commit run start fast.
"""
from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path
from typing import Optional

import click

from gnnlint import __version__

OUTPUT_FORMATS = ("full", "concise", "json", "github", "sarif")


def _fail(message: str) -> "click.exceptions.Exit":
    click.echo(f"gnnlint: error: {message}", err=True)
    return click.exceptions.Exit(2)


def _split_codes(values: tuple[str, ...]) -> list[str]:
    out: list[str] = []
    for value in values:
        out.extend(part.strip().upper() for part in value.split(",") if part.strip())
    return out


def _color_for(stream) -> bool:
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return hasattr(stream, "isatty") and stream.isatty()


def _common_options(func):
    options = [
        click.argument("paths", nargs=-1, type=click.Path(path_type=str)),
        click.option("--select", multiple=True, help="Rule codes or prefixes to enable (comma-separated); ALL for every rule."),
        click.option("--extend-select", multiple=True, help="Codes to enable in addition to those selected."),
        click.option("--ignore", multiple=True, help="Codes or prefixes to disable."),
        click.option("--exclude", multiple=True, help="Replace the exclude patterns."),
        click.option("--extend-exclude", multiple=True, help="Patterns to exclude in addition."),
        click.option("--respect-gitignore/--no-respect-gitignore", default=None, help="Honour .gitignore files (default: true)."),
        click.option("--config", "config_path", type=click.Path(path_type=Path), help="Read [tool.gnnlint] from this file."),
        click.option("--isolated", is_flag=True, help="Ignore all configuration files."),
        click.option("--output-format", type=click.Choice(OUTPUT_FORMATS), envvar="GNNLINT_OUTPUT_FORMAT",
                     help="Output format (default: full on a terminal, concise otherwise)."),
        click.option("-o", "--output-file", type=click.Path(path_type=Path), help="Write the report to this file."),
        click.option("-e", "--exit-zero", is_flag=True, help="Exit 0 even when there are findings."),
        click.option("--severity", type=click.Choice(["info", "warning", "error"]), default=None,
                     help="Report only findings of this severity or higher (info < warning < error; default info)."),
        click.option("--statistics", is_flag=True, help="Print counts per rule instead of the findings."),
        click.option("-n", "--no-cache", is_flag=True, help="Do not read or write the cache."),
        click.option("--cache-dir", type=click.Path(path_type=Path), envvar="GNNLINT_CACHE_DIR", help="Cache directory (default .gnnlint_cache)."),
        click.option("--diff", is_flag=True, help="With fixes: print a unified diff, write nothing."),
        click.option("--unsafe-fixes", is_flag=True, help="Also apply fixes marked unsafe."),
        click.option("--show-fixes", is_flag=True, help="List the fixes that were applied."),
        click.option("--exit-non-zero-on-fix", is_flag=True, help="Exit 1 when a fix was applied, even if nothing remains."),
        click.option("--fixable", multiple=True, help="Codes whose fixes may be applied."),
        click.option("--unfixable", multiple=True, help="Codes whose fixes are never applied."),
        click.option("--show-source/--no-show-source", default=True, help="Show the source line under each finding (full format)."),
        click.option("--stdin-filename", help="The name of the file read from stdin (with '-')."),
        click.option("--force-exclude", is_flag=True,
                     help="Apply exclude patterns to files named on the command line too (for pre-commit)."),
        click.option("--assume-compiled", type=click.Choice(["detected", "modules"]), default=None,
                     help="'modules': treat every nn.Module forward as compiled (library mode)."),
        click.option("--torch-version", help="Target torch version for version-aware rules."),
        click.option("--pyg-version", help="Target torch_geometric version for version-aware rules."),
        click.option("--max-file-size", type=click.IntRange(min=0), default=None,
                     help="Skip (and report) a file to parse that is larger than this many KiB; 0: no limit (default 1024)."),
        click.option("-j", "--jobs", type=click.IntRange(min=1), default=None, help="Worker processes (default: CPU count)."),
        click.option("--project-facts/--no-project-facts", default=True,
                     help="Read the whole project (from its root) for what other files say about the named ones: "
                          "what they compile, run every step, feed (default: on; findings do not depend on "
                          "which files are named)."),
        click.option("--absolute-paths", is_flag=True,
                     help="Name files by absolute path (default: relative to the project root)."),
        click.option("-q", "--quiet", is_flag=True, help="Print findings only, no summary line."),
        click.option("-s", "--silent", is_flag=True,
                     help="Print nothing (the exit code still says whether there are findings)."),
        click.option("--ignore-noqa", is_flag=True, help="Report (and fix) findings that a # noqa suppresses."),
        click.option("--add-noqa", is_flag=True,
                     help="Add a '# noqa: CODE' to every line with a finding (--add-noqa=REASON: after the codes); "
                          "exit 0."),
        click.option("--add-noqa-reason", hidden=True, default=None),
        click.option("--show-files", is_flag=True,
                     help="List the files that would be checked (with -v: the ones left out, and why)."),
        click.option("--show-settings", is_flag=True,
                     help="Print the settings the (one) file named gets, and where each value came from."),
        click.option("-v", "--verbose", is_flag=True,
                     help="Print how many files were checked, parsed and answered from the cache (stderr)."),
    ]
    for option in reversed(options):
        func = option(func)
    return func


class _Main(click.Group):
    def parse_args(self, ctx, args):
        # ruff's `--add-noqa[=REASON]`: the reason only with '=', so
        # `--add-noqa src/` keeps src/ a path
        out = []
        for arg in args:
            if arg.startswith("--add-noqa="):
                out += ["--add-noqa", "--add-noqa-reason", arg.split("=", 1)[1]]
            else:
                out.append(arg)
        return super().parse_args(ctx, out)

    def invoke(self, ctx):
        """Ctrl-C or SIGTERM ends the run promptly: the workers are killed,
        temporary files removed, nothing half-written; exit 130 (143 for
        SIGTERM) with one line, no traceback. A second signal exits at once."""
        import signal
        import threading

        previous = {}
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                previous[sig] = signal.signal(sig, _on_signal)
        try:
            result = super().invoke(ctx)
        except KeyboardInterrupt as exc:
            terminated = isinstance(exc, _Terminated)
            try:
                click.echo("gnnlint: terminated" if terminated else "gnnlint: interrupted", err=True)
            except OSError:
                pass
            raise click.exceptions.Exit(143 if terminated else 130)
        except BaseException:
            _restore(previous)
            raise
        _restore(previous)
        return result


class _Terminated(KeyboardInterrupt):
    """SIGTERM, handled as Ctrl-C is (exit 143)."""


def _on_signal(signum, frame):
    import signal

    # the first signal unwinds the run; from now on another one exits at once
    signal.signal(signal.SIGINT, _exit_now)
    signal.signal(signal.SIGTERM, _exit_now)
    raise _Terminated() if signum == signal.SIGTERM else KeyboardInterrupt()


def _exit_now(signum, frame):
    import signal

    os._exit(143 if signum == signal.SIGTERM else 130)  # workers die with us (parent-death signal)


def _restore(previous: dict) -> None:
    import signal

    for sig, handler in previous.items():
        signal.signal(sig, handler)


@click.group(cls=_Main, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "-V", "--version", prog_name="gnnlint", message="%(prog)s %(version)s")
def main() -> None:
    """gnnlint: find the code that makes torch.compile slow or wrong in GNN code."""


@main.command()
@_common_options
@click.option("--fix/--no-fix", "fix", default=False, help="Apply safe fixes (and unsafe ones with --unsafe-fixes).")
@click.option("--fix-only", is_flag=True,
              help="Apply fixes; do not report, or exit non-zero for, the findings that remain.")
def check(**kwargs) -> None:
    """Lint PATHS (default: the current directory)."""
    raise click.exceptions.Exit(_run(**kwargs))


@main.command()
@_common_options
def fix(**kwargs) -> None:
    """Apply fixes to PATHS (same as `check --fix`)."""
    raise click.exceptions.Exit(_run(fix=True, **kwargs))


def _settings(kw: dict):
    from gnnlint.config import ConfigError, load_settings

    overrides: dict = {}
    for key in ("select", "extend_select", "ignore", "fixable", "unfixable"):
        if kw.get(key):
            overrides[key] = _split_codes(kw[key])
            if not overrides[key]:  # `--select ''` would silently disable every rule
                raise _fail(f"--{key.replace('_', '-')} names no rule code (got {kw[key][0]!r})")
    for key in ("exclude", "extend_exclude"):
        if kw.get(key):
            overrides[key] = [p for value in kw[key] for p in value.split(",") if p]
    for key in ("respect_gitignore", "assume_compiled", "torch_version", "pyg_version", "max_file_size",
                "severity"):
        if kw.get(key) is not None:
            overrides[key] = kw[key]
    if kw.get("cache_dir") is not None:
        overrides["cache_dir"] = str(kw["cache_dir"])
    # The project root is looked for from the current directory, unless
    # every path named lies outside it (an editor naming an absolute path).
    named = [p for p in (kw.get("paths") or ()) if p != "-"]
    if kw.get("stdin_filename") and "-" in (kw.get("paths") or ()):
        named = [kw["stdin_filename"]]
    cwd = Path.cwd()
    start = None
    if named and all(not _is_within(os.path.abspath(p), str(cwd)) for p in named):
        start = Path(os.path.abspath(named[0]))
        start = start if start.is_dir() else start.parent
    try:
        settings = load_settings(cwd=cwd, config_path=kw.get("config_path"), start=start,
                                 isolated=kw.get("isolated", False), overrides=overrides)
        if start is None and named and settings.root_marker == "cwd":
            # nothing marks a project around the current directory: the
            # named file's own project, if it has one (never all of /tmp)
            first = Path(os.path.abspath(named[0]))
            first = first if first.is_dir() else first.parent
            theirs = load_settings(cwd=cwd, config_path=kw.get("config_path"), start=first,
                                   isolated=kw.get("isolated", False), overrides=overrides)
            if theirs.root_marker != "cwd":
                settings = theirs
        return settings
    except ConfigError as exc:
        raise _fail(str(exc))


def _is_within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _run(**kw) -> int:
    from gnnlint.config import ConfigError

    settings = _settings(kw)
    if kw.get("fix_only"):
        kw["fix"] = True
    out_stream = sys.stdout
    output_file = kw.get("output_file")
    fmt = kw.get("output_format") or ("full" if sys.stdout.isatty() and not output_file else "concise")
    paths = list(kw.get("paths") or ()) or ["."]
    if kw.get("add_noqa_reason") is not None:
        kw["add_noqa"] = True
    if kw.get("show_settings"):
        return _show_settings(paths, settings, kw)
    if kw.get("show_files"):
        return _show_files(paths, settings, kw)
    if kw.get("add_noqa"):
        if paths == ["-"]:
            raise _fail("--add-noqa edits files; it cannot read stdin")
        if kw.get("fix") or kw.get("diff"):
            raise _fail("--add-noqa cannot be combined with --fix or --diff")
        try:
            return _add_noqa(paths, settings, kw)
        except ConfigError as exc:
            raise _fail(str(exc))
    try:
        if paths == ["-"]:
            result, sources, fix_outcome = _check_stdin(settings, kw)
            if fix_outcome is not None and not kw.get("diff"):
                # as editors use it (ruff's habit): the fixed source on
                # stdout, the findings that remain on stderr
                with _writing(sys.stdout):
                    sys.stdout.buffer.write(fix_outcome.source)
                if not output_file:
                    out_stream = sys.stderr
                    fmt = kw.get("output_format") or "concise"
        elif kw.get("fix") or kw.get("diff"):
            result, sources, fix_outcome = _fix(paths, settings, kw)
            if fix_outcome is None:
                return 2
        else:
            result, sources = _check_paths(paths, settings, kw)
            fix_outcome = None
    except ConfigError as exc:
        raise _fail(str(exc))
    if result is None:
        return 2
    from gnnlint.finding import at_least

    # --severity / `severity`: what is reported and counted for the exit code
    findings = at_least(result, settings.severity)
    if kw.get("fix_only"):
        findings = []  # ruff's --fix-only: what remains is neither reported nor an exit 1
    if kw.get("silent"):
        output_file, out_stream = None, open(os.devnull, "w", encoding="utf-8")
    if output_file:
        try:
            output_file.parent.mkdir(parents=True, exist_ok=True)
            out_stream = open(output_file, "w", encoding="utf-8", errors="backslashreplace")
        except OSError as exc:
            raise _fail(f"cannot write {output_file}: {exc.strerror or exc}")
    try:
        with _writing(out_stream, output_file):
            if fix_outcome is not None and kw.get("diff"):
                out_stream.write("".join(fix_outcome.diffs))
                code = 1 if fix_outcome.diffs else 0
                return 0 if kw.get("exit_zero") else code
            _report(findings, sources, fmt, out_stream, kw, fix_outcome, settings)
    finally:
        if out_stream not in (sys.stdout, sys.stderr):
            try:
                out_stream.close()
            except OSError:
                pass  # already reported by _writing
    if fix_outcome is not None and any("internal error" in e for e in fix_outcome.errors):
        return 2  # a fix was dropped because it broke the file: never silent
    if kw.get("exit_zero"):
        return 0
    if findings:
        return 1
    if fix_outcome is not None and kw.get("exit_non_zero_on_fix") and fix_outcome.fixed:
        return 1
    return 0


def _show_files(paths, settings, kw) -> int:
    from gnnlint.discover import discover

    excluded: list = []
    files, warnings = discover([Path(p) for p in paths], settings, excluded if kw.get("verbose") else None)
    for w in warnings:
        _warn(w)
    if kw.get("force_exclude"):
        dropped = [f for f in files if _force_excluded(f, settings)]
        excluded += [(str(f), "exclude (--force-exclude)") for f in dropped]
        files = [f for f in files if f not in dropped]
    for f in files:
        click.echo(str(f))
    for path, why in excluded:
        click.echo(f"excluded: {path} ({why})", err=True)
    return 2 if warnings and not files else 0


def _show_settings(paths, settings, kw) -> int:
    """The settings of one file, each value with where it came from."""
    import dataclasses

    from gnnlint.engine import target_versions

    if len(paths) != 1 or paths == ["-"] and not kw.get("stdin_filename"):
        raise _fail("--show-settings needs exactly one file (or '-' with --stdin-filename)")
    target = kw.get("stdin_filename") if paths == ["-"] else paths[0]
    mine = settings.for_path(target)
    lines = [f"file: {os.path.abspath(target)}",
             f"project root: {os.path.abspath(settings.project_root)} (marked by {settings.root_marker})",
             f"config: {mine.config_path or '(none: defaults)'}"]
    skip = {"cwd", "project_root", "config_path", "layers", "layer_origins", "origins", "hierarchy", "root_marker"}
    for f in dataclasses.fields(mine):
        if f.name in skip:
            continue
        value = getattr(mine, f.name)
        origin = mine.origins.get(f.name, "default")
        lines.append(f"{f.name.replace('_', '-')} = {value!r}  # {origin}")
    for (select, extend, ignore), origin in zip(mine.layers, mine.layer_origins):
        lines.append(f"then: select={select!r} extend-select={extend!r} ignore={ignore!r}  # {origin}")
    lines.append("enabled codes: " + ", ".join(sorted(mine.codes_for(target))))
    for dist, (version, origin) in target_versions(mine).items():
        lines.append(f"target {dist}: {version or 'newest'}  # {origin}")
    click.echo("\n".join(lines))
    return 0


def _add_noqa(paths, settings, kw) -> int:
    """--add-noqa[=REASON]: a `# noqa: CODE` on each line with a finding."""
    from gnnlint.add_noqa import add_noqa_to_file

    findings, _sources = _check_paths(paths, settings, kw)
    if findings is None:
        return 2
    by_path: dict[str, list] = {}
    for f in findings:
        by_path.setdefault(f.path, []).append(f)
    added = 0
    for path, group in sorted(by_path.items()):
        count, errors = add_noqa_to_file(path, group, kw.get("add_noqa_reason") or None)
        added += count
        for error in errors:
            _warn(error)
    if not kw.get("silent"):
        click.echo(f"Added {added} noqa directive{'' if added == 1 else 's'}.", err=True)
    return 0


@contextlib.contextmanager
def _writing(stream, output_file=None):
    """Report a failed write (a full disk, a closed pipe, a character the
    output's encoding lacks) as exit 2 with a message, never a traceback;
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
        raise _fail(f"cannot write the report to {where}: {reason}")


def _path_base(fmt: str, settings) -> str:
    """The folder reported paths are relative to: the project root; for
    GitHub annotations the repository's root (``$GITHUB_WORKSPACE``, else the
    git root), which is what GitHub resolves them against whatever the job's
    ``working-directory``."""
    from gnnlint.discover import _find_git_root

    root = os.path.abspath(settings.project_root)
    if fmt == "github":
        workspace = os.environ.get("GITHUB_WORKSPACE")
        if workspace and _is_within(root, os.path.abspath(workspace)):
            return os.path.abspath(workspace)
        return _find_git_root(root) or root
    return root


def _display_path(base: str, absolute: bool):
    """path (as the run named it) -> as reported: relative to ``base`` (POSIX
    separators kept native), absolute with --absolute-paths or outside it."""
    cwd = os.getcwd()

    def rename(path: str) -> str:
        if path == "-":
            return path
        full = os.path.normpath(os.path.join(cwd, path))
        if absolute or not _is_within(full, base):
            return full
        return os.path.relpath(full, base)

    return rename


def _report(findings, sources, fmt, out_stream, kw, fix_outcome, settings) -> None:
    from dataclasses import replace

    from gnnlint.report import ReportContext, render, render_statistics

    if kw.get("statistics"):
        render_statistics(findings, out_stream, "json" if fmt == "json" else "text")
        return
    from gnnlint.notebook import localize

    findings, sources = localize(findings, sources)  # a notebook's findings at their cells
    base = _path_base(fmt, settings)
    rename = _display_path(base, kw.get("absolute_paths", False))
    findings = [replace(f, path=rename(f.path)) for f in findings]
    sources = {rename(path): text for path, text in sources.items()}
    fixed_findings = [replace(f, path=rename(f.path)) for f in fix_outcome.fixed] if fix_outcome is not None else []
    hidden = 0
    if not kw.get("unsafe_fixes"):
        hidden = sum(1 for f in findings if f.fix is not None and f.fix.applicability == "unsafe")
    ctx = ReportContext(
        root=base,
        sources=sources,
        color=_color_for(out_stream) and fmt == "full",
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


def _warn(message: str) -> None:
    click.echo(f"gnnlint: warning: {message}", err=True)


def _discover(paths, settings, force_exclude: bool = False):
    from gnnlint.discover import discover

    for path in paths:  # a path that does not exist is a usage error, whatever else is named
        if not os.path.lexists(os.path.join(os.fspath(settings.cwd), path)):
            raise _fail(f"{path}: No such file or directory")
    files, warnings = discover([Path(p) for p in paths], settings)
    for w in warnings:
        _warn(w)
    if force_exclude:
        files = [f for f in files if not _force_excluded(f, settings)]
    return files, warnings


def _force_excluded(path: Path, settings) -> bool:
    """Whether an explicitly named file (or a folder above it, up to the
    project root) matches exclude/extend-exclude, as ruff's --force-exclude."""
    from gnnlint.discover import ExcludeMatcher

    absolute = Path(os.path.abspath(Path(settings.cwd) / path))
    mine = settings.for_path(absolute)  # a subproject's own excludes
    matcher = ExcludeMatcher(list(mine.exclude) + list(mine.extend_exclude), mine.project_root)
    if matcher.excluded(str(absolute), absolute.name, False):
        return True
    root = Path(os.path.abspath(mine.project_root))
    for parent in absolute.parents:
        if parent == root or root not in parent.parents:
            break
        if matcher.excluded(str(parent), parent.name, True):
            return True
    return False


def _check_paths(paths, settings, kw):
    from gnnlint.config import ConfigError
    from gnnlint.engine import apply_noqa, check_project

    files, warnings = _discover(paths, settings, kw.get("force_exclude", False))
    if not files:
        if warnings:
            return None, {}  # every path was missing: a usage error
        return [], {}
    jobs = kw.get("jobs") or os.cpu_count() or 1
    import time

    started = time.perf_counter()
    try:
        result = check_project(files, settings, project_facts=kw.get("project_facts", True), jobs=jobs,
                               use_cache=not kw.get("no_cache"),
                               progress=sys.stderr.isatty() and not kw.get("quiet"))
    except ConfigError as exc:  # a bad [tool.gnnlint] below the root: a config error, not ours
        raise _fail(str(exc))
    except Exception as exc:  # noqa: BLE001 - an internal error names the file and exits 2
        raise _fail(f"internal error: {exc}")
    for error in result.errors:
        _warn(error)
    if kw.get("verbose"):
        click.echo(f"gnnlint: {result.files_checked} files checked, {result.files_parsed} parsed "
                   f"({result.bytes_parsed / 1e6:.2f} MB), "
                   f"{result.files_cached} from the cache, in {time.perf_counter() - started:.2f} s "
                   f"({jobs} job{'s' if jobs != 1 else ''})", err=True)
        _print_versions(settings)
        _print_unread_options(result.unread_options)
    if result.internal_errors:
        for error in result.internal_errors:
            click.echo(f"gnnlint: error: {error}", err=True)
        return None, {}
    if files and result.files_checked == 0 and result.errors:
        return None, {}
    sources = {}
    findings = apply_noqa(result.findings, sources_out=sources, ignore=kw.get("ignore_noqa", False))
    return findings, sources


def _print_unread_options(unread: dict) -> None:
    """-v: compile sites whose dynamic=/mode= gnnlint could not read (GNN006/GNN007 say nothing there)."""
    total = sum(unread.values())
    if not total:
        return
    files = sorted(unread)
    shown = ", ".join(files[:5]) + (f" and {len(files) - 5} more files" if len(files) > 5 else "")
    click.echo(f"gnnlint: {total} compile site{'s' if total != 1 else ''} with options gnnlint could not read "
               f"(dynamic=/mode= from a config or a call): {shown}", err=True)


def _print_versions(settings) -> None:
    """-v: the target versions of version-aware rules, and where each came from."""
    from gnnlint.engine import target_versions

    for dist, (version, origin) in target_versions(settings).items():
        click.echo(f"gnnlint: target {dist} {version or 'newest'}: {origin}", err=True)


def _check_stdin(settings, kw):
    """Lint (and with --fix/--diff, fix) the source read from stdin as the
    file --stdin-filename names, with that file's project facts: the buffer
    replaces the file on disk. Returns (findings, sources, fix outcome or
    None); the outcome's ``source`` is the fixed source."""
    from types import SimpleNamespace

    from gnnlint.engine import apply_noqa, check_project, decode_source, lint_one, options_resolver, undecodable

    name = kw.get("stdin_filename") or "-"
    data = sys.stdin.buffer.read()
    fixing = kw.get("fix") or kw.get("diff")
    notebook = None
    if name.endswith(".ipynb"):  # a notebook's JSON: lint the module its code cells make
        from gnnlint.notebook import Notebook, NotebookError, localize

        try:
            notebook = Notebook.parse(data)
        except (NotebookError, UnicodeDecodeError) as exc:
            _warn(f"{name}: cannot read notebook: {exc}")
            return None, {}, None
        nb_bytes, data = data, notebook.source.encode("utf-8")
    try:
        text = decode_source(data)
    except (SyntaxError, UnicodeDecodeError, LookupError) as exc:
        # the same answer as the file on disk: GNN000 with Python's words (or a named skip)
        one = undecodable(name, data, f"{name}: cannot decode source: {exc}", options_resolver(settings)(Path(name)))
        if one.error:
            _warn(one.error)
            return None, {}, None
        unchanged = SimpleNamespace(fixed=[], diffs=[], errors=[], source=data) if fixing else None
        return one.findings, {}, unchanged
    if name != "-" and kw.get("force_exclude") and _force_excluded(Path(name), settings):
        # excluded: nothing to report, and an editor gets its buffer back unchanged
        return [], {}, (SimpleNamespace(fixed=[], diffs=[], errors=[], source=data) if fixing else None)
    options = options_resolver(settings)(Path(name))
    facts = None
    if name == "-":
        one = lint_one(name, data, options, None)
        if one.error:  # over max-file-size, a named skip: exit 2, as the same bytes on disk
            _warn(one.error)
            return None, {}, None
        raw = one.findings
    else:
        result = check_project([Path(name)], settings, project_facts=kw.get("project_facts", True),
                               use_cache=not kw.get("no_cache"), contents={str(Path(name)): data})
        for error in result.errors + result.internal_errors:
            _warn(error)
        if result.files_checked == 0 and (result.errors or result.internal_errors):
            return None, {}, None
        raw = result.findings
        facts = result.facts.get(str(Path(name)))
    if not fixing:
        sources = {name: text}
        findings = apply_noqa(raw, sources, ignore=kw.get("ignore_noqa", False))
        if notebook is not None:
            return (*localize(findings, sources, read=lambda _path: nb_bytes), None)
        return findings, sources, None
    from gnnlint.fix import fix_source, unified_diff

    fixable = frozenset(settings.for_path(name).fixable_codes) if name != "-" else frozenset(settings.fixable_codes)
    fixed = fix_source(name, data, options, facts, unsafe=kw.get("unsafe_fixes", False), fixable=fixable,
                       findings=raw)
    for error in fixed.errors:
        _warn(error)
    diffs = [unified_diff(name, fixed.original_text, fixed.text)] if fixed.changed else []
    if notebook is not None:
        try:
            source = notebook.with_source(fixed.text).encode("utf-8") if fixed.changed else nb_bytes
        except NotebookError as exc:
            _warn(f"{name}: not fixed: {exc}")
            return (*localize(apply_noqa(raw, {name: text}), {name: text}, read=lambda _path: nb_bytes),
                    SimpleNamespace(fixed=[], diffs=[], errors=[], source=nb_bytes))
        outcome = SimpleNamespace(fixed=fixed.applied, diffs=diffs, errors=fixed.errors, source=source)
        return (*localize(fixed.remaining, {name: fixed.text}, read=lambda _path: nb_bytes), outcome)
    outcome = SimpleNamespace(fixed=fixed.applied, diffs=diffs, errors=fixed.errors, source=fixed.fixed)
    return fixed.remaining, {name: fixed.text}, outcome


def _fix(paths, settings, kw):
    from gnnlint.fix import fix_paths

    files, warnings = _discover(paths, settings, kw.get("force_exclude", False))
    if not files:
        from types import SimpleNamespace

        return ([] if not warnings else None), {}, SimpleNamespace(fixed=[], diffs=[], errors=[])
    outcome = fix_paths(files, settings, unsafe=kw.get("unsafe_fixes", False), diff=kw.get("diff", False),
                        project_facts=kw.get("project_facts", True), use_cache=not kw.get("no_cache"),
                        jobs=kw.get("jobs") or os.cpu_count() or 1)
    for error in outcome.errors:
        _warn(error)
    return outcome.remaining, outcome.sources, outcome


# ---------------------------------------------------------------------- rules
@main.command("rules")
@click.option("--output-format", type=click.Choice(["text", "json"]), default="text")
def rules_command(output_format: str) -> None:
    """List every rule: code, name, fixable, summary."""
    from gnnlint.docs import rules_table_json, rules_table_text

    click.echo(rules_table_json() if output_format == "json" else rules_table_text())


@main.command("rule")
@click.argument("code")
@click.option("--output-format", type=click.Choice(["text", "json"]), default="text")
def rule_command(code: str, output_format: str) -> None:
    """Print the page of rule CODE (e.g. GNN001)."""
    from gnnlint.docs import rule_json, rule_page
    from gnnlint.rules import rule_by_code

    rule = rule_by_code(code.upper())
    if rule is None:
        raise _fail(f"unknown rule code '{code}' (see `gnnlint rules`)")
    click.echo(rule_json(rule) if output_format == "json" else rule_page(rule))


@main.command("server")
def server_command() -> None:
    """Run the language server (LSP over stdio) for editors."""
    try:
        from gnnlint.server import main as serve
    except ImportError as exc:
        raise _fail(f"the server needs the optional extra: pip install 'gnnlint[server]' ({exc})")
    serve()


@main.command("clean")
@click.option("--cache-dir", type=click.Path(path_type=Path), envvar="GNNLINT_CACHE_DIR")
@click.option("--config", "config_path", type=click.Path(path_type=Path))
@click.option("--isolated", is_flag=True)
def clean(cache_dir: Optional[Path], config_path: Optional[Path], isolated: bool) -> None:
    """Remove the cache directory (only one that gnnlint created)."""
    from gnnlint import cache

    settings = _settings({"cache_dir": cache_dir, "config_path": config_path, "isolated": isolated})
    target = cache.Cache.for_settings(settings).root
    if not os.path.lexists(target):
        return
    try:
        problem = cache.remove(target)
    except OSError as exc:
        raise _fail(f"cannot remove {target}: {exc.strerror or exc}")
    if problem is not None:
        raise _fail(f"{target} {problem}; not removed")
    click.echo(f"Removed {target}")


# ---------------------------------------------------------------------- verify
class _VerifyCommand(click.Command):
    """Everything after the first ``--`` is the program's own arguments
    (``gnnlint verify train.py -- --epochs 3``), never an option of ours."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if "--" in args:
            i = args.index("--")
            ctx.meta["gnnlint.program_args"] = args[i + 1:]
            args = args[:i]
        return super().parse_args(ctx, args)


def _parse_memory(value: Optional[str]) -> "int | None | str":
    """'8G', '512M', '0' or 'none' (no limit); None: the default."""
    if value is None:
        return "default"
    v = value.strip().lower()
    if v in ("0", "none", "off", "unlimited"):
        return None
    units = {"k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}
    mult = 1
    if v.endswith("b"):
        v = v[:-1]
    if v and v[-1] in units:
        mult = units[v[-1]]
        v = v[:-1]
    try:
        n = float(v)
    except ValueError:
        raise _fail(f"--max-memory {value!r}: give a size such as 8G or 512M, or 'none'") from None
    if n <= 0:
        return None
    return int(n * mult)


@main.command("verify", cls=_VerifyCommand)
@click.argument("targets", nargs=-1)
@click.option("-m", "--module", "modules", multiple=True, metavar="MODULE",
              help="Run a module as `python -m MODULE` does (e.g. -m pytest -- tests/ -x).")
@click.option("--as-script", is_flag=True,
              help="Run a file as a script even when it defines gnnlint_example().")
@click.option("--max-seconds", type=float, default=None,
              help="Stop each program cleanly after this many seconds (default 120).")
@click.option("--max-calls", type=int, default=None,
              help="Stop once every compiled callable ran this many times after its first "
                   "compile (default 50; 0: no limit).")
@click.option("--max-memory", default=None, metavar="SIZE",
              help="Address-space limit per target, e.g. 8G (default: half the machine's memory; none: no limit).")
@click.option("--backend", type=click.Choice(["eager", "aot_eager", "inductor"]), default=None,
              help="torch.compile backend (default eager: same graph breaks/recompiles, much faster).")
@click.option("--device", type=click.Choice(["cpu", "cuda", "auto"]), default="auto",
              help="cuda adds sync-debug and CUDA-graph re-record counts (untested here: no GPU).")
@click.option("--timeout", type=float, default=None, hidden=True, help="Old name of --max-seconds.")
@click.option("--output-format", type=click.Choice(["full", "json", "sarif"]), default="full")
@click.option("-o", "--output-file", type=click.Path(path_type=Path))
@click.option("--config", "config_path", type=click.Path(path_type=Path))
@click.option("--isolated", is_flag=True)
@click.pass_context
def verify(ctx, targets, modules, as_script, max_seconds, max_calls, max_memory, backend, device, timeout,
           output_format, output_file, config_path, isolated) -> None:
    """Run your program and give every finding in the code it ran a runtime verdict.

    \b
    gnnlint verify train.py [-- ARGS...]      python train.py ARGS, verified
    gnnlint verify -m pkg.train [-- ARGS...]  python -m pkg.train ARGS
    gnnlint verify -m pytest -- tests/ -x     your tests
    gnnlint verify train.py:main              calls main()
    gnnlint verify fixtures/example.py        its gnnlint_example()

    This RUNS the program (it may write files, as it would when run directly),
    in its own process group, within --max-seconds and --max-calls; its output
    goes to a log file whose path is printed.
    """
    try:
        from gnnlint.verify import run_verify
    except ImportError as exc:
        raise _fail(f"verify needs the optional extra: pip install 'gnnlint[verify]' ({exc})")
    program_args = ctx.meta.get("gnnlint.program_args", [])
    settings = _settings({"config_path": config_path, "isolated": isolated})
    targets = list(targets)
    if not targets and not modules:
        targets = list(settings.verify.targets)
    if not targets and not modules:
        raise _fail("no targets: name a script (train.py), -m module, a file with gnnlint_example() "
                    "or module:function, or set [tool.gnnlint.verify] targets")
    if max_seconds is not None and max_seconds <= 0:
        raise _fail("--max-seconds must be positive")
    if max_calls is not None and max_calls < 0:
        raise _fail("--max-calls must be 0 (no limit) or more")
    memory = _parse_memory(max_memory)
    seconds = max_seconds or timeout or settings.verify.timeout
    out = open(output_file, "w", encoding="utf-8") if output_file else sys.stdout
    import signal

    def _on_term(signum, frame):  # SIGTERM ends the targets like Ctrl-C does
        raise KeyboardInterrupt

    old_term = signal.signal(signal.SIGTERM, _on_term)
    try:
        code = run_verify(targets, settings=settings, backend=backend or settings.verify.backend,
                          device=device, timeout=seconds,
                          output_format=output_format, out=out, color=_color_for(out),
                          modules=list(modules), argv=program_args, as_script=as_script,
                          max_calls=50 if max_calls is None else (max_calls or None), max_memory=memory)
    except KeyboardInterrupt:
        click.echo("gnnlint verify: interrupted; the target(s) and everything they started were ended",
                   err=True)
        code = 130
    finally:
        signal.signal(signal.SIGTERM, old_term)
        if out is not sys.stdout:
            out.close()
    raise click.exceptions.Exit(code)


if __name__ == "__main__":
    main()
