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


def whole_tree_lines(root: Path, *args: str) -> set[str]:
    """The finding lines of ``gnnlint check . --no-cache [args]`` in ``root`` (``--select GNN007``)."""
    return finding_lines(run(["check", ".", "--no-cache", *args], root).output)


def assert_one_file_agrees(root: Path, name: str, *, whole: set[str] | None = None, cached: int = 0,
                           stdin: bool = False, nonempty: bool = False) -> set[str]:
    """Checking the project file ``name`` alone (the project's facts read from ``root``)
    reports exactly the lines a check of the whole tree reports for it: without the
    cache, then ``cached`` times with it (a cold, then warm cache), and with ``stdin``
    also when the file is piped in (``--stdin-filename``). ``nonempty``: the file has
    findings (the premise of a cross-file test). Returns those lines."""
    whole = whole_tree_lines(root) if whole is None else whole
    mine = {line for line in whole if line.startswith(name + ":")}
    if nonempty:
        assert mine, (name, whole)
    assert finding_lines(run(["check", name, "--no-cache"], root).output) == mine, name
    for _ in range(cached):
        assert finding_lines(run(["check", name], root).output) == mine, (name, "cached")
    if stdin:
        source = (root / name).read_bytes()
        piped = run(["check", "-", "--stdin-filename", name, "--no-cache"], root, input=source)
        assert finding_lines(piped.output) == mine, (name, "stdin")
    return mine


def finding_keys(root: Path, files: dict | None = None, *, containing: str = "") -> list[str]:
    """``path:line:col: CODE`` of each finding of ``gnnlint check . --no-cache`` in ``root``
    (``files`` written there first), sorted; with ``containing``, of the report lines that contain it."""
    if files is not None:
        write_project(root, files)
    return sorted(" ".join(line.split(" ")[:2]) for line in whole_tree_lines(root) if containing in line)


def finding_rows(root: Path, name: str, code: str, files: dict | None = None) -> list[int]:
    """The sorted line numbers of ``code``'s findings in the project file ``name``."""
    return sorted(int(key.split(":")[1]) for key in finding_keys(root, files)
                  if key.startswith(name + ":") and key.endswith(" " + code))
