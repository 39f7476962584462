"""Plain facts shared by the engine, the cache and the FileContext, with no
libcst import: a run whose files all fail the byte prefilter never loads
libcst (the pre-commit case: one small file, a fraction of a second)."""
from __future__ import annotations

import re
from dataclasses import dataclass, field

# Bytes without which a file can have no compiled region of its own:
# `torch.compile(`, `T.compile(model)`, `model.compile()`, `from torch import
# compile`, `c = torch.compile` -- but not `re.compile("...")`.
_COMPILED_RE = re.compile(
    rb"(?<![\w.])(?:torch|torch_geometric)\.compile\b|\.compile\((?!\s*[rbuf]*['\"])"
    rb"|\bimport\b[^\n]*\bcompile\b|\bcompile\w*\s*=|@\w*\.?compile")
# ... or hot loop: an optimizer step, a backward pass, a Lightning step hook,
# or a model run over the batches of a loader.
_HOT_TOKENS = (b".backward(", b".step(", b"_step(")
_LOADER_TOKENS = (b"loader", b"Loader", b"for batch", b"for data", b"for graph")
_MODEL_TOKENS = (b"model", b"Model", b"net", b"Net", b"encoder", b"decoder", b"gnn", b"GNN", b"classifier")
_LIBRARY_TOKENS = (b"forward",)


def may_have_region(data: bytes, region: str, assume_compiled: str = "detected") -> bool:
    """Cheap byte test: can this file (on its own, without facts from other
    files) contain a compiled region, or a hot loop when ``region`` is
    "compiled_or_hot"? False means a rule limited to such regions cannot fire."""
    if b"compile" in data and _COMPILED_RE.search(data):
        return True
    if assume_compiled == "modules" and any(t in data for t in _LIBRARY_TOKENS):
        return True
    if region == "compiled_or_hot":
        if any(t in data for t in _HOT_TOKENS):
            return True
        return any(t in data for t in _LOADER_TOKENS) and any(t in data for t in _MODEL_TOKENS)
    return False


@dataclass(frozen=True)
class ImportRef:
    """A name imported from another module: ``from <level dots><module> import <name>``."""

    module: str
    name: str
    level: int = 0


@dataclass
class ProjectFacts:
    """What other files say about this file's classes and functions.

    Keys are top-level class/function names defined in this file; values are
    the human description used in messages ("compiled in train.py:12").
    """

    compiled: dict[str, str] = field(default_factory=dict)
    hot: dict[str, str] = field(default_factory=dict)

    def is_empty(self) -> bool:
        return not self.compiled and not self.hot


@dataclass
class ExportedFacts:
    """What this file says about names it imports (for the project index)."""

    compiled: list[tuple[ImportRef, str]] = field(default_factory=list)
    hot: list[tuple[ImportRef, str]] = field(default_factory=list)


@dataclass(frozen=True)
class ContextOptions:
    assume_compiled: str = "detected"  # or "modules"
    # Target versions (config/CLI, else installed metadata; None = newest),
    # for rules whose cost depends on them beyond their version range.
    torch_version: "str | None" = None
    pyg_version: "str | None" = None
