"""Jupyter notebooks: linted as the module their code cells make, reported
at cell and line, fixed in place without touching anything else. The
notebooks are written with nbformat and validated with it after a fix."""
from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from gnnlint.ipython_lines import python_lines, split_lines
from gnnlint.notebook import Notebook, NotebookError
from tests.project_files import run

MODELS = """\
import torch


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)

    def forward(self, x):
        if x.sum().item() > 0:
            x = x * 2
        return self.lin(x)
"""

LOOP = (
    "opt = torch.optim.Adam(model.parameters())\n"
    "for step in range(10):\n"
    "    %time warm = 1\n"
    "    loss = model(torch.randn(3, 4)).sum()\n"
    "    loss.backward()\n"
    "    opt.step()\n"
    "    print(loss.item())  # noqa: GNN013\n"
    "    total = loss.item()"
)


def make_notebook(cells, language="python"):
    nb = new_notebook()
    nb.metadata["kernelspec"] = {"name": "k", "language": language, "display_name": "K"}
    nb.cells = cells
    return nb


def train_notebook():
    compile_cell = new_code_cell("model = Net()\ntorch.compile(model)\nmodel = torch.compile(Net())")
    compile_cell.outputs = [new_output("stream", text="hello\n")]
    compile_cell.execution_count = 3
    return make_notebook([
        new_markdown_cell("# Train a model"),
        new_code_cell("%matplotlib inline\n!pip install torch_geometric\nimport torch\nfrom models import Net"),
        compile_cell,
        new_code_cell("%%bash\necho hi\nx.item()"),
        new_code_cell(LOOP),
    ])


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("[tool.gnnlint]\n")
    (tmp_path / "models.py").write_text(MODELS)
    nbformat.write(train_notebook(), tmp_path / "train.ipynb")
    return tmp_path


def concise(result) -> list[str]:
    return [line for line in result.output.splitlines() if ": GNN" in line]


def test_findings_at_cell_and_line(project: Path):
    result = run(["check", "train.ipynb", "--no-cache", "--output-format", "concise"], project)
    assert result.exit_code == 1
    lines = concise(result)
    # cell 3 line 2: the discarded compile; cell 5 line 8 (a per-step sync
    # in a loop that runs the compiled model) after a `%time` line (replaced,
    # not removed); line 7's `# noqa` holds; the %%bash cell is not Python
    assert [line.split(" ")[0] for line in lines] == ["train.ipynb:cell", "train.ipynb:cell"]
    assert lines[0].startswith("train.ipynb:cell 3:2:1: GNN010")
    assert lines[1].startswith("train.ipynb:cell 5:8:13: GNN013")


def test_json_has_cell_and_cell_positions(project: Path):
    result = run(["check", "train.ipynb", "--no-cache", "--output-format", "json"], project)
    entries = json.loads(result.output)
    first = entries[0]
    assert (first["cell"], first["location"], first["code"]) == (3, {"column": 1, "row": 2}, "GNN010")
    assert first["fix"]["edits"][0]["location"] == {"column": 1, "row": 2}
    assert first["noqa_row"] == 2


def test_full_format_shows_the_cell(project: Path):
    result = run(["check", "train.ipynb", "--no-cache", "--output-format", "full"], project)
    assert "train.ipynb:cell 3:2:1: GNN010" in result.output
    assert "2 | torch.compile(model)" in result.output  # the cell's own line numbers


def test_cross_file_facts_both_ways(project: Path):
    # the notebook compiles models.Net: its forward's .item() is in a compiled region,
    # whether the whole project or models.py alone is checked
    whole = concise(run(["check", ".", "--no-cache", "--output-format", "concise"], project))
    assert any(line.startswith("models.py:10:12: GNN001") for line in whole)
    assert any(line.startswith("train.ipynb:cell 3:2:1") for line in whole)
    alone = concise(run(["check", "models.py", "--no-cache", "--output-format", "concise"], project))
    assert [line for line in whole if line.startswith("models.py")] == alone
    (project / "train.ipynb").unlink()
    assert concise(run(["check", "models.py", "--no-cache", "--output-format", "concise"], project)) == []


