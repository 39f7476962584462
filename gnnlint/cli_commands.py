"""The subcommands besides check/fix: ``rules``, ``rule``, ``server``,
``clean`` and ``verify`` (registered on the ``gnnlint`` group in cli.py)."""
from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Optional

import click

from gnnlint.cli_common import color_for, fail, settings_from


# ---------------------------------------------------------------------- rules
@click.command("rules")
@click.option("--output-format", type=click.Choice(["text", "json"]), default="text")
def rules_command(output_format: str) -> None:
    """List every rule: code, name, fixable, summary."""
    from gnnlint.docs import rules_table_json, rules_table_text

    click.echo(rules_table_json() if output_format == "json" else rules_table_text())


@click.command("rule")
@click.argument("code")
@click.option("--output-format", type=click.Choice(["text", "json"]), default="text")
def rule_command(code: str, output_format: str) -> None:
    """Print the page of rule CODE (e.g. GNN001)."""
    from gnnlint.docs import rule_json, rule_page
    from gnnlint.rules import rule_by_code

    rule = rule_by_code(code.upper())
    if rule is None:
        raise fail(f"unknown rule code '{code}' (see `gnnlint rules`)")
    click.echo(rule_json(rule) if output_format == "json" else rule_page(rule))


@click.command("server")
def server_command() -> None:
    """Run the language server (LSP over stdio) for editors."""
    try:
        from gnnlint.server import main as serve
    except ImportError as exc:
        raise fail(f"the server needs the optional extra: pip install 'gnnlint[server]' ({exc})")
    serve()


@click.command("clean")
@click.option("--cache-dir", type=click.Path(path_type=Path), envvar="GNNLINT_CACHE_DIR")
@click.option("--config", "config_path", type=click.Path(path_type=Path))
@click.option("--isolated", is_flag=True)
def clean(cache_dir: Optional[Path], config_path: Optional[Path], isolated: bool) -> None:
    """Remove the cache directory (only one that gnnlint created)."""
    from gnnlint import cache

    settings = settings_from({"cache_dir": cache_dir, "config_path": config_path, "isolated": isolated})
    target = cache.Cache.for_settings(settings).root
    if not os.path.lexists(target):
        return
    try:
        problem = cache.remove(target)
    except OSError as exc:
        raise fail(f"cannot remove {target}: {exc.strerror or exc}")
    if problem is not None:
        raise fail(f"{target} {problem}; not removed")
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
        raise fail(f"--max-memory {value!r}: give a size such as 8G or 512M, or 'none'") from None
    if n <= 0:
        return None
    return int(n * mult)


@click.command("verify", cls=_VerifyCommand)
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

    Exit codes: 0 nothing confirmed, 1 a finding confirmed or a runtime event
    no finding explains (listed as unexpected), 2 a target error (it failed
    before any compiled code ran, or could not be started) or a usage error.
    """
    try:
        from gnnlint.verify import run_verify
    except ImportError as exc:
        raise fail(f"verify needs the optional extra: pip install 'gnnlint[verify]' ({exc})")
    program_args = ctx.meta.get("gnnlint.program_args", [])
    settings = settings_from({"config_path": config_path, "isolated": isolated})
    targets = list(targets)
    if not targets and not modules:
        targets = list(settings.verify.targets)
    if not targets and not modules:
        raise fail("no targets: name a script (train.py), -m module, a file with gnnlint_example() "
                    "or module:function, or set [tool.gnnlint.verify] targets")
    if max_seconds is not None and max_seconds <= 0:
        raise fail("--max-seconds must be positive")
    if max_calls is not None and max_calls < 0:
        raise fail("--max-calls must be 0 (no limit) or more")
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
                          output_format=output_format, out=out, color=color_for(out),
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
