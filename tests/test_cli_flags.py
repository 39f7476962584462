"""ruff's command-line habits (issue 12): --add-noqa[=REASON], --ignore-noqa,
--fix-only, -e/-n/-s."""
from __future__ import annotations

import os
import textwrap
from pathlib import Path

from click.testing import CliRunner

from gnnlint.add_noqa import add_noqa
from gnnlint.cli import main
from gnnlint.finding import Finding

HAZARD = textwrap.dedent('''\
    import torch

    class GCN(torch.nn.Module):
        def forward(self, x):
            y = x * x.sum().item()  # type: ignore
            doc = """a string
            that spans lines""" + str(x.nonzero())
            z = (x +
                 x.tolist()[0])
            return y * x.cpu().numpy()[0]  # noqa: GNN008

    model = GCN()
    torch.compile(model)
    fast = torch.compile(GCN())  # the bare compile above compiles nothing; this one does
''')


def run(args, cwd: Path):
    old = os.getcwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(main, args, catch_exceptions=False)
    finally:
        os.chdir(old)


def _project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("[tool.gnnlint]\n")
    (tmp_path / "m.py").write_bytes(HAZARD.replace("\n", "\r\n").encode())  # CRLF: kept
    return tmp_path


def test_add_noqa_then_nothing_is_reported_and_a_second_run_changes_nothing(tmp_path):
    root = _project(tmp_path)
    before = run(["check", "-n", "."], root)
    assert before.exit_code == 1 and before.output.count(" GNN") >= 4
    result = run(["check", "-n", "--add-noqa=legacy debt", "."], root)
    assert result.exit_code == 0 and "Added" in result.stderr
    data = (root / "m.py").read_bytes()
    assert b"\n" not in data.replace(b"\r\n", b"")  # line endings kept
    text = data.decode().replace("\r\n", "\n")
    assert "x.sum().item()  # type: ignore  # noqa: GNN001 legacy debt\n" in text
    # the statement's first line ends inside a string: the finding's own line carries it
    assert '        doc = """a string\n' in text
    assert 'that spans lines""" + str(x.nonzero())  # noqa: GNN008 legacy debt\n' in text
    assert "# noqa: GNN008, GNN001\n" in text  # added to the existing directive
    assert run(["check", "-n", "."], root).exit_code == 0
    again = run(["check", "-n", "--add-noqa", "."], root)
    assert again.exit_code == 0 and "Added 0 noqa directives." in again.stderr
    assert (root / "m.py").read_bytes() == data
    # --ignore-noqa reports them again
    assert run(["check", "-n", "--ignore-noqa", "."], root).output.count(" GNN") == before.output.count(" GNN")


def test_add_noqa_keeps_bytes_outside_the_edited_lines():
    finding = Finding("m.py", 2, 1, 2, 5, "GNN001", "host-sync", "m")
    edit = add_noqa("a = 1\nb = x.item()\n\x0cc = 2\n", [finding])
    assert edit.text == "a = 1\nb = x.item()  # noqa: GNN001\n\x0cc = 2\n" and edit.added == 1
    continued = Finding("m.py", 1, 1, 1, 5, "GNN001", "host-sync", "m")
    edit = add_noqa("b = x.item() + \\\n    1\n", [continued])
    assert edit.text == "b = x.item() + \\\n    1\n" and edit.skipped == [continued]


def test_fix_only_applies_fixes_and_does_not_fail_on_what_remains(tmp_path):
    root = _project(tmp_path)
    result = run(["check", "-n", "--fix-only", "."], root)
    assert result.exit_code == 0, result.output
    assert "model = torch.compile(model)" in (root / "m.py").read_text()
    assert "GNN001" not in result.output


def test_short_forms(tmp_path):
    root = _project(tmp_path)
    assert run(["check", "-n", "-e", "."], root).exit_code == 0
    silent = run(["check", "-n", "-s", "."], root)
    assert silent.exit_code == 1 and silent.output == ""
    assert not (root / ".gnnlint_cache").exists()  # -n: no cache written


def test_help_states_the_exit_codes():
    # a CI script branches on them: `check --help` and `verify --help` say what each means
    for command, words in ((["check", "--help"], ("0 no findings", "1 findings", "2 a usage")),
                           (["verify", "--help"], ("0 nothing confirmed", "1 a finding confirmed",
                                                    "2 a target error"))):
        out = " ".join(CliRunner().invoke(main, command, catch_exceptions=False).output.split())
        assert all(w in out for w in words), (command, out)


def test_a_noqa_naming_no_rule_is_warned_about(tmp_path):
    # `# noqa: GNN10` suppresses nothing: say so, as ruff does for codes it does not know (a new user's trial)
    (tmp_path / "a.py").write_text("import torch\nmodel = torch.nn.Linear(2, 2)\n"
                                   "torch.compile(model)  # noqa: GNN10, E501\n")
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        result = CliRunner().invoke(main, ["check", "a.py", "--no-cache", "--output-format", "concise"],
                                    catch_exceptions=False)
        quiet = CliRunner().invoke(main, ["check", "a.py", "--no-cache", "-q"], catch_exceptions=False)
    finally:
        os.chdir(old)
    assert result.exit_code == 1 and "a.py:3:1: GNN010" in result.output
    assert ("a.py:3: `# noqa` names GNN10, which is no gnnlint rule: it suppresses nothing "
            "(did you mean GNN010?)") in result.output
    # another tool's code is its own business
    assert not any("E501" in line and "no gnnlint rule" in line for line in result.output.splitlines())
    assert "no gnnlint rule" not in quiet.output
