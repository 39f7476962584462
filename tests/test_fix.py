"""`gnnlint fix` / `check --fix`: the trust list of issue 4, one test each.

- the fixed file parses and a second run changes nothing (every fixture, and a
  hypothesis property over every fixable rule's examples in random
  surroundings);
- bytes outside the edited spans are unchanged (comments, blank lines, CRLF,
  tabs, BOM, encoding cookie, non-ASCII);
- writes are atomic, keep the mode, leave nothing behind when interrupted,
  and never overwrite a file that changed on disk since it was read;
- `# noqa` suppresses the fix; a fix producing invalid code is dropped and
  reported; `--diff`, `--exit-non-zero-on-fix`, `fixable` / `unfixable`.
"""
from __future__ import annotations

import codecs
import os
import py_compile
import shutil
import stat
import textwrap
from pathlib import Path

import libcst as cst
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, assume, given, settings as hsettings, strategies as st

import gnnlint.engine as engine
import gnnlint.fix as fixmod
from gnnlint.cli import main
from gnnlint.config import load_settings
from gnnlint.discover import discover
from gnnlint.engine import LintOptions, check_files, options_from_settings
from gnnlint.fix import SourceCodec, apply_fixes, fix_paths, fix_source, split_lines, unified_diff
from gnnlint.rules import all_rules

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"

BARE_COMPILE = "import torch\nmodel = torch.nn.Linear(2, 2)\ntorch.compile(model, dynamic=True)\n"
BARE_COMPILE_FIXED = "import torch\nmodel = torch.nn.Linear(2, 2)\nmodel = torch.compile(model, dynamic=True)\n"

ACCUMULATE = textwrap.dedent("""\
    import torch
    import torch.nn.functional as F

    def train(model, loader, optimizer):
        total_loss = 0.0
        for data in loader:
            optimizer.zero_grad()
            loss = F.cross_entropy(model(data.x), data.y)
            loss.backward()
            optimizer.step()
            total_loss += float(loss) * data.num_graphs
        return total_loss / len(loader.dataset)

    compiled = torch.compile(Net(), dynamic=True)
    train(compiled, train_loader, torch.optim.Adam(compiled.parameters()))
""")


# ---------------------------------------------------------------------- helpers
def _settings(cwd: Path, **overrides):
    return load_settings(cwd=cwd, isolated=True, overrides=overrides)


def _fix_dir(folder: Path, *, unsafe: bool = True, diff: bool = False, **overrides):
    settings = _settings(folder, **overrides)
    files, _ = discover([folder], settings)
    return fix_paths(files, settings, unsafe=unsafe, diff=diff, jobs=1)


def _parses_and_compiles(path: Path) -> None:
    cst.parse_module(path.read_bytes())
    py_compile.compile(str(path), cfile=str(path.parent / (path.name + ".pyc-check")), doraise=True)
    (path.parent / (path.name + ".pyc-check")).unlink()


def run_cli(args, cwd: Path):
    old = os.getcwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(main, args, catch_exceptions=False)
    finally:
        os.chdir(old)


def _options(code: str) -> LintOptions:
    return LintOptions(codes=frozenset({code}))


# ---------------------------------------------------------------------- apply_fixes
def test_positions_ignore_exotic_line_breaks():
    """libcst breaks lines only at \\r\\n, \\r and \\n; a form feed or \\u2028 in a
    comment must not shift the edit (str.splitlines would)."""
    text = "# a\x0cb \u2028 c\x85\ntorch.compile(model)\n"
    assert split_lines(text) == ["# a\x0cb \u2028 c\x85\n", "torch.compile(model)\n"]
    finding = engine.lint_bytes("x.py", ("import torch\n" + text).encode(), _options("GNN010"),
                                rules=[r for r in all_rules() if r.code == "GNN010"]).findings
    fixed, applied = apply_fixes("import torch\n" + text, finding)
    assert applied and fixed == "import torch\n# a\x0cb \u2028 c\x85\nmodel = torch.compile(model)\n"


