"""``--statistics``: how many findings of each code, like ruff's.

Text (every format but json), most frequent first, then by code::

    3	GNN001	[*] host-sync
    1	GNN007	[ ] compile-not-dynamic

The ``[*]``/``[ ]`` column appears only when some finding has a safe fix.
JSON: ``[{"code", "name", "count", "fixable", "fixable_count"}]``.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TextIO

from gnnlint.finding import Finding


@dataclass(frozen=True)
class Statistic:
    code: str
    name: str
    count: int
    fixable_count: int

    @property
    def fixable(self) -> bool:
        return self.fixable_count > 0


def statistics(findings: list[Finding]) -> list[Statistic]:
    by_code: dict[str, list[Finding]] = {}
    for f in findings:
        by_code.setdefault(f.code, []).append(f)
    stats = [
        Statistic(
            code=code,
            name=group[0].name,
            count=len(group),
            fixable_count=sum(1 for f in group if f.fixable),
        )
        for code, group in by_code.items()
    ]
    stats.sort(key=lambda s: (-s.count, s.code))
    return stats


def render_statistics(findings: list[Finding], out: TextIO, fmt: str) -> None:
    stats = statistics(findings)
    if fmt == "json":
        rows = [
            {
                "code": s.code,
                "name": s.name,
                "count": s.count,
                "fixable": s.fixable,
                "fixable_count": s.fixable_count,
            }
            for s in stats
        ]
        out.write(json.dumps(rows, indent=2, ensure_ascii=False) + "\n")
        return
    if not stats:
        return
    count_width = max(len(str(s.count)) for s in stats)
    code_width = max(len(s.code) for s in stats)
    any_fixable = any(s.fixable for s in stats)
    for s in stats:
        marker = ("[*] " if s.fixable else "[ ] ") if any_fixable else ""
        out.write(f"{s.count:>{count_width}}\t{s.code:<{code_width}}\t{marker}{s.name}\n")
