"""Rule pages (rules/GNNxxx.md) and the `gnnlint rules` table, from the rule classes.

    python -m gnnlint.docs          # regenerate rules/*.md

tests/test_docs.py fails when a page is out of date.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from gnnlint.rules import all_rules
from gnnlint.rules.base import Rule

ROOT = Path(__file__).resolve().parent.parent


def _fix_line(rule: type[Rule]) -> str:
    if rule.fix_applicability is None:
        return "Fix: not available"
    return f"Fix: available ({rule.fix_applicability})"


_SEVERITY_MEANING = {
    "error": "wrong results, or the compiled code silently runs eagerly",
    "warning": "a cost on every call",
    "info": "a one-off cost",
}


def _severity_line(rule: type[Rule]) -> str:
    return f"Severity: {rule.severity} ({_SEVERITY_MEANING.get(rule.severity, '')})"


def _versions_line(rule: type[Rule]) -> str:
    parts = []
    if rule.torch_versions:
        parts.append(f"torch `{rule.torch_versions}`")
    if rule.pyg_versions:
        parts.append(f"torch_geometric `{rule.pyg_versions}`")
    return "Affects: " + (", ".join(parts) if parts else "all torch / torch_geometric versions")


def rule_page(rule: type[Rule]) -> str:
    return (
        f"# {rule.code} {rule.name}\n\n"
        f"{rule.summary}\n\n"
        f"{_fix_line(rule)} · {_versions_line(rule)} · {_severity_line(rule)}\n\n"
        f"{rule.doc()}\n"
    )


def rule_json(rule: type[Rule]) -> str:
    return json.dumps(_rule_dict(rule, with_doc=True), indent=2)


def _rule_dict(rule: type[Rule], with_doc: bool = False) -> dict:
    out = {
        "code": rule.code,
        "name": rule.name,
        "summary": rule.summary,
        "fix": rule.fix_applicability,
        "severity": rule.severity,
        "torch_versions": rule.torch_versions or None,
        "pyg_versions": rule.pyg_versions or None,
    }
    if with_doc:
        out["explanation"] = rule.doc()
    return out


def rules_table_text() -> str:
    rows = [("code", "name", "fix", "severity", "summary")]
    for rule in all_rules():
        rows.append((rule.code, rule.name, rule.fix_applicability or "-", rule.severity, rule.summary))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    lines = []
    for r in rows:
        lines.append("  ".join(r[i].ljust(widths[i]) for i in range(4)) + "  " + r[4])
    return "\n".join(lines)


def rules_table_json() -> str:
    return json.dumps([_rule_dict(r) for r in all_rules()], indent=2)


def index_page() -> str:
    lines = ["# gnnlint rules", "", "Generated from the rule classes by `python -m gnnlint.docs`.", "",
             "| code | name | fix | severity | summary |", "|---|---|---|---|---|"]
    for rule in all_rules():
        summary = rule.summary.replace("|", "\\|")
        lines.append(f"| [{rule.code}]({rule.code}.md) | {rule.name} | {rule.fix_applicability or '-'} "
                     f"| {rule.severity} | {summary} |")
    return "\n".join(lines) + "\n" + AUTHOR_GUIDE


# The rule author's guide, appended to rules/README.md.
AUTHOR_GUIDE = """
## Adding a rule

To add a rule, write one module: `gnnlint/rules/gnnNNN_<name>.py` with one
`Rule` subclass (`code`, kebab-case `name`, `summary`, a docstring with *What
it does / Why is this bad? / Example / Use instead / Fix safety / References*,
`triggers` byte strings for the prefilter, `region` when the hazard needs a
compiled region or a hot loop, and `VALID` / `INVALID` examples, which are its
tests). Then run `python -m gnnlint.docs` to regenerate these pages and the
rule index. There is no list to edit.

A rule visits nodes and **asks** `self.context` (a `FileContext`); it never
re-derives context. The questions, and the module of `gnnlint/semantic/` that
answers each (its README has the full map):

| ask | answered in |
|---|---|
| `resolve(expr)`: the dotted name through imports and aliases; `lookup(name, at)`: its binding; `reaching(name, at)` / `sole_binding(name, at)`: the bindings that reach a use, the one that surely does | `semantic/names.py`, `semantic/bindings.py` |
| `kind(expr)` / `is_tensor(expr)`: is this value a tensor, a batch, a model, an optimizer, a loader, a scalar? | `semantic/kinds.py` |
| `compiled_region(node)` / `hot_region(node)` / `is_eager_only(node)`: does this line run compiled, once per step, only eagerly -- and why (for the message) | `semantic/regions.py`, `semantic/eager.py` |
| `compile_site(node)`, `compile_kwarg(node, "dynamic")`, `compiled_refs(node)`: how is it compiled, and which names hold the result | `semantic/compile_sites.py` |
| `loader_feeds(site)`: what feeds this compiled model (variable-size loaders, padding, `mark_dynamic`) | `semantic/feeds.py` |
| `optimizer_ctor(expr)`, `lr_changers(ctor)`, `compiled_steps(ctor)` | `semantic/optim.py` |
| `lazy_reason(expr)`, `eager_forward_before(site, target)` | `semantic/lazy.py` |
| `compiled_callee(call)`, `compiled_sink(expr)`: does this call run a compiled model, does this value reach one | `semantic/flow.py` |
| `is_bool_mask(expr)`, `likely_tensor(expr)`: data-dependent shapes | `semantic/shapes.py` |
| `module_dict_kind(expr, at)`, `tuple_key(key)`: ModuleDicts and edge-type keys | `semantic/keys.py` |
| `arg_of`, `passed`, `has_star_args`, `is_none` (import them from `gnnlint.context`) | `semantic/syntax.py` |

If the question you need is not there, add it to the module of its family
(not to the rule), as a public method the rule calls through the context; a
second rule will ask it too. Import only the vocabulary (`TENSOR`,
`COMPILE_FUNCS`, ...) from `gnnlint.context`, never an analysis' internals.
Before landing, `python bench/golden.py` shows every finding your change adds
or removes on real trees.
"""


def expected_pages() -> dict[str, str]:
    pages = {f"{rule.code}.md": rule_page(rule) for rule in all_rules()}
    pages["README.md"] = index_page()
    return pages


INDEX_PATH = Path(__file__).resolve().parent / "rules" / "_index.py"


def write_index(path: Path = INDEX_PATH) -> bool:
    """Regenerate gnnlint/rules/_index.py (the libcst-free rule index)."""
    from gnnlint.rules import render_index

    text = render_index()
    if path.exists() and path.read_text(encoding="utf-8") == text:
        return False
    path.write_text(text, encoding="utf-8")
    return True


def write_pages(folder: Path = ROOT / "rules") -> list[str]:
    folder.mkdir(exist_ok=True)
    written = ["gnnlint/rules/_index.py"] if write_index() else []
    for name, text in expected_pages().items():
        path = folder / name
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            written.append(name)
    for stale in folder.glob("GNN*.md"):
        if stale.name not in expected_pages():
            stale.unlink()
            written.append(f"removed {stale.name}")
    return written


if __name__ == "__main__":
    for name in write_pages():
        print(f"wrote {name if '/' in name else 'rules/' + name}")
    sys.exit(0)