def test_inserted_newlines_follow_the_file():
    from gnnlint.finding import Edit, Finding, Fix

    f = Finding("x.py", 1, 1, 1, 1, "GNN999", "x", "m",
                fix=Fix("safe", "insert", (Edit(1, 1, 1, 1, "import torch\n"),)))
    assert apply_fixes("x = 1\r\n", [f])[0] == "import torch\r\nx = 1\r\n"
    assert apply_fixes("x = 1\n", [f])[0] == "import torch\nx = 1\n"


# ---------------------------------------------------------------------- fixtures
def test_fixtures_fixed_files_parse_and_second_run_changes_nothing(tmp_path: Path):
    work = tmp_path / "fixtures"
    shutil.copytree(FIXTURES, work)
    first = _fix_dir(work)
    assert not [e for e in first.errors if "internal error" in e or "converge" in e], first.errors
    for path in first.changed_files:
        _parses_and_compiles(Path(path))
    assert first.changed_files, "no fixture had a fix: the test checks nothing"
    # clean twins have nothing to fix
    assert not [p for p in first.changed_files if p.endswith("_clean.py")]
    second = _fix_dir(work)
    assert second.changed_files == [] and second.fixed == [] and second.diffs == []
    # the diff of the first run is what the files became
    for path in first.changed_files:
        assert (FIXTURES / Path(path).name).read_bytes() != Path(path).read_bytes()


def test_lint_project_matches_check_files():
    """fix.lint_project duplicates engine.check_files to keep the facts: they
    must find the same things."""
    settings = _settings(FIXTURES)
    files, _ = discover([FIXTURES], settings)
    options_for = lambda p: options_from_settings(settings, p)  # noqa: E731
    ours, _facts = fixmod.lint_project(files, options_for, 1)
    theirs = check_files(files, options_for, 1)
    assert sorted(ours.findings, key=lambda f: f.sort_key()) == sorted(theirs.findings, key=lambda f: f.sort_key())


def test_relint_keeps_cross_file_facts(tmp_path: Path):
    """models.py is only a compiled region because train.py compiles GCN; after
    its fix, the re-lint still knows it (the `.item()` stays reported)."""
    (tmp_path / "models.py").write_text(textwrap.dedent("""\
        import torch

        class GCN(torch.nn.Module):
            def forward(self, x):
                return x * x.sum().item()

        def build(encoder):
            torch.compile(encoder)
            return encoder
    """))
    (tmp_path / "train.py").write_text(textwrap.dedent("""\
        import torch
        from models import GCN

        model = torch.compile(GCN(), dynamic=True)
    """))
    settings = _settings(tmp_path)
    alone = fix_paths([tmp_path / "models.py"], settings, unsafe=False, diff=True, jobs=1, project_facts=False)
    assert not [f for f in alone.remaining if f.code == "GNN001"], "premise: needs the facts"
    # named alone, models.py still gets what train.py says about it (the project's facts)
    only_models = fix_paths([tmp_path / "models.py"], settings, unsafe=False, diff=True, jobs=1)
    assert [(Path(f.path).name, f.line) for f in only_models.remaining if f.code == "GNN001"] == [("models.py", 5)]
    outcome = _fix_dir(tmp_path, unsafe=False)
    assert [Path(p).name for p in outcome.changed_files] == ["models.py"]
    assert "    encoder = torch.compile(encoder)\n" in (tmp_path / "models.py").read_text()
    syncs = [f for f in outcome.remaining if f.code == "GNN001"]
    assert [(Path(f.path).name, f.line) for f in syncs] == [("models.py", 5)]


# ---------------------------------------------------------------------- examples
FIX_EXAMPLES = [
    pytest.param(rule, example, id=f"{rule.code}-{i}")
    for rule in all_rules() if rule.fix_applicability
    for i, example in enumerate(rule.INVALID) if example.expected_fix is not None
]


@pytest.mark.parametrize("rule,example", FIX_EXAMPLES)
def test_examples_fix_to_expected_and_are_stable(rule, example):
    options = LintOptions(codes=frozenset({rule.code}), **dict(example.options))
    result = fix_source("example.py", example.code.encode(), options, unsafe=True)
    assert not result.errors
    assert result.text == example.expected_fix
    again = fix_source("example.py", result.fixed, options, unsafe=True)
    assert not again.changed and not again.applied


