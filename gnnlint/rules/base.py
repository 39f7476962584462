"""The Rule base class every rule module subclasses.

A rule is a libcst batchable visitor: all enabled rules walk one parse of a file
together. Rules never derive context themselves; they ask ``self.context`` (a
``FileContext``) whether a node is in a compiled region, a hot loop, whether an
expression is a tensor, what a dotted name resolves to.
"""
from __future__ import annotations

import textwrap
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Literal, Sequence, Union

import libcst as cst

if TYPE_CHECKING:
    from gnnlint.context import FileContext


@dataclass(frozen=True)
class Valid:
    code: str


@dataclass(frozen=True)
class Invalid:
    """An example that must produce exactly ``lines`` findings of this rule.

    ``expected_fix`` is the whole file after applying this rule's fixes (all
    applicabilities), or None when the example does not check a fix.
    """

    code: str
    lines: tuple[int, ...] = (1,)
    expected_fix: str | None = None
    # Options passed to the FileContext (e.g. {"assume_compiled": "modules"}).
    options: tuple[tuple[str, object], ...] = ()


@dataclass(frozen=True)
class NodeEdit:
    """Replace ``node`` by ``replacement`` (a node or source text).

    ``where`` = "before"/"after" inserts the replacement text next to the node
    instead of replacing it (e.g. an import before the first statement).
    """

    node: cst.CSTNode
    replacement: Union[cst.CSTNode, str]
    where: Literal["replace", "before", "after"] = "replace"


@dataclass(frozen=True)
class FixSpec:
    applicability: Literal["safe", "unsafe", "display-only"]
    message: str
    edits: tuple[NodeEdit, ...]


@dataclass
class Report:
    node: cst.CSTNode
    message: str
    fix: FixSpec | None = None
    # None: the rule's default ``severity``.
    severity: str | None = None
    # The loop each of whose iterations runs the reported code (a per-step
    # finding's step loop): verify counts the finding's events per iteration.
    loop: cst.CSTNode | None = None


class Rule(cst.BatchableCSTVisitor):
    code: ClassVar[str] = ""
    name: ClassVar[str] = ""
    summary: ClassVar[str] = ""
    # A file whose bytes contain none of these cannot produce a finding.
    triggers: ClassVar[tuple[bytes, ...]] = ()
    # Where the hazard can only happen: "compiled" (a compiled region),
    # "compiled_or_hot" (a compiled region or a hot loop) or None (anywhere).
    # The engine skips the rule on files that cannot have such a region
    # (see ``facts.possible_regions``), on top of ``triggers``.
    region: ClassVar[str | None] = None
    # Default severity of a finding (``report(severity=...)`` overrides it
    # for one finding): "error" when the code gives wrong results or silently
    # runs eagerly, "warning" for a cost paid on every call (a graph break, a
    # device sync), "info" for a one-off cost (one extra compile).
    severity: ClassVar[str] = "warning"
    # Highest applicability this rule's fixes can have (None: never fixes).
    fix_applicability: ClassVar[str | None] = None
    # Versions in which the hazard exists, as specifier strings such as
    # ">=2.0,<2.4". Empty means every version.
    torch_versions: ClassVar[str] = ""
    pyg_versions: ClassVar[str] = ""
    VALID: ClassVar[Sequence[Valid]] = ()
    INVALID: ClassVar[Sequence[Invalid]] = ()

    def __init__(self, context: "FileContext") -> None:
        super().__init__()
        self.context = context
        self.reports: list[Report] = []

    def report(self, node: cst.CSTNode, message: str, fix: FixSpec | None = None,
               severity: str | None = None, loop: cst.CSTNode | None = None) -> None:
        self.reports.append(Report(node, message, fix, severity, loop))

    @classmethod
    def doc(cls) -> str:
        return textwrap.dedent(cls.__doc__ or "").strip()
