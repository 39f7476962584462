"""Writing a small project to disk and running the CLI in it: the set-up the
cross-file tests share (one copy, not one per test module)."""
from __future__ import annotations

import os
import textwrap
from pathlib import Path

from click.testing import CliRunner

from gnnlint.cli import main


def run(args, cwd: Path, input: bytes | None = None):
    """``gnnlint <args>`` with ``cwd`` as the working directory."""
    old = os.getcwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(main, args, input=input, catch_exceptions=False)
    finally:
        os.chdir(old)


def write_project(root: Path, files: dict) -> Path:
    """Write ``files`` (relative path -> indented source) under ``root``."""
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root


def finding_lines(output: str) -> set[str]:
    """The finding lines of a concise/full report."""
    return {line for line in output.splitlines() if line.count(":") >= 3 and " GNN" in line}
