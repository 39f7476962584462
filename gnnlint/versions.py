"""Target torch / torch_geometric versions, without importing either.

Rules declare the versions their hazard exists in as specifiers
(``">=2.0,<2.4"``); the target comes from config/CLI, else the installed
distributions' metadata, else "newest" (every specifier with no upper bound
matches, and one with an upper bound does not).
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Optional

_NUM = re.compile(r"\d+")


def parse_version(text: str) -> tuple[int, ...]:
    """'2.13.0+cpu' -> (2, 13, 0); '2.8' -> (2, 8, 0)."""
    core = text.strip().split("+")[0]
    parts = []
    for piece in core.split(".")[:3]:
        match = _NUM.match(piece)
        parts.append(int(match.group()) if match else 0)
    while len(parts) < 3:
        parts.append(0)
    return tuple(parts)


@lru_cache(maxsize=None)
def installed_version(distribution: str) -> Optional[str]:
    from importlib import metadata  # ~10 ms: only when a file is parsed

    names = {"torch": ("torch",), "torch_geometric": ("torch_geometric", "torch-geometric")}
    for name in names.get(distribution, (distribution,)):
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return None


def matches(spec: str, version: Optional[str]) -> bool:
    """Whether ``version`` satisfies every clause of ``spec`` (comma-separated
    ``<``, ``<=``, ``>``, ``>=``, ``==``, ``!=``). ``version`` None = newest."""
    if not spec.strip():
        return True
    for clause in spec.split(","):
        clause = clause.strip()
        match = re.match(r"(<=|>=|==|!=|<|>)\s*(.+)", clause)
        if not match:
            raise ValueError(f"bad version specifier {clause!r}")
        op, bound_text = match.groups()
        if version is None:
            # "newest": lower bounds hold, upper bounds and pins do not.
            if op in ("<", "<=", "=="):
                return False
            continue
        have, bound = parse_version(version), parse_version(bound_text)
        ok = {
            "<": have < bound, "<=": have <= bound, ">": have > bound,
            ">=": have >= bound, "==": have == bound, "!=": have != bound,
        }[op]
        if not ok:
            return False
    return True


def is_valid_version(text: str) -> bool:
    return bool(re.match(r"^\d+(\.\d+){0,2}([.+a-z0-9]*)$", text.strip()))
