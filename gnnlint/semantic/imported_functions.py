"""Which project function does a compiled name stand for, when another file defines it?

A benchmark or a script compiles a function of its own package::

    import beignet
    self.func = torch.compile(beignet.radius, fullgraph=True)
    # or: from beignet._radius import radius; f = torch.compile(radius)

The body of ``radius`` (in ``_radius.py``, reached through the package's
``__init__``) is then a compiled region. ``imported_function(ctx, expr, at)``
answers the ``ImportRef`` that the defining file is told about (regions.py
exports it as a ``compiled`` fact; that file marks its function), or None:
for a local name, a class (``torch.compile(GCN)`` compiles a constructor,
not a forward), a library (``torch.nn.functional.relu``, ``e3nn.o3.*``),
or a name bound by anything but an import.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import libcst as cst

from gnnlint.facts import ImportRef
from gnnlint.semantic.classes import _LIBRARIES

if TYPE_CHECKING:
    from gnnlint.context import FileContext


def imported_function(ctx: "FileContext", expr: cst.BaseExpression, at: cst.CSTNode) -> Optional[ImportRef]:
    if isinstance(expr, cst.Name):
        ref = ctx.imports.get(expr.value)
        if ref is None or not _function_name(ref.name) or not ref.level and ref.module.split(".")[0] in _LIBRARIES:
            return None
        binding, _ = ctx.lookup(expr.value, at)
        return ref if binding is None or binding.how == "import" else None
    if not (isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name)) \
            or not _function_name(expr.attr.value):
        return None
    owner = expr.value.value  # `beignet.radius` under `import beignet`; `ops.f` under `from pkg import ops`
    binding, _ = ctx.lookup(owner, at)
    if binding is not None and binding.how != "import":
        return None
    ref = ctx.imports.get(owner)
    if ref is not None:
        if not ref.name[:1].islower() or "." in ref.name:
            return None  # `from pkg import Models`: a class's attribute, not a module's function
        module, level = (f"{ref.module}.{ref.name}" if ref.module else ref.name), ref.level
    else:
        module, level = ctx.aliases.get(owner) or "", 0
    if not module or not level and module.split(".")[0] in _LIBRARIES:
        return None
    return ImportRef(module, expr.attr.value, level)


def _function_name(name: str) -> bool:
    return name[:1].islower() and not name.isupper() and "." not in name
