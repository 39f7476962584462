"""Reporters: every output format, the summary line and --statistics."""
from __future__ import annotations

import io
import json
import re
from pathlib import Path

import jsonschema
import pytest
from rich.cells import cell_len

import gnnlint
from gnnlint.finding import Edit, Finding, Fix
from gnnlint.report import (
    FORMATS,
    ReportContext,
    render,
    render_statistics,
    rule_url,
    sort_findings,
)
from gnnlint.report.github import escape_data, escape_property
from gnnlint.report.json_format import render_json
from gnnlint.report.sarif import artifact_uri, build_sarif, render_sarif

DATA = Path(__file__).parent / "data"
ANSI = re.compile(r"\x1b\[[0-9;]*m")

SRC_TRAIN = (
    "import torch\n"
    "\n"
    "for batch in loader:\n"
    "\tloss = model(batch)\n"
    "\ttotal += loss.item()\n"
    "\topt.step()\n"
)
SRC_MODEL = (
    "x = 1\n"
    "torch.compile(model,\n"
    "    dynamic=True,\n"
    ")\n"
)

SAFE = Fix("safe", "Assign the result", (Edit(2, 1, 2, 1, "model = "),))
UNSAFE = Fix("unsafe", "Keep a device tensor", (Edit(5, 11, 5, 22, "loss.detach()"),))


def f_item(**kw) -> Finding:
    args = dict(
        path="train.py", line=5, col=11, end_line=5, end_col=22, code="GNN001",
        name="host-sync", message="device sync every batch: `loss.item()`", fix=UNSAFE,
    )
    args.update(kw)
    return Finding(**args)


def f_discard(**kw) -> Finding:
    args = dict(
        path="models.py", line=2, col=1, end_line=4, end_col=2, code="GNN010",
        name="compile-result-discarded", message="result of `torch.compile` is discarded",
        fix=SAFE,
    )
    args.update(kw)
    return Finding(**args)


def f_print(**kw) -> Finding:
    args = dict(
        path="train.py", line=4, col=2, end_line=4, end_col=6, code="GNN008",
        name="data-dependent-shape", message="data-dependent shape", severity="warning",
    )
    args.update(kw)
    return Finding(**args)


def findings_unsorted() -> list[Finding]:
    # Deliberately out of order: train.py before models.py, line 5 before 4.
    return [f_item(), f_discard(), f_print()]


def ctx(**kw) -> ReportContext:
    base = dict(sources={"train.py": SRC_TRAIN, "models.py": SRC_MODEL}, color=False)
    base.update(kw)
    return ReportContext(**base)


def run(fmt: str, findings: list[Finding], **kw) -> str:
    out = io.StringIO()
    render(fmt, findings, out, ctx(**kw))
    return out.getvalue()


# --------------------------------------------------------------------- basics


def test_formats_and_unknown_format():
    assert FORMATS == ("full", "concise", "json", "github", "sarif")
    with pytest.raises(ValueError, match="xml"):
        render("xml", [], io.StringIO(), ctx())


def test_rule_url():
    assert rule_url("GNN001") == "https://github.com/gnnlint/gnnlint/blob/main/rules/GNN001.md"


def test_sort_findings_orders_by_path_line_col_code():
    a = f_item(code="GNN009")
    b = f_item(code="GNN001")
    c = f_item(col=3)
    ordered = sort_findings([a, f_discard(), b, c, f_print()])
    assert [(f.path, f.line, f.col, f.code) for f in ordered] == [
        ("models.py", 2, 1, "GNN010"),
        ("train.py", 4, 2, "GNN008"),
        ("train.py", 5, 3, "GNN001"),
        ("train.py", 5, 11, "GNN001"),
        ("train.py", 5, 11, "GNN009"),
    ]


# -------------------------------------------------------------------- concise


def test_concise_exact_lines():
    assert run("concise", findings_unsorted()) == (
        "models.py:2:1: GNN010 [*] error: result of `torch.compile` is discarded\n"
        "train.py:4:2: GNN008 warning: data-dependent shape\n"
        "train.py:5:11: GNN001 error: device sync every batch: `loss.item()`\n"
        "Found 3 findings (1 fixable with `gnnlint check --fix`).\n"
    )