def test_fix_writes_only_the_cell_source(project: Path):
    path = project / "train.ipynb"
    before = path.read_text()
    result = run(["check", ".", "--fix", "--no-cache", "--output-format", "concise"], project)
    assert "Fixed 1 finding" in result.output
    after = path.read_text()
    assert after == before.replace('"torch.compile(model)\\n"', '"model = torch.compile(model)\\n"')
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    assert nb.cells[2].outputs[0]["text"] == "hello\n" and nb.cells[2].execution_count == 3
    assert nb.cells[1].source.startswith("%matplotlib inline\n!pip install")
    # a second run changes nothing
    run(["check", ".", "--fix", "--no-cache"], project)
    assert path.read_text() == after


@pytest.mark.parametrize("indent", [1, 2, 4])
@pytest.mark.parametrize("as_string", [False, True])
def test_fix_keeps_the_file_style(tmp_path: Path, indent: int, as_string: bool):
    """Another writer's style (indent, a cell source as one string, non-ASCII
    kept as is, no trailing newline): only the edited value changes."""
    (tmp_path / "models.py").write_text(MODELS)
    nb = train_notebook()
    nb.cells[0].source = "# Entraînement — ünïcode"
    doc = json.loads(nbformat.writes(nb))
    for cell in doc["cells"]:
        if as_string:
            cell["source"] = "".join(cell["source"])
    raw = json.dumps(doc, indent=indent, ensure_ascii=False)
    path = tmp_path / "train.ipynb"
    path.write_text(raw, encoding="utf-8")
    run(["check", "train.ipynb", "--fix", "--no-cache"], tmp_path)
    after = path.read_text(encoding="utf-8")
    fixed = json.loads(raw)
    source = fixed["cells"][2]["source"]
    if as_string:
        fixed["cells"][2]["source"] = source.replace("torch.compile(model)\n", "model = torch.compile(model)\n", 1)
    else:
        source[1] = "model = torch.compile(model)\n"
    assert after == json.dumps(fixed, indent=indent, ensure_ascii=False)
    nbformat.validate(nbformat.reads(after, as_version=4))


def test_diff_is_per_cell_and_writes_nothing(project: Path):
    before = (project / "train.ipynb").read_bytes()
    result = run(["check", "train.ipynb", "--diff", "--no-cache"], project)
    assert result.exit_code == 1
    assert "--- a/train.ipynb:cell 3\n+++ b/train.ipynb:cell 3\n" in result.output
    assert "+model = torch.compile(model)" in result.output
    assert (project / "train.ipynb").read_bytes() == before


def test_stdin_notebook(project: Path):
    data = (project / "train.ipynb").read_bytes()
    result = run(["check", "--stdin-filename", "train.ipynb", "--no-cache", "--output-format", "concise", "-"],
                 project, input=data)
    assert [line.split(": ")[0] for line in concise(result)] == ["train.ipynb:cell 3:2:1", "train.ipynb:cell 5:8:13"]
    fixed = run(["check", "--fix", "--stdin-filename", "train.ipynb", "--no-cache", "-"], project, input=data)
    out = fixed.stdout_bytes if hasattr(fixed, "stdout_bytes") else fixed.output.encode()
    nb = nbformat.reads(out.split(b"\ntrain.ipynb:")[0].decode(), as_version=4)
    assert nb.cells[2].source.splitlines()[1] == "model = torch.compile(model)"


def test_discovery_and_the_switches(project: Path):
    def files(extra_config: str) -> set[str]:
        (project / "pyproject.toml").write_text("[tool.gnnlint]\n" + extra_config)
        out = run(["check", ".", "--no-cache", "--output-format", "concise"], project).output
        return {line.split(":")[0] for line in out.splitlines() if ": GNN" in line}

    assert files("") == {"models.py", "train.ipynb"}  # notebooks are found by default (ruff >= 0.6)
    assert files('extend-exclude = ["*.ipynb"]\n') == set()  # nothing compiles models.Net any more
    assert files('include = ["*.py"]\n') == set()
    assert files('include = ["*.py"]\nextend-include = ["*.ipynb"]\n') == {"models.py", "train.ipynb"}
    # a notebook named on the command line is always linted
    (project / "pyproject.toml").write_text('[tool.gnnlint]\ninclude = ["*.py"]\n')
    assert run(["check", "train.ipynb", "--no-cache"], project).exit_code == 1