# hypothesis: hazardous snippets in random surroundings ---------------------------
_CHARS_UTF8 = "ab é ß€日\t\x0c\u2028"
_CHARS_LATIN1 = "ab é ßø\t\x0c"


def _comments(chars: str):
    """Surroundings that are not statements: they cannot move a module-top
    insertion (``import torch`` goes before the first statement)."""
    word = st.text(alphabet=chars, max_size=12)
    return st.lists(st.one_of(
        st.just(""),
        word.map(lambda t: f"# {t}"),
        word.map(lambda t: f"\t# {t}"),
        word.map(lambda t: f"\x0c# {t}"),
    ), max_size=3)


def _code(chars: str):
    word = st.text(alphabet=chars, max_size=12)
    return st.lists(st.one_of(
        st.just(""),
        word.map(lambda t: f"# {t}"),
        word.map(lambda t: f"s_ = '{t}'  # {t}"),
        word.map(lambda t: f'"""{t}\n{t}"""'),
        st.just("def _helper():\n\tif True:\n\t\treturn 1"),
        st.just("x_ = [\n\t1,\n    2,\n]"),
    ), max_size=4)


@st.composite
def _wrapped(draw):
    rule, example = draw(st.sampled_from([p.values for p in FIX_EXAMPLES]))
    variant = draw(st.sampled_from(["utf-8", "bom", "bom-cookie", "utf8-cookie", "latin-1-cookie"]))
    chars = _CHARS_LATIN1 if variant == "latin-1-cookie" else _CHARS_UTF8
    prefix = draw(_comments(chars))
    prefix_code = draw(st.one_of(st.just([]), _code(chars)))
    suffix = draw(_code(chars))
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    final_newline = draw(st.booleans())
    return rule, example, variant, prefix + prefix_code, bool(prefix_code), suffix, newline, final_newline


def _assemble(variant, prefix, body, suffix, newline, final_newline) -> tuple[str, bytes]:
    head = []
    if variant in ("bom-cookie", "utf8-cookie"):
        head.append("# -*- coding: utf-8 -*-")
    elif variant == "latin-1-cookie":
        head.append("# -*- coding: latin-1 -*-")
    before = "\n".join(head + prefix) + "\n" if head or prefix else ""
    after = "\n" + "\n".join(suffix) + "\n" if suffix else ""
    text = (before + body + after)
    text = text.replace("\r\n", "\n").replace("\n", newline)
    if not final_newline:
        text = text[: -len(newline)] if text.endswith(newline) else text
    encoding = {"utf-8": "utf-8", "bom": "utf-8-sig", "bom-cookie": "utf-8-sig",
                "utf8-cookie": "utf-8", "latin-1-cookie": "latin-1"}[variant]
    return text, SourceCodec(codecs.lookup(encoding).name).encode(text)


def _is_subsequence(needles: list[str], haystack: list[str]) -> bool:
    it = iter(haystack)
    return all(any(n == h for h in it) for n in needles)


@hsettings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_wrapped())
def test_property_fix_keeps_surroundings_and_is_idempotent(case):
    rule, example, variant, prefix, prefix_has_code, suffix, newline, final_newline = case
    options = LintOptions(codes=frozenset({rule.code}), **dict(example.options))
    text, data = _assemble(variant, prefix, example.code, suffix, newline, final_newline)
    result = fix_source("wrapped.py", data, options, unsafe=True)
    assert not result.errors, result.errors
    alone = fix_source("alone.py", example.code.encode(), options, unsafe=True)
    assume(alone.applied)
    assert result.applied
    # every line of the surroundings survives, byte for byte and in order
    surroundings, _ = _assemble(variant, prefix, "", suffix, newline, True)
    assert _is_subsequence([line.rstrip("\r\n") for line in split_lines(surroundings) if line.strip()],
                           [line.rstrip("\r\n") for line in split_lines(result.text)])
    if not prefix_has_code:
        # the snippet alone, fixed, then wrapped in the same surroundings: the
        # same bytes exactly (surroundings, line endings, BOM, encoding, edits)
        expected_text, expected = _assemble(variant, prefix, alone.text, suffix, newline, final_newline)
        assert result.fixed == expected
        assert result.text == expected_text
    if newline == "\r\n":
        assert "\n" not in result.text.replace("\r\n", "")
    if variant in ("bom", "bom-cookie"):
        assert result.fixed.startswith(codecs.BOM_UTF8)
    cst.parse_module(result.fixed)
    compile(result.fixed, "wrapped.py", "exec", dont_inherit=True)
    again = fix_source("wrapped.py", result.fixed, options, unsafe=True)
    assert again.fixed == result.fixed and not again.applied