def test_concise_markup_like_text_is_literal():
    out = run("concise", [f_print(message="index [bold]x[/bold] :smile:")])
    assert "train.py:4:2: GNN008 warning: index [bold]x[/bold] :smile:\n" in out


@pytest.mark.parametrize(
    "findings, kw, expected",
    [
        ([], {}, ["All checks passed!"]),
        ([f_print()], {}, ["Found 1 finding."]),
        ([f_print(), f_item()], {}, ["Found 2 findings."]),
        ([f_discard()], {}, ["Found 1 finding (1 fixable with `gnnlint check --fix`)."]),
        (
            [f_discard(), f_discard(path="b.py"), f_item()],
            {},
            ["Found 3 findings (2 fixable with `gnnlint check --fix`)."],
        ),
        ([f_print()], {"fixed": 1}, ["Fixed 1 finding (1 remaining)."]),
        ([], {"fixed": 3}, ["Fixed 3 findings (0 remaining)."]),
        (
            [f_item()],
            {"unsafe_hidden": 1},
            ["Found 1 finding.", "1 hidden fix can be enabled with the `--unsafe-fixes` option."],
        ),
        (
            [f_item(), f_item(line=6)],
            {"unsafe_hidden": 2},
            ["Found 2 findings.", "2 hidden fixes can be enabled with the `--unsafe-fixes` option."],
        ),
    ],
)
@pytest.mark.parametrize("fmt", ["concise", "full"])
def test_summary_wording(fmt, findings, kw, expected):
    lines = run(fmt, findings, **kw).splitlines()
    assert lines[-len(expected):] == expected
    if not findings:
        assert lines == expected


# ----------------------------------------------------------------------- full


def _rows(text: str) -> list[str]:
    return text.split("\n")


def _caret_under(rows: list[str], source_prefix: str, target: str) -> tuple[int, int, int]:
    """(cell column of target in its source row, caret start, caret width)."""
    i = next(i for i, r in enumerate(rows) if r.startswith(source_prefix) and target in r)
    src, carets = rows[i], rows[i + 1]
    m = re.search(r"\^+", carets)
    assert m, f"no caret row under {src!r}: {carets!r}"
    return cell_len(src[: src.index(target)]), m.start(), len(m.group())


def test_full_header_snippet_and_caret_with_tabs():
    out = run("full", [f_item()])
    rows = _rows(out)
    assert rows[0] == "train.py:5:11: GNN001 error: device sync every batch: `loss.item()`"
    # Tabs are expanded; no raw tab reaches the output.
    assert "\t" not in out
    col, start, width = _caret_under(rows, "5 |", "loss.item()")
    assert start == col
    assert width == len("loss.item()")
    assert rows[rows.index(next(r for r in rows if r.startswith("5 |"))) + 1].endswith("^ GNN001")
    # Two context lines before (the blank line 2 is trimmed away), one after.
    assert "3 | for batch in loader:" in rows
    assert "6 |     opt.step()" in rows
    assert not any(r.startswith("1 |") for r in rows)
    assert "  = help: Keep a device tensor" in rows
    # A blank line after the finding, then the summary.
    assert rows[-3:] == ["", "Found 1 finding.", ""]


def test_full_caret_with_wide_characters_and_mid_line_tab():
    src = 'label = "日本語"\tif x: y = t.item()\n'
    f = f_item(path="w.py", line=1, col=25, end_line=1, end_col=33, fix=None)
    assert src[24:32] == "t.item()"
    out = io.StringIO()
    render("full", [f], out, ReportContext({"w.py": src}, False))
    col, start, width = _caret_under(_rows(out.getvalue()), "1 |", "t.item()")
    assert start == col
    assert width == 8


def test_full_multiline_span_underlines_each_line():
    out = run("full", [f_discard()])
    rows = _rows(out)
    i2 = rows.index("2 | torch.compile(model,")
    assert rows[i2 + 1] == "  | " + "^" * len("torch.compile(model,")
    i3 = rows.index("3 |     dynamic=True,")
    assert rows[i3 + 1] == "  |     " + "^" * len("dynamic=True,")
    i4 = rows.index("4 | )")
    assert rows[i4 + 1] == "  | ^ GNN010"
    assert rows[0] == "models.py:2:1: GNN010 [*] error: result of `torch.compile` is discarded"


