"""The command line: the ``gnnlint`` group and its check/fix commands (ruff's habits).
The other subcommands are in cli_commands.py, the shared helpers in
cli_common.py, how a check is reported in cli_report.py.

Exit codes: 0 no findings, 1 findings, 2 usage/config/internal error.
Heavy modules (libcst, rich, the engine) are imported inside the commands so
``gnnlint --version`` and a one-file pre-commit run start fast.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from gnnlint import __version__
from gnnlint.cli_commands import clean, rule_command, rules_command, server_command, verify
from gnnlint.cli_common import fail, settings_from, warn
from gnnlint.cli_report import report, writing

OUTPUT_FORMATS = ("full", "concise", "json", "github", "sarif")


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
    """Lint PATHS (default: the current directory).

    Exit codes (ruff's): 0 no findings, 1 findings, 2 a usage, configuration
    or internal error. --exit-zero always exits 0.
    """
    raise click.exceptions.Exit(_run(**kwargs))


@main.command()
@_common_options
def fix(**kwargs) -> None:
    """Apply fixes to PATHS (same as `check --fix`)."""
    raise click.exceptions.Exit(_run(fix=True, **kwargs))


for _command in (rules_command, rule_command, server_command, clean, verify):
    main.add_command(_command)


def _run(**kw) -> int:
    from gnnlint.config import ConfigError

    settings = settings_from(kw)
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
            raise fail("--add-noqa edits files; it cannot read stdin")
        if kw.get("fix") or kw.get("diff"):
            raise fail("--add-noqa cannot be combined with --fix or --diff")
        try:
            return _add_noqa(paths, settings, kw)
        except ConfigError as exc:
            raise fail(str(exc))
    try:
        if paths == ["-"]:
            result, sources, fix_outcome = _check_stdin(settings, kw)
            if fix_outcome is not None and not kw.get("diff"):
                # as editors use it (ruff's habit): the fixed source on
                # stdout, the findings that remain on stderr
                with writing(sys.stdout):
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
        raise fail(str(exc))
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
            raise fail(f"cannot write {output_file}: {exc.strerror or exc}")
    try:
        with writing(out_stream, output_file):
            if fix_outcome is not None and kw.get("diff"):
                out_stream.write("".join(fix_outcome.diffs))
                code = 1 if fix_outcome.diffs else 0
                return 0 if kw.get("exit_zero") else code
            report(findings, sources, fmt, out_stream, kw, fix_outcome, settings)
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
        warn(w)
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
        raise fail("--show-settings needs exactly one file (or '-' with --stdin-filename)")
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
            warn(error)
    if not kw.get("silent"):
        click.echo(f"Added {added} noqa directive{'' if added == 1 else 's'}.", err=True)
    return 0


def _discover(paths, settings, force_exclude: bool = False):
    from gnnlint.discover import discover

    for path in paths:  # a path that does not exist is a usage error, whatever else is named
        if not os.path.lexists(os.path.join(os.fspath(settings.cwd), path)):
            raise fail(f"{path}: No such file or directory")
    files, warnings = discover([Path(p) for p in paths], settings)
    for w in warnings:
        warn(w)
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
        raise fail(str(exc))
    except Exception as exc:  # noqa: BLE001 - an internal error names the file and exits 2
        raise fail(f"internal error: {exc}")
    for error in result.errors:
        warn(error)
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
    sources: dict = {}
    noqa_warnings: list[str] = []
    findings = apply_noqa(result.findings, sources_out=sources, ignore=kw.get("ignore_noqa", False),
                          warnings_out=noqa_warnings)
    for message in noqa_warnings if not (kw.get("silent") or kw.get("quiet")) else ():
        warn(message)
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
            return _unreadable_stdin_notebook(name, data, exc, settings, fixing)
        nb_bytes, data = data, notebook.source.encode("utf-8")
    try:
        text = decode_source(data)
    except (SyntaxError, UnicodeDecodeError, LookupError) as exc:
        # the same answer as the file on disk: GNN000 with Python's words (or a named skip)
        one = undecodable(name, data, f"{name}: cannot decode source: {exc}", options_resolver(settings)(Path(name)))
        if one.error:
            warn(one.error)
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
            warn(one.error)
            return None, {}, None
        raw = one.findings
    else:
        result = check_project([Path(name)], settings, project_facts=kw.get("project_facts", True),
                               use_cache=not kw.get("no_cache"), contents={str(Path(name)): data})
        for error in result.errors + result.internal_errors:
            warn(error)
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
        warn(error)
    diffs = [unified_diff(name, fixed.original_text, fixed.text)] if fixed.changed else []
    if notebook is not None:
        try:
            source = notebook.with_source(fixed.text).encode("utf-8") if fixed.changed else nb_bytes
        except NotebookError as exc:
            warn(f"{name}: not fixed: {exc}")
            return (*localize(apply_noqa(raw, {name: text}), {name: text}, read=lambda _path: nb_bytes),
                    SimpleNamespace(fixed=[], diffs=[], errors=[], source=nb_bytes))
        outcome = SimpleNamespace(fixed=fixed.applied, diffs=diffs, errors=fixed.errors, source=source)
        return (*localize(fixed.remaining, {name: fixed.text}, read=lambda _path: nb_bytes), outcome)
    outcome = SimpleNamespace(fixed=fixed.applied, diffs=diffs, errors=fixed.errors, source=fixed.fixed)
    return fixed.remaining, {name: fixed.text}, outcome


def _unreadable_stdin_notebook(name, data, exc, settings, fixing):
    """The same answer as the file on disk: GNN000 at line 1 (a named skip
    when GNN000 is not selected); an editor gets its buffer back unchanged."""
    from types import SimpleNamespace

    from gnnlint.engine import lint_one, options_resolver
    from gnnlint.notebook import unreadable_source

    one = lint_one(name, unreadable_source(exc), options_resolver(settings)(Path(name)), None)
    if not one.findings:
        warn(f"{name}: cannot read notebook: {exc}")
        return None, {}, None
    return one.findings, {}, (SimpleNamespace(fixed=[], diffs=[], errors=[], source=data) if fixing else None)


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
        warn(error)
    return outcome.remaining, outcome.sources, outcome



if __name__ == "__main__":
    main()
