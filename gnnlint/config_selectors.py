"""Rule selection: which codes a list of selectors (``ALL``, a prefix, a
code) enables, ruff's way (by specificity, ``ignore`` winning a tie).

Also ``ConfigError``, which every config module raises, and ``known_codes``
(the registry's catalogue; callers look it up through this module so a test
can stand in a catalogue of its own).
"""
from __future__ import annotations

from typing import Iterable

SYNTAX_ERROR_CODE = "GNN000"


class ConfigError(Exception):
    """A problem with configuration; the message names the key, code or file."""


def known_codes() -> list[str]:
    """Every code a selector may name (GNN000 plus the registered rules)."""
    from gnnlint.rules import all_codes

    return list(all_codes())


def _specificity(selector: str) -> int:
    return 0 if selector == "ALL" else len(selector)


def _expand(selector: str, known: Iterable[str]) -> list[str]:
    if selector == "ALL":
        return list(known)
    return [c for c in known if c.startswith(selector)]


def is_valid_selector(selector: str, known: Iterable[str] | None = None) -> bool:
    if selector == "ALL":
        return True
    if not selector:
        return False
    known = known_codes() if known is None else known
    return any(c.startswith(selector) for c in known)


def validate_selectors(
    selectors: Iterable[str], where: str, known: Iterable[str] | None = None
) -> None:
    """Raise ConfigError for the first selector that names no known code."""
    known = list(known_codes() if known is None else known)
    for sel in selectors:
        if not is_valid_selector(sel, known):
            raise ConfigError(f"unknown rule code or prefix {sel!r} in {where}")


def resolve_codes(
    select: Iterable[str],
    extend_select: Iterable[str] = (),
    ignore: Iterable[str] = (),
    known: Iterable[str] | None = None,
    *,
    keep_syntax_error: bool = True,
    initial: Iterable[str] = (),
) -> set[str]:
    """Enabled codes for these selectors, ruff's way.

    Selectors are applied from least to most specific (``ALL`` < ``GNN`` <
    ``GNN0`` < ... < ``GNN001``); at each level the selects are applied and
    then the ignores, so the more specific selector wins and a tie goes to
    ignore. GNN000 (syntax-error) stays on unless ignored by its exact code.
    """
    known = list(known_codes() if known is None else known)
    select, extend_select, ignore = list(select), list(extend_select), list(ignore)
    validate_selectors(select, "'select'", known)
    validate_selectors(extend_select, "'extend-select'", known)
    validate_selectors(ignore, "'ignore'", known)
    chosen = select + extend_select
    # ``initial``: the codes an earlier layer enabled (its ignores of GNN000 included)
    state: dict[str, bool] = {c: True for c in initial}
    initial = set(initial)
    if initial and SYNTAX_ERROR_CODE not in initial and SYNTAX_ERROR_CODE not in chosen:
        state[SYNTAX_ERROR_CODE] = False
        ignore = ignore + [SYNTAX_ERROR_CODE]
    for level in sorted({_specificity(s) for s in chosen + ignore}):
        for sel in chosen:
            if _specificity(sel) == level:
                for code in _expand(sel, known):
                    state[code] = True
        for sel in ignore:
            if _specificity(sel) == level:
                for code in _expand(sel, known):
                    state[code] = False
    enabled = {c for c, on in state.items() if on}
    if keep_syntax_error and SYNTAX_ERROR_CODE not in ignore:
        enabled.add(SYNTAX_ERROR_CODE)
    return enabled


# --------------------------------------------------------------------------
# Loading
