"""rules/*.md are generated from the rule classes and must be up to date."""
from __future__ import annotations

from pathlib import Path

from gnnlint.docs import expected_pages
from gnnlint.rules import all_rules

RULES_DIR = Path(__file__).resolve().parent.parent / "rules"
SECTIONS = ("## What it does", "## Why is this bad?", "## Example", "## Use instead", "## Fix safety",
            "## References")


def test_rule_pages_are_up_to_date():
    stale = []
    for name, text in expected_pages().items():
        path = RULES_DIR / name
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            stale.append(name)
    extra = sorted(p.name for p in RULES_DIR.glob("GNN*.md") if p.name not in expected_pages())
    assert not stale and not extra, (
        f"rule pages out of date: {stale or extra}; run `python -m gnnlint.docs`")


def test_every_page_has_ruff_sections():
    for rule in all_rules():
        doc = rule.doc()
        missing = [s for s in SECTIONS if s not in doc]
        assert not missing, f"{rule.code} page lacks {missing}"


def test_rule_index_is_up_to_date():
    """The libcst-free index the prefilter and config use matches the classes."""
    from gnnlint.docs import INDEX_PATH
    from gnnlint.rules import render_index

    assert INDEX_PATH.read_text(encoding="utf-8") == render_index(), \
        "gnnlint/rules/_index.py is stale; run `python -m gnnlint.docs`"
