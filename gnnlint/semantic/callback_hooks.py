"""Per-step hooks reached through a base class: template methods.

A framework calls a Lightning ``Callback``'s (or ``LightningModule``'s) batch
hooks once per step (frameworks.py). Real callbacks often put the hook in a
project base class and let subclasses fill in what it calls on ``self``::

    # callbacks/base.py
    class OnStepCallback(Callback):
        def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
            self.execute(trainer, pl_module, outputs, batch)      # per step

    # callbacks/plots.py
    class LogFigure(OnStepCallback):
        def execute(self, trainer, pl_module, outputs, batch):   # per step too
            fig = self.get_figure(pl_module, batch, outputs)      # a subclass's override runs
    class LogScatter(LogFigure):
        def get_figure(self, pl_module, batch, outputs):
            x = outputs["pred"].cpu().numpy()                      # a per-step sync

Two questions, both about ``self.<method>(...)`` dispatching to code the
caller's class does not define:

- ``told_step_entry(func)``: the base class lives in another file -- the base
  tells its importers which ``self.`` methods its per-step hooks call
  (``step_hooks`` facts, ``export_step_hooks``); a subclass's method of that
  name is a per-step entry of the same framework.
- ``self_overrides(call)``: in this file, a per-step method calling
  ``self.get_figure(...)`` runs the override of every local subclass, not only
  the base's (often ``raise NotImplementedError``) body.

Gate: nothing is computed unless the file defines a class with local
subclasses (overrides) or the project told a ``step_hooks`` fact (entries).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from gnnlint.facts import ImportRef

if TYPE_CHECKING:
    from gnnlint.context import FileContext
    from gnnlint.semantic.model import FuncInfo


def _self_method_calls(ctx: "FileContext", func: "FuncInfo") -> list[str]:
    """Names of ``self.<name>(...)`` calls made directly in ``func``."""
    out = []
    for call in func.calls:
        f = call.func
        if isinstance(f, cst.Attribute) and isinstance(f.value, cst.Name) and f.value.value == "self" \
                and ctx.enclosing_function(call) is func and f.attr.value not in out:
            out.append(f.attr.value)
    return out


def export_step_hooks(ctx: "FileContext") -> None:
    """A class of this file whose framework per-step hooks call methods on
    ``self``: ``"execute,log_figure: training: why"`` told to the files whose
    import lines name the class (a subclass there overrides them)."""
    entries = ctx.framework_step_entries()
    if not entries:
        return
    what = ctx.lightning_compiled()
    if what is None:
        return  # told once the project's Lightning training is known to run compiled code
    by_class: dict = {}
    for method, entry in entries.items():
        if entry.framework != "lightning" or method.cls is None:
            continue
        names = [n for n in _self_method_calls(ctx, method) if ctx.method_of(method.cls, n) is not None]
        if names:
            by_class.setdefault(method.cls.name, []).append((method.name, entry.role, names))
    for cls_name, hooks in by_class.items():
        names = sorted({n for _hook, _role, ns in hooks for n in ns})
        role = "training" if any(r == "training" for _h, r, _n in hooks) else "evaluation"
        hook = next(h for h, _r, ns in hooks if names[0] in ns)
        ctx.exported.step_hooks.append(
            (ImportRef("", cls_name), f"{','.join(names)}: {role}: `{cls_name}.{hook}` | {what}"))


def told_step_entry(ctx: "FileContext", func: "FuncInfo"):
    """``(role, why)`` when Lightning runs ``func`` once per step because an imported
    base class's per-step hook calls ``self.<func.name>`` (``step_hooks`` facts)."""
    told = ctx.project.step_hooks
    cls = func.cls
    if not told or cls is None or func.parent is not None:
        return None
    for current in ctx.local_lineage(cls):
        for base in current.bases:
            name = base.split(".")[-1]
            if name in ctx.classes or name not in told or base.split(".")[0] not in ctx.imports:
                continue
            names, role, hook, _what = _parts(told[name])
            if func.name in names:
                return role, f"Lightning calls {hook} once per step, which calls `self.{func.name}` " \
                             f"(`{cls.name}.{func.name}`)"
    return None


def told_compiled(ctx: "FileContext") -> "str | None":
    """What compiled code the Lightning training whose hooks a told base
    class owns runs (the base's file knew it: ``lightning_compiled``)."""
    for why in ctx.project.step_hooks.values():
        return _parts(why)[3]
    return None


def _parts(why: str) -> tuple:
    """``"execute,plot: training: `Base.on_train_batch_end` | what, from base.py"`` -> its parts."""
    names, role, rest = (part.strip() for part in why.split(": ", 2))
    hook, _, what = rest.partition(" | ")
    return names.split(","), role, hook, what.rsplit(", from ", 1)[0]


def self_overrides(ctx: "FileContext", call: cst.Call) -> list["FuncInfo"]:
    """``self.m(...)`` in a method of class ``C``: the ``m`` of each local
    subclass of ``C`` that overrides it (the call runs one of them)."""
    f = call.func
    if not (isinstance(f, cst.Attribute) and isinstance(f.value, cst.Name) and f.value.value == "self"):
        return []
    subclasses = local_subclasses(ctx)
    if not subclasses:
        return []
    cls = ctx.enclosing_class(call)
    if cls is None or cls.name not in subclasses:
        return []
    return [sub.methods[f.attr.value] for sub in subclasses[cls.name] if f.attr.value in sub.methods]


def abstract_overrides(ctx: "FileContext", method: "FuncInfo") -> list["FuncInfo"]:
    """``obj.compute(...)`` runs an abstract method (``raise NotImplementedError``) of a local class:
    the instance is one of its local subclasses, so the call runs their overrides."""
    from gnnlint.semantic.compiled_overrides import _abstract

    if method.cls is None or method.parent is not None or method.name.startswith("__") or not _abstract(method):
        return []
    return [sub.methods[method.name] for sub in local_subclasses(ctx).get(method.cls.name, ())
            if method.name in sub.methods and sub.methods[method.name] is not method]


def abstract_callers(ctx: "FileContext", func: "FuncInfo") -> list[cst.Call]:
    """The calls of the abstract method of a local base class that ``func`` overrides: they run
    ``func`` (``self.loss_fn.compute(...)`` with ``self.loss_fn`` a ``LossFunction`` by its
    construction or its annotation)."""
    from gnnlint.semantic.typed_items import annotated_local_class

    if func.cls is None or func.parent is not None or func.name.startswith("__"):
        return []
    base = None
    for cls in ctx.local_lineage(func.cls):
        method = cls.methods.get(func.name) if cls is not func.cls else None
        if method is not None:
            base = method if func in abstract_overrides(ctx, method) else None
            break
    if base is None:
        return []
    found = list(ctx.callers_of(base))
    for call in ctx.all_calls():
        f = call.func
        if isinstance(f, cst.Attribute) and f.attr.value == func.name and not any(c is call for c in found) \
                and annotated_local_class(ctx, f.value, call) is base.cls:
            found.append(call)
    return found


def local_subclasses(ctx: "FileContext") -> dict:
    """Class name -> the local classes deriving from it (directly or not), memoised."""
    key = ("local_subclasses",)
    if key not in ctx._memo:
        out: dict = {}
        for cls in ctx.classes.values():
            for base in ctx.local_lineage(cls):
                if base is not cls:
                    out.setdefault(base.name, []).append(cls)
        ctx._memo[key] = out
    return ctx._memo[key]

