"""Big constant tables are emptied before libcst parses a large file
(gnnlint.elide); findings, positions and fixes must not notice."""
import ast

import pytest

from gnnlint import elide
from gnnlint.cli import main
from gnnlint.config import Settings
from gnnlint.engine import lint_bytes, options_from_settings
from pathlib import Path

TABLE_ROWS = 3500  # ~150 KB: over elide.MIN_FILE_BYTES


def big_source(newline: str = "\n") -> str:
    rows = "".join(f"    ({i}, 'bsr', (16, {i % 7})): (1.5e-3, -{i}, None, True),\n" for i in range(TABLE_ROWS))
    pad_rows = "".join(f"        {i}, -{i}, 'é',\n" for i in range(60))
    text = (
        "import torch\n"
        f"TABLE: dict = {{\n{rows}}}\n"
        "def neighbors(edge_index):\n"
        "    row = edge_index[0]\n"
        "    deg = torch.bincount(row)\n"
        f"    pad = [\n{pad_rows}    ]; src = torch.arange(deg.numel()).repeat_interleave(deg)\n"
        "    return src, pad\n"
    )
    return text.replace("\n", newline)


def _findings(data: bytes):
    options = options_from_settings(Settings(), Path("big.py"))
    return [(f.code, f.line, f.col, f.end_line, f.end_col) for f in lint_bytes("big.py", data, options).findings]


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_elided_source_keeps_every_position(newline):
    data = big_source(newline).encode()
    elided = elide.elide_constant_tables(data)
    assert len(elided) < len(data) // 20
    assert elided.count(b"\n") == data.count(b"\n")
    original_lines, new_lines = data.splitlines(), elided.splitlines()
    table_end = next(i for i, line in enumerate(original_lines) if line == b"}")
    assert new_lines[:2] == original_lines[:2] and new_lines[table_end:] != original_lines[table_end:]
    # the last line of each emptied literal keeps its closing bracket's column
    last = next(i for i, line in enumerate(original_lines) if line.lstrip().startswith(b"];"))
    assert new_lines[last] == original_lines[last]
    assert new_lines[table_end] == b"}"
    ast.parse(elided)


def test_findings_are_the_same_with_and_without_elision(monkeypatch):
    data = big_source().encode()
    with_elision = _findings(data)
    monkeypatch.setattr(elide, "MIN_FILE_BYTES", 10**12)
    without = _findings(data)
    assert with_elision == without
    assert [f[:2] for f in with_elision] == [("GNN004", TABLE_ROWS + 3 + 4 + 60 + 1)]


def test_literals_that_are_not_constant_tables_are_kept(monkeypatch):
    monkeypatch.setattr(elide, "MIN_FILE_BYTES", 0)
    rows = "".join(f"    {i},\n" for i in range(60))
    calls = "".join(f"    f({i}),\n" for i in range(60))
    for source in (
        f"x = [\n{calls}]\n",                      # a call inside
        f"x = {{\n{rows.replace(',', ': y,')}}}\n",  # a name inside
        f"x = {{**base,\n{rows.replace(',', ': 1,')}}}\n",  # ** unpacking
        "x = 1, \\\n" + "".join(f"    {i}, \\\n" for i in range(60)) + "    2\n",  # no parentheses
        f"x = [\n{rows[:40]}]\n",                  # short
    ):
        assert elide.elide_constant_tables(source.encode()) == source.encode(), source[:30]
    latin = ("# -*- coding: latin-1 -*-\nx = [\n" + "    'é',\n" * 60 + "]\n").encode("latin-1")
    assert elide.elide_constant_tables(latin) == latin
    broken = f"x = [\n{rows}]\ndef (:\n".encode()
    assert elide.elide_constant_tables(broken) == broken


def test_dotted_names_of_imported_modules_count_as_constants(monkeypatch):
    monkeypatch.setattr(elide, "MIN_FILE_BYTES", 0)
    rows = "".join(f"    torch._C._VariableFunctions.op{i}: [{{'name': 'self'}}],\n" for i in range(60))
    table = f"ARGS = {{\n{rows}}}\n"
    elided = elide.elide_constant_tables(("import torch\n" + table).encode())
    assert elided == ("import torch\nARGS = {" + "\n" * 61 + "}\n").encode()
    for imports in ("", "from torch import _C as torch\n", "torch = load()\n"):
        source = (imports + table).encode()
        assert elide.elide_constant_tables(source) == source, imports


def test_small_files_are_not_touched():
    source = ("x = [\n" + "    1,\n" * 60 + "]\n").encode()
    assert elide.elide_constant_tables(source) == source


def test_fix_leaves_the_table_in_place(tmp_path, capsys):
    path = tmp_path / "big.py"
    data = big_source().encode()
    path.write_bytes(data)
    code = main(["check", str(path), "--isolated", "--no-cache", "--fix", "--unsafe-fixes"], standalone_mode=False)
    fixed = path.read_bytes()
    assert code == 0, capsys.readouterr()
    assert fixed != data
    assert fixed.replace(b", output_size=row.numel())", b")") == data
