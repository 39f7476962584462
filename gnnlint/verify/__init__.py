"""Runtime verification: ``gnnlint verify TARGET...``.

Static analysis guesses; the compiler knows. For each target, a child process
imports the target, compiles its model the way the user's code compiles it
(the options of the ``torch.compile`` call the project index links to the
model's class, else torch's defaults), runs it on example inputs of different
sizes (plus a few optimizer/scheduler steps when given) with instrumentation,
and reports graph breaks, recompilations, host syncs and compile errors with
the user's file and line, plus line coverage. Every static finding in the
files the target executed then gets a verdict:

- ``confirmed``: a runtime event at the finding's line (or within its
  statement) of a kind the rule predicts;
- ``not-reproduced``: the line ran and nothing happened (torch/PyG versions
  are printed: a hazard fixed upstream looks exactly like this);
- ``not-exercised``: the line never ran;

and runtime events no finding explains are listed as ``unexpected`` (with the
rule they would belong to, or none).

Targets
-------
The user's own program, as it is: ``path/to/train.py`` (a file without a
``gnnlint_example()``, or any file with ``as_script``) runs as ``__main__``
with ``sys.argv = [path, *argv]``; ``-m pkg.train`` (``modules``) as
``python -m`` runs it (``-m pytest`` runs the user's tests);
``path/to/file.py:func`` / ``pkg.module:func`` calls the function (any
return value; one that looks like an example is then run as one). The
program runs within the budgets (``timeout`` = --max-seconds, ``max_calls``)
and its exit is reported (``TargetReport.program``); its output goes to a log
file (``TargetReport.log_path``).

For library code: ``path/to/file.py`` defining ``gnnlint_example()``,
``pkg.module`` (its ``gnnlint_example``), or a directory (every file in it
defining ``gnnlint_example``). A file inside a package is imported as its
module, with the package's parent on ``sys.path``.

The example function returns ``(model, inputs)`` or ``(model, inputs, extras)``
(or a dict / object with ``model`` and ``inputs`` and the extras as keys /
attributes):

- ``inputs``: a list of example inputs **of different sizes**. A tuple is
  unpacked into positional arguments (``model(*inp)``); a PyG
  ``Data``/``HeteroData``/``Batch`` is passed as the model's ``forward``
  asks (the object, or its attributes by parameter name); anything else (a
  tensor, a dict) is passed as the one argument.
- ``extras`` (optional): ``optimizer``, ``scheduler``, ``loss_fn`` and
  ``step``. With an optimizer, verify runs ``max(len(inputs), 4)`` training
  steps: ``zero_grad``, forward, ``loss_fn(out, inp)`` (or ``loss_fn(out)``;
  default: the sum of the float outputs), ``backward``, the optimizer step
  (compiled with the options of the project's ``torch.compile(opt.step)`` /
  compiled function calling ``.step()``, when there is one), then
  ``scheduler.step()``. ``step`` replaces that whole update: a callable taking
  ``()``, ``(inp)`` or ``(model, inp)``, run after each forward.
- ``steps`` (optional): how many training steps to run (default
  ``max(len(inputs), 4)``), e.g. enough lr changes to reach the recompile
  limit.
- ``run`` (optional): a callable taking the (compiled) model that runs the
  user's own loop (e.g. ``lambda model: train(model, loader, optimizer)``);
  it replaces verify's loop, so syncs in the user's train/eval loops are
  exercised where they are written.
- The model may already be compiled; it is then used as is.

Only the child imports torch (lazily); importing this package does not.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, Callable, TextIO

from gnnlint.finding import Finding
from gnnlint.verify._runner import Target, TargetResult, default_max_memory, resolve_targets, run_all
from gnnlint.verify._verdicts import (
    CONFIRMED,
    NOT_EXERCISED,
    NOT_REPRODUCED,
    UNEXPECTED,
    Unexpected,
    Verdict,
    benign_counts,
    judge,
)

__all__ = [
    "run_verify",
    "verify",
    "VerifyReport",
    "TargetReport",
    "CONFIRMED",
    "NOT_REPRODUCED",
    "NOT_EXERCISED",
    "UNEXPECTED",
]

EXIT_CLEAN, EXIT_CONFIRMED, EXIT_ERROR = 0, 1, 2
DEFAULT_MAX_SECONDS = 120.0
DEFAULT_MAX_CALLS = 50


class TargetReport:
    """What verification found for one target."""

    def __init__(self, result: TargetResult, verdicts: list[Verdict], unexpected: list[Unexpected],
                 benign: dict[str, int] | None = None) -> None:
        self.result = result
        self.verdicts = verdicts
        self.unexpected = unexpected
        self.benign = benign or {}

    @property
    def log_path(self) -> str | None:
        return self.result.log_path

    @property
    def program(self) -> dict | None:
        """How the user's program ended (program targets only)."""
        return self.result.data.get("program")

    @property
    def budget(self) -> dict:
        return self.result.data.get("budget") or {}

    @property
    def spec(self) -> str:
        return self.result.target.spec

    @property
    def error(self) -> dict | None:
        return self.result.error

    @property
    def data(self) -> dict:
        return self.result.data

    def by_verdict(self, verdict: str) -> list[Verdict]:
        return [v for v in self.verdicts if v.verdict == verdict]

    def verdict_of(self, code: str, line: int | None = None) -> list[str]:
        return [v.verdict for v in self.verdicts
                if v.finding.code == code and (line is None or v.finding.line == line)]


