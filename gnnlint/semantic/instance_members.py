"""Is ``self.<attr>`` of a local class compiled from outside the class?

A script often builds the object, then compiles one of its submodules in
place::

    trainer_model = EncoderTrainer(model, ...)
    trainer_model.model = torch.compile(trainer_model.model, dynamic=True)
    L.Trainer(...).fit(trainer_model)

From then on the class's own ``self.model(...)`` calls run the compiled
module, exactly as if ``__init__`` had assigned ``torch.compile(model)``.
``compiled_member(ctx, cls, attr)`` answers it from the file's compile sites
(a handful), so it costs nothing in files that compile nothing.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import libcst as cst

if TYPE_CHECKING:
    from gnnlint.context import FileContext
    from gnnlint.semantic.model import ClassInfo


def compiled_member(ctx: "FileContext", cls: "ClassInfo", attr: str) -> Optional[str]:
    """``inst.<attr> = torch.compile(...)`` for an instance ``inst`` of ``cls``:
    the compiled target's text, else None."""
    return _members(ctx).get((cls, attr))


def member_calls(ctx: "FileContext") -> dict[int, str]:
    """id(call) -> what it runs, for the ``self.<attr>(...)`` calls of a local
    class whose instance's ``<attr>`` a compile call of this file replaced."""
    out: dict[int, str] = {}
    for (cls, attr), text in _members(ctx).items():
        for method in cls.methods.values():
            for call in method.calls:
                func = call.func
                if isinstance(func, cst.Attribute) and func.attr.value == attr \
                        and isinstance(func.value, cst.Name) and func.value.value == "self":
                    out.setdefault(id(call), f"compiled `{text}`")
    return out


def _members(ctx: "FileContext") -> dict:
    """(local class, attr) -> ``inst.attr`` text, for each compile call assigned
    to an attribute of an instance of a local class (memoised per file)."""
    if "_instance_members" not in ctx.__dict__:
        from gnnlint.semantic.model import ClassInfo

        found: dict = {}
        for site_node, _site in ctx.compile_sites:
            parent = ctx.parent.get(site_node)
            if not (isinstance(parent, cst.Assign) and len(parent.targets) == 1):
                continue
            target = parent.targets[0].target
            if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) \
                    and target.value.value != "self":
                cls = ctx.class_of(target.value, site_node)
                if isinstance(cls, ClassInfo):
                    found.setdefault((cls, target.attr.value), ctx.module.code_for_node(target))
        ctx._instance_members = found
    return ctx._instance_members