def test_bad_notebooks_are_reported_not_raised(tmp_path: Path):
    (tmp_path / "broken.ipynb").write_text('{"cells": [')
    (tmp_path / "old.ipynb").write_text('{"worksheets": [], "nbformat": 3}')
    (tmp_path / "ok.py").write_text("x = 1\n")
    # a failing check whatever else the folder holds (a new user's trial: with a clean .py next to it, a
    # notebook broken by hand passed CI with only a warning on stderr)
    for args in (["broken.ipynb", "old.ipynb"], ["."]):
        result = run(["check", *args, "--no-cache", "--output-format", "concise"], tmp_path)
        assert result.exit_code == 1, result.output
        assert "broken.ipynb:1:1: GNN000 error: cannot read the notebook: not valid JSON" in result.output
        assert "old.ipynb:1:1: GNN000 error: cannot read the notebook: nbformat 3" in result.output
    full = run(["check", "broken.ipynb", "--no-cache", "--output-format", "full"], tmp_path).output
    assert '1 | {"cells": [' in full and "gnnlint-GNN000" not in full  # the file's line, not our marker
    stdin = run(["check", "--stdin-filename", "broken.ipynb", "--no-cache", "--output-format", "concise", "-"],
                tmp_path, input=b'{"cells": [')
    assert stdin.exit_code == 1 and "broken.ipynb:1:1: GNN000" in stdin.output
    fixed = run(["check", "--fix", "--stdin-filename", "broken.ipynb", "--no-cache", "-"], tmp_path,
                input=b'{"cells": [')
    assert fixed.stdout_bytes.startswith(b'{"cells": [')  # the editor's buffer back, unchanged
    assert (tmp_path / "broken.ipynb").read_text() == '{"cells": ['  # --fix never rewrites it
    run(["check", "--fix", ".", "--no-cache"], tmp_path)
    assert (tmp_path / "broken.ipynb").read_text() == '{"cells": ['


def test_non_python_kernel_has_no_code(tmp_path: Path):
    nbformat.write(make_notebook([new_code_cell("torch.compile(model)")], language="julia"), tmp_path / "j.ipynb")
    assert run(["check", "j.ipynb", "--no-cache"], tmp_path).exit_code == 0


def test_syntax_error_in_a_cell(tmp_path: Path):
    nbformat.write(make_notebook([new_code_cell("import torch"), new_code_cell("x = (1,\n")]), tmp_path / "s.ipynb")
    result = run(["check", "s.ipynb", "--no-cache", "--output-format", "concise"], tmp_path)
    assert "s.ipynb:cell 2:" in result.output and "GNN000" in result.output


def rejected_cell_notebook():
    return make_notebook([
        new_code_cell("import torch\nmodel = torch.compile(torch.nn.Linear(2, 2))"),
        new_code_cell('cfg = {"reaction": ,}\nprint(cfg)'),
        new_code_cell("for step in range(3):\n    loss = model(torch.randn(2, 2)).sum()\n"
                      "    loss.backward()\n    print(loss.item())\ntorch.compile(model)"),
    ])


