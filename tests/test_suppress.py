"""# noqa handling: line forms, file-level forms, strings that only look like
directives, multi-line statements via noqa_line, and robustness."""
from __future__ import annotations

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gnnlint.finding import Finding
from gnnlint.suppress import NoqaMap, filter_findings, parse_noqa


def src(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def finding(code: str, line: int, noqa_line: int = 0) -> Finding:
    return Finding(
        path="m.py",
        line=line,
        col=1,
        end_line=line,
        end_col=2,
        code=code,
        name="rule",
        message="msg",
        noqa_line=noqa_line,
    )


# ---------------------------------------------------------------- line forms


def test_bare_noqa_suppresses_every_code_on_its_line():
    m = parse_noqa("x = t.item()  # noqa\ny = 2\n")
    assert m.lines == {1: None}
    assert m.is_suppressed("GNN001", 1)
    assert m.is_suppressed("GNN008", 1)
    assert not m.is_suppressed("GNN001", 2)


@pytest.mark.parametrize(
    "comment, codes",
    [
        ("# noqa: GNN001", {"GNN001"}),
        ("# noqa:GNN001", {"GNN001"}),
        ("# noqa: GNN001, GNN002", {"GNN001", "GNN002"}),
        ("# noqa:GNN001,GNN002", {"GNN001", "GNN002"}),
        ("# noqa: GNN001 GNN002", {"GNN001", "GNN002"}),
        ("# noqa :  GNN001 ,GNN002", {"GNN001", "GNN002"}),
        ("# NOQA: GNN001", {"GNN001"}),
        ("# NoQa: gnn001", {"GNN001"}),
        ("#noqa: GNN001", {"GNN001"}),
        ("# type: ignore  # noqa: GNN001", {"GNN001"}),
        ("# noqa: GNN001  # type: ignore[attr-defined]", {"GNN001"}),
        ("# noqa: GNN001 -- the sync is wanted here", {"GNN001"}),
        ("# noqa: GNN001,, GNN002", {"GNN001", "GNN002"}),
    ],
)
def test_code_forms(comment, codes):
    m = parse_noqa(f"x = 1  {comment}\n")
    assert m.lines == {1: frozenset(codes)}
    for code in codes:
        assert m.is_suppressed(code, 1)
    assert not m.is_suppressed("GNN005", 1)


@pytest.mark.parametrize(
    "comment",
    ["# noqa", "# NOQA", "#noqa", "# type: ignore # noqa", "# noqa because reasons"],
)
def test_bare_forms(comment):
    m = parse_noqa(f"x = 1  {comment}\n")
    assert m.lines == {1: None}


@pytest.mark.parametrize(
    "text",
    [
        'x = "# noqa"\n',
        "x = '# noqa: GNN001'\n",
        'x = f"{y} # noqa"\n',
        'x = """\n# noqa\n"""\n',
        "x = 1  # no qa\n",
        "x = 1  # noqa-ish\n",
        "x = 1  # noqa123\n",
        "x = 1  # nonoqa\n",
    ],
)
def test_not_directives(text):
    m = parse_noqa(text)
    assert m.lines == {}
    assert not m.file_all and not m.file_codes
    assert not m.is_suppressed("GNN001", 1)
    assert not m.is_suppressed("GNN001", 2)


def test_string_then_real_comment_on_same_line():
    m = parse_noqa('x = "# noqa"  # noqa: GNN004\n')
    assert m.lines == {1: frozenset({"GNN004"})}


def test_noqa_colon_without_codes_is_not_blanket():
    # Like ruff: a malformed list must not silently become a bare `# noqa`.
    m = parse_noqa("x = 1  # noqa:\ny = 2  # noqa: host-sync\n")
    assert not m.is_suppressed("GNN001", 1)
    assert not m.is_suppressed("GNN001", 2)
    assert [line for line, _ in m.invalid] == [1, 2]


def test_own_line_noqa_applies_to_its_own_line_only():
    m = parse_noqa("# noqa: GNN001\nx = t.item()\n")
    assert m.is_suppressed("GNN001", 1)
    assert not m.is_suppressed("GNN001", 2)


def test_multiple_directives_on_a_line_merge():
    m = parse_noqa("x = 1  # noqa: GNN001 # noqa: GNN002\n")
    assert m.lines == {1: frozenset({"GNN001", "GNN002"})}
    m = parse_noqa("x = 1  # noqa: GNN001 # noqa\n")
    assert m.lines == {1: None}


# ---------------------------------------------------------------- multi-line statements


MULTI = src(
    """
    loss = criterion(  # noqa: GNN001
        out[mask],
        y.item(),
    )
    other = (
        z.item()
    )
    """
)


def test_noqa_line_suppresses_finding_inside_statement():
    m = parse_noqa(MULTI)
    inside = finding("GNN001", line=3, noqa_line=1)
    assert m.is_suppressed("GNN001", 3, 1)
    assert filter_findings([inside], m) == []


def test_noqa_line_only_for_matching_codes():
    m = parse_noqa(MULTI)
    assert not m.is_suppressed("GNN008", 3, 1)
    assert filter_findings([finding("GNN008", 3, 1)], m) == [finding("GNN008", 3, 1)]


def test_without_noqa_line_statement_start_does_not_apply():
    m = parse_noqa(MULTI)
    assert not m.is_suppressed("GNN001", 3)
    assert not m.is_suppressed("GNN001", 6, 5)  # statement at 5 has no directive


def test_noqa_on_finding_line_inside_statement():
    text = src(
        """
        x = f(
            t.item(),  # noqa: GNN001
        )
        """
    )
    m = parse_noqa(text)
    assert filter_findings([finding("GNN001", 2, 1)], m) == []


# ---------------------------------------------------------------- file level


def test_file_level_bare():
    m = parse_noqa("import torch\n# gnnlint: noqa\nx = t.item()\n")
    assert m.file_all
    assert m.is_suppressed("GNN001", 3) and m.is_suppressed("GNN010", 99)


@pytest.mark.parametrize(
    "comment",
    ["# gnnlint: noqa", "#gnnlint:noqa", "# GNNLINT: NOQA", "  # gnnlint : noqa"],
)
def test_file_level_bare_spellings(comment):
    assert parse_noqa(f"x = 1\n{comment}\n").file_all


@pytest.mark.parametrize(
    "comment",
    [
        "# gnnlint: noqa: GNN001,GNN010",
        "# gnnlint: noqa: GNN001, GNN010",
        "# gnnlint: noqa:GNN001 GNN010",
        "# ruff: noqa: GNN001, GNN010",
        "# ruff: noqa: E501, GNN001, GNN010",
    ],
)
def test_file_level_codes(comment):
    m = parse_noqa(f"{comment}\nx = t.item()\n")
    assert not m.file_all
    assert {"GNN001", "GNN010"} <= m.file_codes
    assert m.is_suppressed("GNN001", 2) and m.is_suppressed("GNN010", 40)
    assert not m.is_suppressed("GNN002", 2)


def test_bare_ruff_noqa_does_not_silence_gnnlint():
    m = parse_noqa("# ruff: noqa\nx = t.item()\n")
    assert not m.file_all and not m.is_suppressed("GNN001", 2)


def test_file_level_must_be_its_own_comment_line():
    m = parse_noqa("x = 1  # gnnlint: noqa\ny = t.item()\n")
    assert not m.file_all
    assert not m.is_suppressed("GNN001", 2)


def test_file_level_inside_string_is_not_a_directive():
    m = parse_noqa('DOC = """\n# gnnlint: noqa\n"""\nx = t.item()\n')
    assert not m.file_all


def test_file_level_colon_without_codes_is_not_blanket():
    m = parse_noqa("# gnnlint: noqa:\nx = 1\n")
    assert not m.file_all and not m.file_codes
    assert m.invalid and m.invalid[0][0] == 1


# ---------------------------------------------------------------- filter_findings


def test_filter_keeps_order_and_unsuppressed():
    text = src(
        """
        a = t.item()  # noqa: GNN001
        b = t.item()
        c = t.nonzero()  # noqa
        d = t.item()  # noqa: GNN008
        """
    )
    fs = [
        finding("GNN001", 1),
        finding("GNN001", 2),
        finding("GNN008", 3),
        finding("GNN001", 4),
        finding("GNN008", 4),
    ]
    kept = filter_findings(fs, parse_noqa(text))
    assert kept == [finding("GNN001", 2), finding("GNN001", 4)]


def test_filter_with_file_codes():
    kept = filter_findings(
        [finding("GNN001", 2), finding("GNN010", 3)],
        parse_noqa("# gnnlint: noqa: GNN010\nx\ny\n"),
    )
    assert kept == [finding("GNN001", 2)]


def test_empty_map_suppresses_nothing():
    fs = [finding("GNN001", 1), finding("GNN000", 1, 1)]
    assert filter_findings(fs, NoqaMap()) == fs


# ---------------------------------------------------------------- robustness


@pytest.mark.parametrize(
    "text",
    [
        "def f(:\n    x = t.item()  # noqa: GNN001\n",  # syntax error, tokenizes
        "x = 'unterminated  # noqa\ny = 1  # noqa: GNN001\n",  # tokenize fails
        'x = """never closed\n# noqa: GNN002\n',
        "if x:\n  a = 1\n    b = 2  # noqa: GNN001\n",  # indentation error
        "\x00\x00 # noqa: GNN001\n",
        "x = 1  # noqa: GNN001",  # no trailing newline
        "\ufeffx = 1  # noqa: GNN001\n",
    ],
)
def test_never_raises_on_broken_input(text):
    m = parse_noqa(text)
    assert isinstance(m, NoqaMap)


def test_fallback_still_finds_directives_after_tokenize_error():
    text = "x = 'unterminated\ny = 1  # noqa: GNN001\nz = '# noqa: GNN002'\n"
    m = parse_noqa(text)
    assert m.is_suppressed("GNN001", 2)
    assert not m.is_suppressed("GNN002", 3)  # still inside a string


def test_fallback_respects_triple_quoted_strings():
    text = 'x = """\n# noqa: GNN002\n"""\nif (:\n  y = 1  # noqa: GNN001\n\t z = 1 \n  w = """\n'
    m = parse_noqa(text)
    assert not m.is_suppressed("GNN002", 2)
    assert m.is_suppressed("GNN001", 5)


def test_syntax_error_finding_can_be_suppressed():
    text = "def f(:  # noqa: GNN000\n"
    m = parse_noqa(text)
    assert filter_findings([finding("GNN000", 1)], m) == []


def test_bytes_input_is_decoded():
    m = parse_noqa(b"x = 1  # noqa: GNN001\n\xff\n")
    assert m.is_suppressed("GNN001", 1)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("#noqaNOQA:GNN0123 ,\n\t\"'\\()fxr=\ufeff\x00")), max_size=80))
def test_parse_noqa_never_raises_property(text):
    m = parse_noqa(text)
    assert isinstance(m, NoqaMap)
    for line, codes in m.lines.items():
        assert line >= 1
        assert codes is None or all(c == c.upper() for c in codes)


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=200))
def test_parse_noqa_never_raises_on_any_text(text):
    assert isinstance(parse_noqa(text), NoqaMap)
