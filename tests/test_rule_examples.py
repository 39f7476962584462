"""Every rule's VALID/INVALID examples are its tests (the Fixit habit)."""
from __future__ import annotations


import pytest

from gnnlint.engine import LintOptions, lint_bytes
from gnnlint.fix import apply_fixes
from gnnlint.rules import all_rules

RULES = all_rules()


def _lint(rule, code: str, options: dict):
    opts = LintOptions(codes=frozenset({rule.code}), **options)
    return lint_bytes("example.py", code.encode(), opts, rules=[rule]).findings


def _cases(attr):
    for rule in RULES:
        for i, example in enumerate(getattr(rule, attr)):
            yield pytest.param(rule, example, id=f"{rule.code}-{attr.lower()}-{i}")


def test_every_rule_has_examples():
    assert RULES, "no rules registered"
    for rule in RULES:
        assert rule.VALID and rule.INVALID, f"{rule.code} needs VALID and INVALID examples"
        assert rule.code and rule.name and rule.summary and rule.doc(), rule.code
        assert rule.triggers, f"{rule.code} has no prefilter triggers"


@pytest.mark.parametrize("rule,example", list(_cases("VALID")))
def test_valid(rule, example):
    findings = _lint(rule, example.code, {})
    assert findings == [], [(f.line, f.message) for f in findings]


@pytest.mark.parametrize("rule,example", list(_cases("INVALID")))
def test_invalid(rule, example):
    findings = _lint(rule, example.code, dict(example.options))
    assert sorted(f.line for f in findings) == sorted(example.lines), \
        [(f.line, f.message) for f in findings]
    assert all(f.code == rule.code for f in findings)


@pytest.mark.parametrize("rule,example", [p for p in _cases("INVALID") if p.values[1].expected_fix])
def test_fix(rule, example):
    findings = _lint(rule, example.code, dict(example.options))
    fixed, _applied = apply_fixes(example.code, findings, unsafe=True)
    assert fixed == example.expected_fix


@pytest.mark.parametrize("rule,example", list(_cases("INVALID")))
def test_triggers_cover_invalid(rule, example):
    """The byte prefilter must never hide a finding the rule would make."""
    from gnnlint.engine import _may_fire

    options = LintOptions(codes=frozenset({rule.code}), **dict(example.options))
    assert _may_fire(rule, example.code.encode(), options), f"{rule.code}'s prefilter skips its own example"
