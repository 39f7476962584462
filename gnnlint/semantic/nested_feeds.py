"""What feeds compiled code deep inside a model? (GNN007 for a compiled submodule, across files)

``@torch.compile`` on a submodule's ``forward`` (or ``self.attn = torch.compile(Attn())`` in a
layer's ``__init__``) has no loader loop of its own: the training script runs the *outer* model on a
loader's batches, and the compiled part sees every batch's sizes (``FastEdgeAttention.forward``
getting dense ``B x Nmax x Nmax`` tensors of each ZINC batch). ``export_nested_fed`` (the file with
the loop) tells the file defining the outer model's class which loader feeds its instances (``fed``
facts keyed by the class name, like a builder's: fed_builders.py); a file receiving such a fact for a
class whose compiled part comes from another file's class hands it on. ``nested_feed`` (the file of the
compile site) turns a fact about a class containing the site's class into a ``LoaderFeed`` for the
site: GNN007 reports the decorator / the compile call, where ``dynamic=True`` goes. A construction
with the switch off (``Net()`` for ``compiled=False``) contains no compiled code and tells nothing.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import libcst as cst

from gnnlint.facts import ImportRef
from gnnlint.semantic.compiled_calls import never_run
from gnnlint.semantic.model import ClassInfo
from gnnlint.semantic.nested_compiled import nested_why, submodule_values, switch_off

if TYPE_CHECKING:  # pragma: no cover
    from gnnlint.context import FileContext
    from gnnlint.semantic.feeds import LoaderFeed

_MAX_DEPTH = 6


def _constructed(ctx: "FileContext"):
    """(target ref, construction call, class) for each ``x = C(...)`` / ``self.m = C(...).to(dev)`` of a
    class whose instances hold compiled code (told, or local)."""
    for node in ctx.preorder:
        if not (isinstance(node, cst.Assign) and isinstance(node.value, cst.Call)):
            continue
        call = node.value
        while isinstance(call.func, cst.Attribute) and call.func.attr.value in ("to", "cuda", "float", "double") \
                and isinstance(call.func.value, cst.Call):
            call = call.func.value  # Net(...).to(device)
        cls = ctx.class_of(call, call)
        if isinstance(cls, ImportRef):
            why = ctx.project.compiled_instances.get(cls.name)
        elif isinstance(cls, ClassInfo):
            why = ctx.self_compiled_why(cls)
        else:
            continue
        if why is None or switch_off(why, call):
            continue
        for target in node.targets:
            ref = ctx._ref_for_target(target.target, node.value)
            if ref is not None:
                yield ref, call, cls


def local_fed(ctx: "FileContext") -> dict:
    """Local class name -> "<Loader>: <how>" for the classes this file runs on a loader's batches."""
    key = ("nested_feeds.local",)
    if key not in ctx._memo:
        out: dict = {}
        if ctx.compile_sites or ctx.project.compiled_instances:
            for ref, _call, cls in _constructed(ctx):
                if isinstance(cls, ClassInfo) and cls.name not in out:
                    feeds = ctx._feeds_from_refs([ref])
                    if feeds:
                        out[cls.name] = f"{feeds[0].loader}: {feeds[0].via}"
        ctx._memo[key] = out
    return ctx._memo[key]


def export_nested_fed(ctx: "FileContext") -> None:
    """Tell the files defining the classes this file feeds (or was told are fed and whose compiled
    part another file's class holds) which loader it is."""
    if not ctx.project.compiled_instances:
        return
    told: set = set()
    for ref, _call, cls in _constructed(ctx):
        if isinstance(cls, ImportRef) and cls.name not in told and cls.name[:1].isupper():
            feeds = ctx._feeds_from_refs([ref])
            if feeds:
                told.add(cls.name)
                ctx.exported.fed.append((cls, f"{feeds[0].loader}: {feeds[0].via}"))
    fed = dict(ctx.project.fed)
    fed.update(local_fed(ctx))
    for name, how in fed.items():
        cls = ctx.classes.get(name)
        if cls is None or nested_why(ctx, cls) is None:
            continue
        for value in submodule_values(ctx, cls):  # a layer imported from another file: hand the fact on
            sub = ctx.class_of(value, value) if isinstance(value, cst.Call) else None
            if isinstance(sub, ImportRef) and sub.name in ctx.project.compiled_instances \
                    and not switch_off(ctx.project.compiled_instances[sub.name], value) and sub.name not in told:
                told.add(sub.name)
                ctx.exported.fed.append((sub, how.split(", from ")[0] + f", running `{name}`"))


def _site_class(ctx: "FileContext", site_node: cst.CSTNode) -> Optional[ClassInfo]:
    """The class whose instances run the site's compiled code: a decorated method's class, or the
    class storing ``torch.compile(Sub())`` in ``self.<attr>``."""
    if isinstance(site_node, cst.Decorator):
        info = ctx.func_info.get(ctx.parent.get(site_node))
        return info.cls if info is not None and info.parent is None else None
    stmt = ctx.parent.get(site_node)
    if isinstance(site_node, cst.Call) and never_run(ctx, site_node):
        return None  # `self.ae.encode(x)` only: the compiled forward never runs
    if isinstance(stmt, cst.Assign) and any(isinstance(t.target, cst.Attribute) and isinstance(t.target.value, cst.Name)
                                            and t.target.value.value == "self" for t in stmt.targets):
        func = ctx.enclosing_function(site_node)
        return func.cls if func is not None else None
    return None


def _contains(ctx: "FileContext", outer: ClassInfo, inner: ClassInfo, depth: int = 0) -> bool:
    if outer is inner or inner in ctx.local_lineage(outer):
        return True
    if depth >= _MAX_DEPTH:
        return False
    for value in submodule_values(ctx, outer):
        sub = ctx.class_of(value, value) if isinstance(value, cst.Call) else None
        if isinstance(sub, ClassInfo) and sub is not outer and not switch_off(nested_why(ctx, sub) or "", value) \
                and _contains(ctx, sub, inner, depth + 1):
            return True
    return False


def nested_feed(ctx: "FileContext", site_node: cst.CSTNode) -> list["LoaderFeed"]:
    """A loader feeding a model that contains this site's compiled code (here or told), as a feed."""
    from gnnlint.semantic.feeds import LoaderFeed

    site_cls = _site_class(ctx, site_node)
    if site_cls is None:
        return []
    fed = dict(ctx.project.fed)
    fed.update(local_fed(ctx))
    for name, how in fed.items():
        outer = ctx.classes.get(name)
        if outer is None or not _contains(ctx, outer, site_cls):
            continue
        loader, _, via = how.partition(": ")
        running = "" if outer is site_cls or ", running `" in via else f", running `{name}`"
        return [LoaderFeed(loader, site_node, via + running, False, (), False)]
    return []