def test_full_gutter_width_follows_largest_line_number():
    src = "".join(f"x{i} = {i}\n" for i in range(1, 13))
    f = f_print(path="g.py", line=9, col=1, end_line=9, end_col=3)
    out = io.StringIO()
    render("full", [f], out, ReportContext({"g.py": src}, False))
    rows = _rows(out.getvalue())
    assert " 9 | x9 = 9" in rows
    assert "11 | x11 = 11" in rows
    assert "   | ^^ GNN008" in rows


def test_full_without_source_or_with_show_source_false_prints_no_snippet():
    for kw in ({"sources": {}}, {"show_source": False}):
        out = run("full", [f_print()], **kw)
        assert out == (
            "train.py:4:2: GNN008 warning: data-dependent shape\n"
            "\n"
            "Found 1 finding.\n"
        )


def test_full_finding_past_last_line_points_at_end():
    src = "def f(:\n    pass"
    f = Finding("bad.py", 3, 1, 3, 1, "GNN000", "syntax-error", "Expected `)`")
    out = io.StringIO()
    render("full", [f], out, ReportContext({"bad.py": src}, False))
    rows = _rows(out.getvalue())
    assert "2 |     pass" in rows
    assert rows[rows.index("2 |     pass") + 1] == "  |         ^ GNN000"


def test_full_no_ansi_without_color_and_ansi_with_color(monkeypatch):
    monkeypatch.setenv("FORCE_COLOR", "1")  # the context decides, not the env
    plain = run("full", findings_unsorted(), color=False)
    assert "\x1b[" not in plain
    monkeypatch.delenv("FORCE_COLOR")
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("TERM", "dumb")
    colored = run("full", findings_unsorted(), color=True)
    assert ANSI.search(colored)
    assert "\x1b[1;31mGNN001" in colored  # the code in bold red
    # Same text once the styles are stripped.
    assert ANSI.sub("", colored) == plain


def test_concise_color_and_no_wrapping():
    long = "x" * 500
    out = run("concise", [f_print(message=long)], color=True)
    assert ANSI.search(out)
    assert ANSI.sub("", out).splitlines()[0] == f"train.py:4:2: GNN008 warning: {long}"


def test_full_show_fixes_prints_diff():
    out = run("full", [f_discard(), f_item()], show_fixes=True)
    rows = _rows(out)
    assert "\u2139 Safe fix" in rows
    assert "\u2139 Unsafe fix" in rows
    assert "2   |-torch.compile(model," in rows
    assert "  2 |+model = torch.compile(model," in rows
    assert any(r.endswith("|+    total += loss.detach()") for r in rows)
    assert "Safe fix" not in run("full", [f_discard()])


def test_full_findings_in_sorted_order():
    out = run("full", findings_unsorted())
    headers = [r for r in _rows(out) if re.match(r"^\S+\.py:\d+:\d+: ", r)]
    assert [h.split(":")[0] + ":" + h.split(":")[1] for h in headers] == [
        "models.py:2", "train.py:4", "train.py:5",
    ]


# ----------------------------------------------------------------------- json

JSON_KEYS = [
    "cell", "code", "end_location", "filename", "fix", "location",
    "message", "noqa_row", "url", "name", "severity",
]


def test_json_entries():
    data = json.loads(run("json", findings_unsorted() + [f_item(path="z.py", noqa_line=3, fix=None)]))
    assert [d["filename"] for d in data] == ["models.py", "train.py", "train.py", "z.py"]
    for d in data:
        assert list(d) == JSON_KEYS
        assert d["cell"] is None
        assert d["url"] == rule_url(d["code"])
    discard, warn, item, z = data
    assert discard["location"] == {"column": 1, "row": 2}
    assert discard["end_location"] == {"column": 2, "row": 4}
    assert discard["fix"] == {
        "applicability": "safe",
        "message": "Assign the result",
        "edits": [
            {
                "content": "model = ",
                "end_location": {"column": 1, "row": 2},
                "location": {"column": 1, "row": 2},
            }
        ],
    }
    assert item["fix"]["applicability"] == "unsafe"
    assert warn["fix"] is None and warn["severity"] == "warning"
    assert item["severity"] == "error"
    assert item["name"] == "host-sync"
    assert item["noqa_row"] == 5  # noqa_line 0 -> the finding's own line
    assert z["noqa_row"] == 3