class VerifyReport:
    def __init__(self, targets: list[TargetReport]) -> None:
        self.targets = targets

    @property
    def exit_code(self) -> int:
        if any(t.error for t in self.targets):
            return EXIT_ERROR
        if any(t.by_verdict(CONFIRMED) or t.unexpected for t in self.targets):
            return EXIT_CONFIRMED
        return EXIT_CLEAN


def _default_lint(files: list[str], settings: Any) -> list[Finding]:
    from gnnlint.engine import lint_paths

    return lint_paths([Path(f) for f in files], settings)


def verify(
    targets: list[str],
    *,
    settings: Any = None,
    backend: str = "eager",
    device: str = "auto",
    timeout: float = DEFAULT_MAX_SECONDS,
    cwd: Path | None = None,
    jobs: int | None = None,
    lint: Callable[[list[str], Any], list[Finding]] | None = None,
    train_steps: int | None = None,
    progress: Callable[[TargetResult], None] | None = None,
    modules: list[str] = (),  # type: ignore[assignment]
    argv: list[str] = (),  # type: ignore[assignment]
    as_script: bool = False,
    max_calls: int | None = DEFAULT_MAX_CALLS,
    max_memory: int | None | str = "default",
) -> VerifyReport:
    """Run the targets and judge their findings; returns the structured report.

    ``timeout`` is the --max-seconds budget per target, ``max_calls`` the
    --max-calls one, ``max_memory`` the address-space limit in bytes
    (``"default"``: half the machine's memory shared by the parallel jobs;
    ``None``: no limit). ``argv`` is what a script or ``-m`` module sees
    after its name. ``lint(files, settings)`` gives the static findings of
    the executed user files (default: ``gnnlint.engine.lint_paths``).
    """
    cwd = Path(cwd or os.getcwd())
    if not targets and not modules and settings is not None:
        targets = list(getattr(getattr(settings, "verify", None), "targets", []) or [])
    items = resolve_targets(list(targets), cwd, modules=list(modules), argv=list(argv), as_script=as_script)
    if not items:
        err = TargetResult(Target("(none)", "file"), error={
            "kind": "not-found",
            "message": "no targets: name a script, -m module, a file with gnnlint_example() or "
                       "module:function, or set [tool.gnnlint.verify] targets"})
        return VerifyReport([TargetReport(err, [], [])])
    n_real = sum(1 for it in items if isinstance(it, Target))
    if jobs is None:
        jobs = max(1, min(2, os.cpu_count() or 1, n_real))
    if max_memory == "default":
        max_memory = default_max_memory(jobs)
    results = run_all(items, backend=backend, device=device or "auto", timeout=timeout, cwd=cwd,
                      jobs=jobs, on_done=progress, train_steps=train_steps, max_calls=max_calls,
                      max_memory=max_memory)  # type: ignore[arg-type]
    lint = lint or _default_lint
    reports = []
    for r in results:
        if r.error:
            reports.append(TargetReport(r, [], []))
            continue
        files = sorted(r.data.get("coverage", {}))
        try:
            findings = lint(files, settings) if files else []
        except Exception as e:  # the linter failing is a target error, not a crash
            r.error = {"kind": "lint", "message": f"{r.target.spec}: static analysis failed: {type(e).__name__}: {e}"}
            reports.append(TargetReport(r, [], []))
            continue
        sites = []
        for key in ("model_site", "step_site"):
            s = r.data.get(key)
            if s and s.get("path") and s.get("line"):
                sites.append((s["path"], s["line"]))
        compiled_ran = any(c.get("calls") for c in r.data.get("compiles", [])) or not r.target.runs_program
        verdicts, unexpected = judge(findings, r.data.get("events", []), r.data.get("coverage", {}),
                                     r.data.get("versions", {}), sites, compiled_ran=compiled_ran,
                                     device=r.data.get("device") or "cpu", loops=r.data.get("loops"))
        reports.append(TargetReport(r, verdicts, unexpected,
                                    benign_counts(r.data.get("events", []), r.data.get("benign"), verdicts)))
    return VerifyReport(reports)


def run_verify(
    targets: list[str],
    *,
    settings: Any,
    backend: str,
    device: str,
    timeout: float,
    output_format: str,
    out: TextIO,
    color: bool,
    jobs: int | None = None,
    lint: Callable[[list[str], Any], list[Finding]] | None = None,
    **run_options: Any,
) -> int:
    """``gnnlint verify``: run, judge, print; returns the exit code
    (0 clean, 1 a finding confirmed or an unexpected event, 2 a target error)."""
    from gnnlint.verify import _output

    status = None
    progress = None
    if output_format in ("full", "concise", "table") and _stderr_tty():
        try:
            from rich.console import Console

            console = Console(stderr=True)
            n = len(targets) + len(run_options.get("modules") or ())
            status = console.status(f"gnnlint verify: running {n or 'the'} target(s)...")
            status.start()
            done: list[str] = []

            def progress(r: TargetResult) -> None:
                done.append(r.target.spec)
                status.update(f"gnnlint verify: {len(done)} done (last: {r.target.spec}, {r.seconds:.1f} s)")
        except Exception:
            status = None
    try:
        report = verify(targets, settings=settings, backend=backend or "eager", device=device or "auto",
                        timeout=float(timeout or DEFAULT_MAX_SECONDS), jobs=jobs, lint=lint, progress=progress,
                        cwd=Path(getattr(settings, "cwd", None) or os.getcwd()), **run_options)
    finally:
        if status is not None:
            status.stop()
    _output.render(report, output_format, out, color)
    return report.exit_code


def _stderr_tty() -> bool:
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False
