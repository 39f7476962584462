"""Rule registry: every module in this package that defines a Rule subclass.

There is no hand-kept list; adding ``gnnxxx_name.py`` with one ``Rule``
subclass registers it. ``_index.py`` is generated from the classes by
``python -m gnnlint.docs`` (a test fails when it is stale): it lets the
config check codes and the engine prefilter bytes without importing libcst.
"""
from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache
from typing import TYPE_CHECKING, NamedTuple, Optional

if TYPE_CHECKING:
    from gnnlint.rules.base import Rule

# GNN000 is produced by the engine itself for files that do not parse.
SYNTAX_ERROR_CODE = "GNN000"
SYNTAX_ERROR_NAME = "syntax-error"


class RuleInfo(NamedTuple):
    """What the prefilter and the config need to know of a rule."""

    code: str
    name: str
    module: str
    triggers: tuple[bytes, ...]
    region: Optional[str]
    torch_versions: str
    pyg_versions: str


def rule_index() -> tuple[RuleInfo, ...]:
    from gnnlint.rules._index import RULES

    return RULES


def render_index() -> str:
    """The text of ``_index.py`` for the current rule classes."""
    lines = ['"""Generated from the rule classes by `python -m gnnlint.docs`; do not edit."""',
             "from gnnlint.rules import RuleInfo", "", "RULES = ("]
    for rule in all_rules():
        lines.append(
            f"    RuleInfo({rule.code!r}, {rule.name!r}, {rule.__module__.rsplit('.', 1)[-1]!r}, "
            f"{tuple(rule.triggers)!r}, {rule.region!r}, {rule.torch_versions!r}, {rule.pyg_versions!r}),")
    lines.append(")")
    return "\n".join(lines) + "\n"


@lru_cache(maxsize=1)
def all_rules() -> tuple[type["Rule"], ...]:
    from gnnlint.rules.base import Rule

    found: list[type[Rule]] = []
    for info in pkgutil.iter_modules(__path__):
        if info.name == "base" or info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and issubclass(value, Rule)
                and value is not Rule
                and value.__module__ == module.__name__
                and value.code
            ):
                found.append(value)
    return tuple(sorted(found, key=lambda r: r.code))


def rule_by_code(code: str) -> "type[Rule] | None":
    for rule in all_rules():
        if rule.code == code:
            return rule
    return None


def all_codes() -> list[str]:
    return [SYNTAX_ERROR_CODE] + [r.code for r in rule_index()]
