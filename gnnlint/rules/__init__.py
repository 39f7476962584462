"""Rule registry: every module in this package that defines a Rule subclass.

There is no hand-kept list; adding ``gnnxxx_name.py`` with one ``Rule``
subclass registers it.
"""
from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache

from gnnlint.rules.base import Rule

# GNN000 is produced by the engine itself for files that do not parse.
SYNTAX_ERROR_CODE = "GNN000"
SYNTAX_ERROR_NAME = "syntax-error"


@lru_cache(maxsize=1)
def all_rules() -> tuple[type[Rule], ...]:
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


def rule_by_code(code: str) -> type[Rule] | None:
    for rule in all_rules():
        if rule.code == code:
            return rule
    return None


def all_codes() -> list[str]:
    return [SYNTAX_ERROR_CODE] + [r.code for r in all_rules()]