def test_encodings_round_trip_on_disk(tmp_path: Path):
    """CRLF + BOM, and a latin-1 cookie with non-ASCII text: only the edit changes."""
    bom = tmp_path / "bom.py"
    text = "# caf\u00e9 \u65e5\u672c\r\n\r\n" + BARE_COMPILE.replace("\n", "\r\n") + "x = '\u00e9'\t# tab\r\n"
    bom.write_bytes(codecs.BOM_UTF8 + text.encode("utf-8"))
    latin = tmp_path / "latin.py"
    ltext = "# -*- coding: latin-1 -*-\n# caf\u00e9\n" + BARE_COMPILE + "s = '\u00f8\u00df'\n"
    latin.write_bytes(ltext.encode("latin-1"))
    outcome = _fix_dir(tmp_path, unsafe=False)
    assert sorted(Path(p).name for p in outcome.changed_files) == ["bom.py", "latin.py"]
    assert bom.read_bytes() == codecs.BOM_UTF8 + text.replace(
        "torch.compile(model", "model = torch.compile(model").encode("utf-8")
    assert latin.read_bytes() == ltext.replace(
        "torch.compile(model", "model = torch.compile(model").encode("latin-1")


# ---------------------------------------------------------------------- writing
def test_atomic_write_keeps_mode_and_leaves_no_temp_file(tmp_path: Path):
    target = tmp_path / "m.py"
    target.write_text(BARE_COMPILE)
    target.chmod(0o751)
    outcome = _fix_dir(tmp_path, unsafe=False)
    assert outcome.changed_files == [str(target)]
    assert target.read_text() == BARE_COMPILE_FIXED
    assert stat.S_IMODE(target.stat().st_mode) == 0o751
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.py"]


def test_symlink_is_followed_not_replaced(tmp_path: Path):
    real = tmp_path / "real.py"
    real.write_text(BARE_COMPILE)
    (tmp_path / "sub").mkdir()
    link = tmp_path / "sub" / "link.py"
    link.symlink_to(real)
    settings = _settings(tmp_path)
    fix_paths([link], settings, unsafe=False, diff=False, jobs=1)
    assert link.is_symlink() and real.read_text() == BARE_COMPILE_FIXED


def test_interrupted_write_leaves_the_old_file(tmp_path: Path, monkeypatch):
    target = tmp_path / "m.py"
    target.write_text(BARE_COMPILE)

    def boom(src, dst):
        raise KeyboardInterrupt

    monkeypatch.setattr(fixmod.os, "replace", boom)
    with pytest.raises(KeyboardInterrupt):
        _fix_dir(tmp_path, unsafe=False)
    assert target.read_text() == BARE_COMPILE
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.py"]