def test_json_empty_and_no_summary():
    assert run("json", []) == "[]\n"
    assert "Found" not in run("json", [f_item()])


def test_json_extra_keys_follow_sorted_order():
    fs = findings_unsorted()
    extra = [{"verdict": f"v-{f.path}:{f.line}"} for f in sort_findings(fs)]
    out = io.StringIO()
    render_json(fs, out, extra=extra)
    data = json.loads(out.getvalue())
    assert [d["verdict"] for d in data] == ["v-models.py:2", "v-train.py:4", "v-train.py:5"]
    assert list(data[0])[-1] == "verdict"
    with pytest.raises(ValueError):
        render_json(fs, io.StringIO(), extra=extra[:1])


# --------------------------------------------------------------------- github


def test_github_lines():
    assert run("github", findings_unsorted()) == (
        "::error title=gnnlint (GNN010),file=models.py,line=2,col=1,endLine=4,endColumn=2"
        "::GNN010 result of `torch.compile` is discarded\n"
        "::warning title=gnnlint (GNN008),file=train.py,line=4,col=2,endLine=4,endColumn=6"
        "::GNN008 data-dependent shape\n"
        "::error title=gnnlint (GNN001),file=train.py,line=5,col=11,endLine=5,endColumn=22"
        "::GNN001 device sync every batch: `loss.item()`\n"
    )


def test_github_escaping():
    assert escape_data("50%: a,b\r\nc") == "50%25: a,b%0D%0Ac"
    assert escape_property("50%: a,b\r\nc") == "50%25%3A a%2Cb%0D%0Ac"
    f = f_item(path="dir,1/we:ird%.py", message="100% sync:\nsee, docs\r")
    line = run("github", [f])
    assert line == (
        "::error title=gnnlint (GNN001),file=dir%2C1/we%3Aird%25.py,line=5,col=11,"
        "endLine=5,endColumn=22::GNN001 100%25 sync:%0Asee, docs%0D\n"
    )
    assert line.count("\n") == 1


def test_github_empty():
    assert run("github", []) == ""


# ---------------------------------------------------------------------- sarif


@pytest.fixture(scope="module")
def sarif_validator():
    schema = json.loads((DATA / "sarif-2.1.0.json").read_text(encoding="utf-8"))
    jsonschema.Draft7Validator.check_schema(schema)
    return jsonschema.Draft7Validator(schema, format_checker=jsonschema.FormatChecker())


def test_schema_file_is_sarif_2_1_0():
    schema = json.loads((DATA / "sarif-2.1.0.json").read_text(encoding="utf-8"))
    assert schema["title"] == "Static Analysis Results Format (SARIF) Version 2.1.0 JSON Schema"
    schema_id = schema.get("$id") or schema.get("id")
    assert schema_id.endswith("/sarif-2.1.0.json") or schema_id.endswith("sarif-schema-2.1.0.json")
    assert schema["properties"]["version"]["enum"] == ["2.1.0"]
    assert "fix" in schema["definitions"] and "replacement" in schema["definitions"]


def test_schema_rejects_broken_log(sarif_validator):
    log = build_sarif([f_item()])
    log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] = 0
    assert not sarif_validator.is_valid(log)
    log = build_sarif([f_item()])
    del log["runs"][0]["tool"]["driver"]["name"]
    assert not sarif_validator.is_valid(log)


def _sarif(findings, **kw) -> dict:
    out = io.StringIO()
    render_sarif(findings, out, ctx(), **kw)
    return json.loads(out.getvalue())