def test_a_rejected_cell_does_not_hide_the_others(tmp_path: Path):
    # The kernel compiles each cell alone (ruff lints the other cells too):
    # GNN000 at the rejected cell, and the others' findings as without it.
    nbformat.write(rejected_cell_notebook(), tmp_path / "r.ipynb")
    data = (tmp_path / "r.ipynb").read_bytes()
    expected = [
        "r.ipynb:cell 2:1:18: GNN000",
        "r.ipynb:cell 3:4:11: GNN013",
        "r.ipynb:cell 3:5:1: GNN010",
    ]
    for args, given in ((["r.ipynb"], None), (["--stdin-filename", "r.ipynb", "-"], data), (["."], None)):
        result = run(["check", *args, "--no-cache", "--output-format", "concise"], tmp_path, input=given)
        got = [line.split(" error")[0].split(" warning")[0].split(" [*]")[0]
               for line in result.output.splitlines() if ".ipynb:cell" in line]
        assert got == expected, (args, result.output)
    assert "expression expected after dictionary key" in result.output
    full = run(["check", "r.ipynb", "--no-cache", "--output-format", "full"], tmp_path).output
    assert 'cfg = {"reaction": ,}' in full and "gnnlint-GNN000" not in full  # the cell as written


def test_a_fix_keeps_the_rejected_cell_as_it_was(tmp_path: Path):
    nbformat.write(rejected_cell_notebook(), tmp_path / "r.ipynb")
    result = run(["check", "--fix", "r.ipynb", "--no-cache"], tmp_path)
    assert "Fixed 1 finding" in result.output
    nb = nbformat.read(tmp_path / "r.ipynb", as_version=4)
    nbformat.validate(nb)
    assert nb.cells[1].source == 'cfg = {"reaction": ,}\nprint(cfg)'
    assert nb.cells[2].source.endswith("\nmodel = torch.compile(model)")


def test_a_notebook_that_fails_only_when_joined_is_one_error(tmp_path: Path):
    # each cell compiles alone, the joined module does not (a late __future__
    # import): no cell to set aside, the module's own GNN000 as before
    nbformat.write(make_notebook([new_code_cell("import torch"),
                                  new_code_cell("from __future__ import annotations")]), tmp_path / "f.ipynb")
    result = run(["check", "f.ipynb", "--no-cache", "--output-format", "concise"], tmp_path)
    assert "f.ipynb:cell 2:1:1: GNN000" in result.output
    assert "from __future__ imports must occur at the beginning" in result.output


# ---------------------------------------------------------------------- units
@pytest.mark.parametrize("cell, magic_lines", [
    ("%matplotlib inline\nimport torch\n", [0]),
    ("!pip install x \\\n   y\nimport torch\n", [0, 1]),
    ("files = !ls\nx = a != b\n", [0]),
    ("torch.compile?\n?torch\nx = 1  # why?\n", [0, 1]),
    ("for i in range(3):\n    %time f(i)\n", [1]),
    ("%%bash\necho hi\n", [0, 1]),
    ('%%bash\ncat > c.json <<EOF\n{\n  "lr": 1\n}\nEOF\n', [0, 1, 2, 3, 4, 5]),  # indented heredoc
    ("%%writefile train.py\ndef f():\n    return 1\n", [0, 1, 2]),
    ("%%time\nx = f()\n", [0]),
    ('s = """\n%not a magic\n"""\nt = (1\n  % 2)\n', []),
])
def test_magics_are_replaced_line_for_line(cell: str, magic_lines: list[int]):
    lines = split_lines(cell)
    out, magic = python_lines(lines)
    assert sorted(magic) == magic_lines
    assert len(out) == len(lines)
    compile("".join(out), "cell", "exec")


def test_split_keeps_inserted_lines_in_their_cell():
    nb = Notebook.parse(nbformat.writes(make_notebook([
        new_code_cell("import torch"), new_code_cell("%time x = 1\ny = 2"), new_code_cell("z = 3")])))
    assert nb.source == "import torch\npass\ny = 2\nz = 3\n"
    assert [nb.locate(n)[0].number for n in (1, 2, 3, 4)] == [1, 2, 2, 3]
    texts = nb.cell_texts("import torch\npass\ny = 2\ny2 = 2\nz = 3\n")
    assert texts == ["import torch", "%time x = 1\ny = 2\ny2 = 2", "z = 3"]
    with pytest.raises(NotebookError):
        nb.with_source("import torch\ny = 2\nz = 3\n")  # an edit may not remove a magic line


