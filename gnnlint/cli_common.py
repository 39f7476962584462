"""What every gnnlint subcommand shares: usage errors (exit 2), warnings,
rule-code lists, colour, and the settings a command's flags and the config
files make (``settings_from``)."""
from __future__ import annotations

import os
from pathlib import Path

import click


def fail(message: str) -> "click.exceptions.Exit":
    click.echo(f"gnnlint: error: {message}", err=True)
    return click.exceptions.Exit(2)


def split_codes(values: tuple[str, ...]) -> list[str]:
    out: list[str] = []
    for value in values:
        out.extend(part.strip().upper() for part in value.split(",") if part.strip())
    return out


def color_for(stream) -> bool:
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return hasattr(stream, "isatty") and stream.isatty()


def warn(message: str) -> None:
    click.echo(f"gnnlint: warning: {message}", err=True)


def settings_from(kw: dict):
    from gnnlint.config import ConfigError, load_settings

    overrides: dict = {}
    for key in ("select", "extend_select", "ignore", "fixable", "unfixable"):
        if kw.get(key):
            overrides[key] = split_codes(kw[key])
            if not overrides[key]:  # `--select ''` would silently disable every rule
                raise fail(f"--{key.replace('_', '-')} names no rule code (got {kw[key][0]!r})")
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
    if named and all(not is_within(os.path.abspath(p), str(cwd)) for p in named):
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
        raise fail(str(exc))


def is_within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)
