"""Per-step calls of a base class's method run its subclasses' overrides, in any file.

A training loop calls a method of a project object every step
(``loss_weight = self.taskflow.get_weight(out)``, ``data, f = self.timestep(data, f)``)
whose class is a base the project subclasses: the base's body is often
``raise NotImplementedError`` and the work -- a ``.item()``, a ``.cpu()`` -- sits
in the overrides, which live in other files::

    # taskflow/base.py
    class TaskFlow:
        def get_weight(self, out):
            raise NotImplementedError

    # taskflow/forecasting.py
    class ForecastingTaskFlow(TaskFlow):
        def get_weight(self, out):
            return out["mask"].sum().item()      # per step: a device sync

The loop's file tells the base's file ``TaskFlow.get_weight`` runs per step (a
``stepped`` fact, steps.py); the base's file passes it on to the files whose
import lines name ``TaskFlow`` (``stepped_overrides`` facts), where each class
deriving from it (through local classes too) that overrides ``get_weight`` runs
per step like a stepped method of that file (and tells its own subclasses'
files in turn). Subclasses in the base's own file are its overrides too.

``stepped_items`` is what the per-step questions (hot_loops.py, steps.py) read
instead of ``ProjectFacts.stepped``; gate: with no ``stepped`` or
``stepped_overrides`` fact it is that dict, nothing computed.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from gnnlint.facts import ImportRef

if TYPE_CHECKING:
    from gnnlint.context import FileContext


def stepped_items(ctx: "FileContext") -> dict:
    """``ProjectFacts.stepped`` plus ``"Sub.m": why`` for every class here overriding a
    method ``Base.m`` the project calls per step (Base here or imported), memoised."""
    told = ctx.project.stepped_overrides
    if not told and not ctx.project.stepped:
        return ctx.project.stepped
    key = ("stepped_items",)
    if key not in ctx._memo:
        out = dict(ctx.project.stepped)
        for cls in ctx.classes.values():
            for current in ctx.local_lineage(cls):
                for base in _base_names(ctx, current, cls):
                    for stepped_key, why in list(ctx.project.stepped.items()) + list(told.items()):
                        head, _, method = stepped_key.partition(".")
                        if head == base and method in cls.methods and not method.startswith("__"):
                            out.setdefault(f"{cls.name}.{method}", why)
        ctx._memo[key] = out
    return ctx._memo[key]


def _base_names(ctx: "FileContext", current, cls) -> list[str]:
    """The bases whose per-step methods ``cls`` overrides, as the facts name them: a local
    ancestor (``current`` itself when it is not ``cls``), or an imported base of ``current``."""
    names = [current.name] if current is not cls else []
    for base in current.bases:
        name = base.split(".")[-1]
        if name not in ctx.classes and base.split(".")[0] in ctx.imports:
            names.append(name)
    return names


def export_stepped_overrides(ctx: "FileContext") -> None:
    """``Class.method`` of a class here that runs per step: told to the files whose
    import lines name the class (their subclasses' overrides run per step)."""
    if not ctx.project.stepped and not ctx.project.stepped_overrides:
        return
    for key, why in stepped_items(ctx).items():
        head, _, method = key.partition(".")
        if method and "." not in method and head in ctx.classes and head[:1].isupper():
            ctx.exported.stepped_overrides.append((ImportRef("", key), why))