def test_sarif_valid_with_fixes_and_rules(sarif_validator):
    from gnnlint.rules import all_rules

    fs = findings_unsorted() + [
        Finding("bad.py", 3, 1, 3, 1, "GNN000", "syntax-error", "Expected `)`")
    ]
    log = _sarif(fs)
    sarif_validator.validate(log)
    assert log["version"] == "2.1.0"
    assert "sarif-2.1.0" in log["$schema"]
    (run_,) = log["runs"]
    driver = run_["tool"]["driver"]
    assert driver["name"] == "gnnlint"
    assert driver["version"] == gnnlint.__version__
    assert driver["informationUri"].startswith("https://")
    ids = [r["id"] for r in driver["rules"]]
    assert ids == ["GNN000"] + [r.code for r in all_rules()]
    gnn000 = driver["rules"][0]
    assert gnn000["name"] == "syntax-error"
    assert gnn000["shortDescription"]["text"] == "File could not be parsed"
    assert gnn000["helpUri"] == rule_url("GNN000")

    results = run_["results"]
    assert [r["ruleId"] for r in results] == ["GNN000", "GNN010", "GNN008", "GNN001"]
    for r in results:
        if r["ruleId"] in ids:
            assert driver["rules"][r["ruleIndex"]]["id"] == r["ruleId"]
    discard = results[1]
    assert discard["level"] == "error"
    assert results[2]["level"] == "warning"
    assert discard["message"]["text"] == "result of `torch.compile` is discarded"
    loc = discard["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"]["uri"] == "models.py"
    assert loc["region"] == {"startLine": 2, "startColumn": 1, "endLine": 4, "endColumn": 2}
    (fix,) = discard["fixes"]
    assert fix["description"]["text"] == "Assign the result"
    (change,) = fix["artifactChanges"]
    assert change["artifactLocation"]["uri"] == "models.py"
    assert change["replacements"] == [
        {
            "deletedRegion": {"startLine": 2, "startColumn": 1, "endLine": 2, "endColumn": 1},
            "insertedContent": {"text": "model = "},
        }
    ]
    assert "fixes" not in results[2]
    assert run_["columnKind"] == "unicodeCodePoints"


