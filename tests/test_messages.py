"""Messages are true to the target versions and short up front."""
from pathlib import Path

from gnnlint.engine import LintOptions, lint_bytes
from gnnlint.rules import all_codes

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


# the rules of issue 10 (later rules cite their own measurements)
CODES = frozenset(c for c in all_codes() if c <= "GNN013")


def _lint_fixtures(**options):
    opts = LintOptions(codes=CODES, **options)
    found = []
    for path in sorted(FIXTURES.glob("*_hazard.py")):
        found += lint_bytes(str(path), path.read_bytes(), opts).findings
    return found


def test_no_torch_2_13_claims_for_another_target():
    findings = _lint_fixtures(torch_version="2.4.1", pyg_version="2.4.0")
    assert findings
    assert [f.message for f in findings if "2.13" in f.message] == []
    # the measured behaviour is named for the measured version
    measured = _lint_fixtures(torch_version="2.13.0", pyg_version="2.8.1")
    assert any("torch 2.13" in f.message for f in measured)


def test_torch_geometric_compile_deprecated_only_from_pyg_2_5():
    src = b"import torch\nimport torch_geometric\nmodel = torch_geometric.compile(model)\n"
    old = lint_bytes("m.py", src, LintOptions(codes=frozenset({"GNN010"}), pyg_version="2.4.0")).findings
    new = lint_bytes("m.py", src, LintOptions(codes=frozenset({"GNN010"}), pyg_version="2.5.0")).findings
    assert old == [] and [f.line for f in new] == [3]