def test_file_changed_on_disk_is_not_overwritten(tmp_path: Path, monkeypatch):
    target = tmp_path / "m.py"
    target.write_text(BARE_COMPILE)
    edited = BARE_COMPILE + "# the user saved the file meanwhile\n"
    real_fix_source = fixmod.fix_source

    def fix_then_user_edits(*args, **kwargs):
        result = real_fix_source(*args, **kwargs)
        target.write_text(edited)  # between our read and our write
        return result

    monkeypatch.setattr(fixmod, "fix_source", fix_then_user_edits)
    outcome = _fix_dir(tmp_path, unsafe=False)
    assert target.read_text() == edited
    assert outcome.changed_files == [] and outcome.fixed == []
    assert any("changed on disk" in e and "m.py" in e for e in outcome.errors)
    assert [f.code for f in outcome.remaining] == ["GNN010"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.py"]


# ---------------------------------------------------------------------- what is fixed
def test_noqa_suppresses_the_fix(tmp_path: Path):
    line = "torch.compile(model, dynamic=True)"
    (tmp_path / "a.py").write_text(BARE_COMPILE.replace(line, line + "  # noqa: GNN010"))
    (tmp_path / "b.py").write_text("# gnnlint: noqa\n" + BARE_COMPILE)
    (tmp_path / "c.py").write_text(BARE_COMPILE.replace(line, line + "  # noqa: GNN001"))
    before = {p.name: p.read_text() for p in tmp_path.iterdir()}
    outcome = _fix_dir(tmp_path, unsafe=True)
    assert [Path(p).name for p in outcome.changed_files] == ["c.py"]
    assert (tmp_path / "a.py").read_text() == before["a.py"]
    assert (tmp_path / "b.py").read_text() == before["b.py"]
    assert outcome.remaining == []


def test_unsafe_fixes_need_the_flag(tmp_path: Path):
    (tmp_path / "t.py").write_text(ACCUMULATE)
    assert _fix_dir(tmp_path, unsafe=False).changed_files == []
    outcome = _fix_dir(tmp_path, unsafe=True)
    assert outcome.changed_files and [f.code for f in outcome.fixed] == ["GNN013"]
    fixed = (tmp_path / "t.py").read_text()
    assert "total_loss += loss.detach() * data.num_graphs" in fixed
    assert "return float(total_loss) / len(loader.dataset)" in fixed


class _BogusFixes:
    """Wraps a rule class so its fixes produce code that does not parse."""

    @staticmethod
    def make(base):
        from gnnlint.rules.base import FixSpec, NodeEdit

        class Bogus(base):
            def report(self, node, message, fix=None):
                if fix is not None:
                    fix = FixSpec(fix.applicability, fix.message,
                                  tuple(NodeEdit(e.node, "= = (", e.where) for e in fix.edits))
                super().report(node, message, fix)

        Bogus.__name__ = base.__name__
        return Bogus


def test_fix_producing_invalid_code_is_dropped_and_reported(tmp_path: Path, monkeypatch):
    rules = all_rules()
    gnn010 = next(r for r in rules if r.code == "GNN010")
    patched = tuple(_BogusFixes.make(r) if r is gnn010 else r for r in rules)
    monkeypatch.setattr(engine, "all_rules", lambda: patched)
    target = tmp_path / "m.py"
    target.write_text(BARE_COMPILE + "\n" + ACCUMULATE)
    outcome = _fix_dir(tmp_path, unsafe=True)
    assert f"internal error: fix for GNN010 produced invalid code in {target}" in outcome.errors
    text = target.read_text()
    cst.parse_module(text)
    assert "torch.compile(model, dynamic=True)\n" in text and "model = torch.compile" not in text
    # the other rule's fix in the same file is still applied
    assert "total_loss += loss.detach()" in text
    assert [f.code for f in outcome.fixed] == ["GNN013"]
    assert [f.code for f in outcome.remaining] == ["GNN010"]


def test_fixable_and_unfixable(tmp_path: Path):
    body = BARE_COMPILE + "\n" + ACCUMULATE
    for name, overrides, expect in [
        ("all", {}, {"GNN013", "GNN010"}),
        ("unfixable", {"unfixable": ["GNN010"]}, {"GNN013"}),
        ("fixable", {"fixable": ["GNN013"]}, {"GNN013"}),
        ("prefix", {"fixable": ["GNN01"]}, {"GNN010", "GNN013"}),
    ]:
        folder = tmp_path / name
        folder.mkdir()
        (folder / "m.py").write_text(body)
        outcome = _fix_dir(folder, unsafe=True, **overrides)
        assert {f.code for f in outcome.fixed} == expect, name
        assert {f.code for f in outcome.remaining} == {"GNN013", "GNN010"} - expect, name


def test_fixable_config_key(tmp_path: Path):
    (tmp_path / "pyproject.toml").write_text('[tool.gnnlint]\nunfixable = ["GNN010"]\n')
    (tmp_path / "m.py").write_text(BARE_COMPILE)
    result = run_cli(["fix", "m.py", "--no-cache"], tmp_path)
    assert result.exit_code == 1
    assert (tmp_path / "m.py").read_text() == BARE_COMPILE


def test_overlapping_fixes_wait_for_the_next_pass():
    from gnnlint.finding import Edit, Finding, Fix

    def finding(code, content):
        return Finding("x.py", 1, 1, 1, 6, code, "x", "m", fix=Fix("safe", "m", (Edit(1, 1, 1, 6, content),)))

    fixed, applied = apply_fixes("x = 1\n", [finding("GNN002", "y = 2"), finding("GNN001", "z = 3")])
    assert fixed == "z = 3\n" and [f.code for f in applied] == ["GNN001"]


def test_non_converging_fix_is_reported():
    from gnnlint.finding import Edit, Finding, Fix

    def lint(data: bytes):  # a "rule" whose fix re-creates its finding forever
        n = data.count(b"#")
        return [Finding("x.py", 1, 1, 1, 1, "GNN010", "x", "m",
                        fix=Fix("safe", "m", (Edit(1, 1, 1, 1, "#" * (n + 1) + "\n"),)))]

    result = fix_source("x.py", b"x = 1\n", None, unsafe=False, lint=lint)
    assert len(result.applied) == fixmod.MAX_PASSES
    assert any("did not converge" in e for e in result.errors)


# ---------------------------------------------------------------------- CLI
def test_diff_writes_nothing_and_exits_1(tmp_path: Path):
    (tmp_path / "m.py").write_text(BARE_COMPILE)
    result = run_cli(["fix", "--diff", "m.py", "--no-cache", "--isolated"], tmp_path)
    assert result.exit_code == 1
    assert result.output == unified_diff("m.py", BARE_COMPILE, BARE_COMPILE_FIXED)
    assert result.output.startswith("--- a/m.py\n+++ b/m.py\n@@")
    assert "-torch.compile(model, dynamic=True)\n+model = torch.compile(model, dynamic=True)\n" in result.output
    assert (tmp_path / "m.py").read_text() == BARE_COMPILE
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.py"]
    result = run_cli(["check", "--diff", "m.py", "--no-cache", "--isolated"], tmp_path)
    assert result.exit_code == 1 and (tmp_path / "m.py").read_text() == BARE_COMPILE


def test_diff_exits_0_when_nothing_to_fix(tmp_path: Path):
    (tmp_path / "m.py").write_text(BARE_COMPILE_FIXED)
    result = run_cli(["fix", "--diff", "m.py", "--no-cache", "--isolated"], tmp_path)
    assert result.exit_code == 0 and result.output == ""


def test_diff_marks_missing_final_newline():
    assert unified_diff("m.py", "a\nb", "a\nc").endswith("-b\n\\ No newline at end of file\n"
                                                        "+c\n\\ No newline at end of file\n")


def test_fix_reports_and_exit_non_zero_on_fix(tmp_path: Path):
    (tmp_path / "m.py").write_text(BARE_COMPILE)
    result = run_cli(["check", "--fix", "m.py", "--no-cache", "--isolated", "--output-format", "concise"], tmp_path)
    assert result.exit_code == 0, result.output
    assert "Fixed 1 finding (0 remaining)" in result.output or "Fixed 1 finding" in result.output
    assert (tmp_path / "m.py").read_text() == BARE_COMPILE_FIXED
    (tmp_path / "m.py").write_text(BARE_COMPILE)
    result = run_cli(["fix", "m.py", "--no-cache", "--isolated", "--exit-non-zero-on-fix"], tmp_path)
    assert result.exit_code == 1
    assert (tmp_path / "m.py").read_text() == BARE_COMPILE_FIXED
    # nothing left to fix: 0 even with the flag
    result = run_cli(["fix", "m.py", "--no-cache", "--isolated", "--exit-non-zero-on-fix"], tmp_path)
    assert result.exit_code == 0


def test_show_fixes_lists_what_was_fixed(tmp_path: Path):
    (tmp_path / "m.py").write_text(BARE_COMPILE)
    result = run_cli(["fix", "m.py", "--no-cache", "--isolated", "--show-fixes", "--output-format", "concise"],
                     tmp_path)
    assert "GNN010" in result.output and "m.py:3:1" in result.output