def test_sarif_rule_descriptors_from_rule_classes(monkeypatch, sarif_validator):
    import gnnlint.rules as rules_pkg

    class FakeRule:
        code = "GNN042"
        name = "fake-rule"
        summary = "A fake rule"
        fix_applicability = "safe"
        severity = "info"

        @classmethod
        def doc(cls):
            return "Why it hurts,\nin two lines.\n\n## Fix\n\nDo this instead."

    class OtherRule(FakeRule):
        code = "GNN043"
        name = "other-rule"
        fix_applicability = None
        severity = "error"

    monkeypatch.setattr(rules_pkg, "all_rules", lambda: (FakeRule, OtherRule))
    log = _sarif([f_item(code="GNN043", name="other-rule")])
    sarif_validator.validate(log)
    rules = log["runs"][0]["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == ["GNN000", "GNN042", "GNN043"]
    fake = rules[1]
    assert fake["name"] == "fake-rule"
    assert fake["shortDescription"] == {"text": "A fake rule"}
    assert fake["fullDescription"] == {"text": "Why it hurts, in two lines."}
    assert fake["helpUri"] == rule_url("GNN042")
    assert fake["help"]["markdown"].endswith("Do this instead.")
    assert fake["properties"]["fixAvailability"] == "safe"
    assert rules[2]["properties"]["fixAvailability"] == "none"
    # each rule's default severity is its SARIF default level
    assert fake["defaultConfiguration"] == {"level": "note"}
    assert rules[2]["defaultConfiguration"] == {"level": "error"}
    assert log["runs"][0]["results"][0]["ruleIndex"] == 2


def test_sarif_empty_and_unknown_rule(sarif_validator):
    log = _sarif([])
    sarif_validator.validate(log)
    assert log["runs"][0]["results"] == []
    log = _sarif([f_item(code="GNN999")])
    sarif_validator.validate(log)
    assert "ruleIndex" not in log["runs"][0]["results"][0]


def test_sarif_extra_properties_follow_sorted_order(sarif_validator):
    log = _sarif(findings_unsorted(), extra_properties={2: {"verdict": "confirmed"}})
    sarif_validator.validate(log)
    results = log["runs"][0]["results"]
    assert results[2]["ruleId"] == "GNN001"
    assert results[2]["properties"] == {"verdict": "confirmed"}
    assert "properties" not in results[0] and "properties" not in results[1]


def test_sarif_uris(tmp_path, sarif_validator):
    cwd = tmp_path / "proj"
    assert artifact_uri("pkg/my model.py", str(cwd)) == "pkg/my%20model.py"
    assert artifact_uri(str(cwd / "a" / "b.py"), str(cwd)) == "a/b.py"
    outside = tmp_path / "elsewhere" / "c.py"
    uri = artifact_uri(str(outside), str(cwd))
    assert uri.startswith("file://") and uri.endswith("/elsewhere/c.py")
    log = build_sarif([f_item(path=str(outside))], cwd=str(cwd))
    sarif_validator.validate(log)
    assert log["runs"][0]["results"][0]["locations"][0]["physicalLocation"][
        "artifactLocation"]["uri"] == uri


def test_sarif_via_render_is_json():
    assert json.loads(run("sarif", [f_item()]))["runs"][0]["results"][0]["ruleId"] == "GNN001"


# ----------------------------------------------------------------- statistics


def test_statistics_text():
    fs = [f_item(), f_item(line=6), f_discard(), f_print(), f_item(line=7, fix=None)]
    out = io.StringIO()
    render_statistics(fs, out, "full")
    assert out.getvalue() == (
        "3\tGNN001\t[ ] host-sync\n"
        "1\tGNN008\t[ ] data-dependent-shape\n"
        "1\tGNN010\t[*] compile-result-discarded\n"
    )


def test_statistics_text_without_fixable_has_no_marker_and_pads():
    fs = [f_print(line=i) for i in range(1, 11)] + [f_item(fix=None, code="GNN1234")]
    out = io.StringIO()
    render_statistics(fs, out, "concise")
    assert out.getvalue() == "10\tGNN008 \tdata-dependent-shape\n 1\tGNN1234\thost-sync\n"


def test_statistics_json_and_empty():
    out = io.StringIO()
    render_statistics([f_discard(), f_discard(path="b.py"), f_item()], out, "json")
    assert json.loads(out.getvalue()) == [
        {"code": "GNN010", "name": "compile-result-discarded", "count": 2,
         "fixable": True, "fixable_count": 2},
        {"code": "GNN001", "name": "host-sync", "count": 1,
         "fixable": False, "fixable_count": 0},
    ]
    out = io.StringIO()
    render_statistics([], out, "json")
    assert out.getvalue() == "[]\n"
    out = io.StringIO()
    render_statistics([], out, "full")
    assert out.getvalue() == ""


# ------------------------------------------------------------------ all empty


@pytest.mark.parametrize(
    "fmt, expected",
    [("full", "All checks passed!\n"), ("concise", "All checks passed!\n"),
     ("json", "[]\n"), ("github", "")],
)
def test_empty_outputs(fmt, expected):
    assert run(fmt, []) == expected


# ------------------------------------------------------------------- severity


@pytest.mark.parametrize("severity,github,sarif", [
    ("error", "::error ", "error"), ("warning", "::warning ", "warning"), ("info", "::notice ", "note")])
def test_every_format_carries_the_severity(severity, github, sarif):
    finding = [f_print(severity=severity)]
    assert run("concise", finding).startswith(f"train.py:4:2: GNN008 {severity}: data-dependent shape\n")
    assert run("github", finding).startswith(github)
    assert json.loads(run("json", finding))[0]["severity"] == severity
    assert _sarif(finding)["runs"][0]["results"][0]["level"] == sarif


def test_at_least_keeps_the_minimum_and_above():
    from gnnlint.finding import at_least

    findings = [f_print(severity=s) for s in ("info", "warning", "error")]
    assert [f.severity for f in at_least(findings, "info")] == ["info", "warning", "error"]
    assert [f.severity for f in at_least(findings, "warning")] == ["warning", "error"]
    assert [f.severity for f in at_least(findings, "error")] == ["error"]
