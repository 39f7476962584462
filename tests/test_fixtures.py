"""`gnnlint check fixtures/` reports exactly the expected findings: every
hazard at its line, nothing on the clean twins."""
from __future__ import annotations

from pathlib import Path

import pytest

from fixture_expectations import EXPECTED, EXPECTED_EXTRA_BY_TARGET
from gnnlint.config import load_settings
from gnnlint.engine import lint_paths

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def _found(**overrides) -> dict[str, list[tuple[str, int, int]]]:
    settings = load_settings(cwd=FIXTURES, isolated=True, overrides=overrides)
    out: dict[str, list[tuple[str, int, int]]] = {}
    for f in lint_paths([FIXTURES], settings):
        out.setdefault(Path(f.path).name, []).append((f.code, f.line, f.end_line))
    return out


def _matches(expected: list[tuple[str, int]], found: list[tuple[str, int, int]]) -> tuple[list, list]:
    missing = [e for e in expected if not any(c == e[0] and s <= e[1] <= end for c, s, end in found)]
    extra = [f for f in found if not any(f[0] == c and f[1] <= line <= f[2] for c, line in expected)]
    return missing, extra


def test_every_fixture_is_listed():
    on_disk = {p.name for p in FIXTURES.glob("*.py")}
    assert on_disk == set(EXPECTED), on_disk ^ set(EXPECTED)
    assert any(name.endswith("_clean.py") for name in EXPECTED)


@pytest.fixture(scope="module")
def found_default():
    return _found()


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture_findings(name, found_default):
    missing, extra = _matches(EXPECTED[name], found_default.get(name, []))
    assert not missing, f"{name}: missed {missing}"
    assert not extra, f"{name}: unexpected {extra}"


def test_clean_twins_are_clean(found_default):
    dirty = {n: f for n, f in found_default.items() if n.endswith("_clean.py")}
    assert not dirty


def test_version_gated_findings_appear_for_old_torch():
    """GNN003's hazard exists before torch 2.5 only: targeting 2.4 adds it."""
    found = _found(torch_version="2.4")
    for name, extra in EXPECTED_EXTRA_BY_TARGET["torch<2.5"].items():
        missing, unexpected = _matches(EXPECTED[name] + extra, found.get(name, []))
        assert not missing and not unexpected, (name, missing, unexpected)