def test_a_notebook_is_not_a_module(project: Path):
    """models.ipynb beside models.py: `from models import Net` is the .py file."""
    nbformat.write(make_notebook([new_code_cell("import torch")]), project / "models.ipynb")
    lines = concise(run(["check", ".", "--no-cache", "--output-format", "concise"], project))
    assert any(line.startswith("models.py:10:12: GNN001") for line in lines)


def test_sarif_names_the_cell(project: Path):
    result = run(["check", "train.ipynb", "--no-cache", "--output-format", "sarif"], project)
    results = json.loads(result.output)["runs"][0]["results"]
    first = results[0]
    assert first["properties"]["cell"] == 3
    assert first["locations"][0]["physicalLocation"]["region"]["startLine"] == 2


# -- .py scripts exported from notebooks (Colab's download, `# %%` percent scripts) --------------
SCRIPT = (
    "#%%\n"
    "import sys\n"
    "if 'google.colab' in sys.modules:\n"
    "    !pip install torch_geometric\n"
    "%load_ext autoreload\n"
    "#%%\n"
    "import torch\n"
    "from models import Net\n"
    "model = torch.compile(Net())\n"
    "torch.compile(model)\n"
)


def test_script_with_ipython_lines_is_linted(tmp_path: Path):
    # Python rejects the script as it is; with its IPython lines blanked it is the module
    # the notebook ran: its discarded compile (line 10) is found, not a GNN000
    (tmp_path / "pyproject.toml").write_text("[tool.gnnlint]\n")
    (tmp_path / "models.py").write_text(MODELS)
    (tmp_path / "train.py").write_text(SCRIPT)
    lines = concise(run(["check", "train.py", "--no-cache", "--output-format", "concise"], tmp_path))
    assert [line.split(" ")[0:2] for line in lines] == [["train.py:10:1:", "GNN010"]]
    # the fixer leaves such a script alone: it would write `pass` over the IPython lines
    run(["check", "train.py", "--no-cache", "--fix"], tmp_path)
    assert (tmp_path / "train.py").read_text() == SCRIPT


def test_script_source_changes_only_rejected_scripts():
    from gnnlint.ipython_lines import script_source

    valid = b"x = (1\n%2)\ny = 3\n"  # `%` continuing an expression: Python accepts it
    assert script_source(valid) == valid
    assert script_source(b"import torch\n") == b"import torch\n"
    broken = b"import os\n!ls\nx = 1 +\n"  # still rejected once the magic is blanked: unchanged
    assert script_source(broken) == broken
    assert script_source(SCRIPT.encode()).decode().splitlines()[3:5] == ["    pass", "pass"]


def test_add_noqa_writes_into_the_cells(tmp_path: Path):
    # a new user's trial: the directives went into the raw JSON at the cells' line numbers
    nbformat.write(rejected_cell_notebook(), tmp_path / "r.ipynb")
    before = (tmp_path / "r.ipynb").read_text()
    result = run(["check", "r.ipynb", "--no-cache", "--add-noqa"], tmp_path)
    assert "Added 2 noqa directives." in result.output
    nb = nbformat.read(tmp_path / "r.ipynb", as_version=4)
    nbformat.validate(nb)
    assert nb.cells[2].source.splitlines()[3:] == ["    print(loss.item())  # noqa: GNN013",
                                                   "torch.compile(model)  # noqa: GNN010"]
    assert nb.cells[1].source == 'cfg = {"reaction": ,}\nprint(cfg)'  # the rejected cell as it was
    after = (tmp_path / "r.ipynb").read_text()
    assert len(after.splitlines()) == len(before.splitlines())  # only two source strings changed
    again = run(["check", "r.ipynb", "--no-cache", "--add-noqa"], tmp_path)
    assert "Added 0 noqa directives." in again.output
    left = run(["check", "r.ipynb", "--no-cache", "--output-format", "concise"], tmp_path)
    assert "GNN013" not in left.output and "GNN010" not in left.output and "GNN000" in left.output
