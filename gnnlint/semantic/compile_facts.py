"""How this file's classes and functions are compiled and driven, across files.

Two questions whose answer can live in another file of the project:

- ``class_fullgraph(ctx, cls)``: is the class compiled with
  ``fullgraph=True`` wherever it is compiled? From the compile sites of this
  file that compile it (or a class holding it as a submodule), and from the
  files that compile it (``ProjectFacts.fullgraph``: "fullgraph=True, from
  train.py"). None when no compile site is known (library mode, a class
  compiled through a function).
- ``sweep_of(ctx, func)``: is the local function called once per iteration
  of a loop whose values change the call's arguments, with no
  ``torch._dynamo.reset()`` in that loop? (a trial/fold/config loop: a model
  compiled inside ``func`` from its parameters is a new model per run.) From
  this file's callers and from other files (``ProjectFacts.swept``).

``export(ctx)`` adds what this file tells the files it imports from: the
``fullgraph`` of each compile site whose class lives there (and of the
imported submodules of this file's compiled classes), and the imported
functions it calls in such a loop. Functions of the ``FileContext``,
memoised on it.
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from gnnlint.facts import ImportRef
from gnnlint.semantic.model import ClassInfo, FuncInfo, nodes_under

_RESETS = {"torch._dynamo.reset", "torch.compiler.reset"}
FULLGRAPH_TRUE = "fullgraph=True"
FULLGRAPH_FALSE = "fullgraph=False"


def _memo(ctx, key: tuple, compute):
    store = ctx.__dict__.setdefault("_compile_facts_memo", {})
    if key not in store:
        store[key] = compute()
    return store[key]


# ---------------------------------------------------------------- fullgraph
def class_fullgraph(ctx, cls: ClassInfo) -> Optional[bool]:
    """True: every known compile of ``cls`` (or of a class that holds it)
    passes ``fullgraph=True``; False: one does not; None: none is known."""
    return _memo(ctx, ("fullgraph", cls.name), lambda: _class_fullgraph(ctx, cls, set()))


def _class_fullgraph(ctx, cls: ClassInfo, seen: set) -> Optional[bool]:
    if cls.name in seen:
        return None
    seen.add(cls.name)
    values = [bool(site.fullgraph) for node, site in ctx.compile_sites
              if site.target_kind != "optimizer_step" and ctx.compile_targets.get(node) is cls]
    fact = ctx.project.fullgraph.get(cls.name)
    if fact:
        values.append(fact.startswith(FULLGRAPH_TRUE))
    for parent in _holders(ctx, cls):
        value = _class_fullgraph(ctx, parent, seen)
        if value is not None:
            values.append(value)
    return all(values) if values else None


def _submodule_classes(ctx, cls: ClassInfo) -> list:
    """The classes (local ClassInfo or ImportRef) of the modules ``cls`` builds
    in its attributes, also inside ModuleList / Sequential / ModuleDict."""
    def compute() -> list:
        out = []
        for values in cls.attrs.values():
            for value in ctx._container_elements(values):
                sub = ctx.class_of(value, value)
                if isinstance(sub, (ClassInfo, ImportRef)) and sub is not cls and sub not in out:
                    out.append(sub)
        return out

    return _memo(ctx, ("subs", cls.name), compute)


def _holders(ctx, cls: ClassInfo) -> list[ClassInfo]:
    return [other for other in ctx.class_info.values() if other is not cls and cls in _submodule_classes(ctx, other)]


# ---------------------------------------------------------------- sweeps
def sweep_of(ctx, func: FuncInfo) -> Optional[str]:
    """How ``func`` is called once per iteration of a varying loop with no
    reset ("called in every iteration of `for hidden in ...`"), or None."""
    def compute() -> Optional[str]:
        for call in ctx.callers_of(func, through_aliases=True):
            loop = sweep_loop(ctx, call)
            if loop is not None:
                return f"called in every iteration of `for {ctx.module.code_for_node(loop.target)} in ...`"
        if func.parent is None and func.cls is None:
            return ctx.project.swept.get(func.name)
        return None

    return _memo(ctx, ("sweep", func.node), compute)


def sweep_loop(ctx, call: cst.Call) -> Optional[cst.For]:
    """The innermost ``for`` of the call's function whose body runs the call
    with arguments that change per iteration (the loop variable, or a name
    bound in the loop), when that loop has no ``torch._dynamo.reset()``."""
    child: cst.CSTNode = call
    for anc in ctx.ancestors(call):
        if isinstance(anc, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            return None
        if isinstance(anc, cst.For) and child is anc.body:
            # per loop, not per call: a long loop body holds many calls
            if args_mention(call, varying_names(ctx, anc)):
                return None if resets(ctx, anc.body) else anc
        child = anc
    return None


def target_names(target: cst.BaseExpression) -> set[str]:
    """The names a ``for`` / assignment target binds (``i, (a, b)``)."""
    out = set()
    if isinstance(target, cst.Name):
        out.add(target.value)
    elif isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            out |= target_names(element.value)
    return out


def names_bound_in(body: cst.CSTNode) -> set[str]:
    """Names assigned in a block, not in nested defs (values that may differ per iteration or call)."""
    out: set[str] = set()
    for node in nodes_under(body, into_functions=False):
        if isinstance(node, cst.AssignTarget):
            out.update(target_names(node.target))
        elif isinstance(node, cst.For):
            out.update(target_names(node.target))
    return out


def varying_names(ctx, loop: cst.For) -> set[str]:
    """The names whose values may change per iteration of ``loop`` (per loop, memoised:
    a long loop body holds many calls)."""
    return _memo(ctx, ("loop_names", id(loop)), lambda: target_names(loop.target) | names_bound_in(loop.body))


def args_mention(call: cst.Call, names: set[str]) -> bool:
    """Some argument of ``call`` mentions one of ``names``."""
    return any(isinstance(node, cst.Name) and node.value in names
               for arg in call.args for node in nodes_under(arg))


def resets(ctx, body: cst.CSTNode) -> bool:
    """``body`` calls ``torch._dynamo.reset()`` (each run then starts with fresh compile caches)."""
    return _memo(ctx, ("resets", id(body)),
                 lambda: any(isinstance(node, cst.Call) and ctx.resolve(node.func) in _RESETS
                             for node in nodes_under(body)))


# ---------------------------------------------------------------- export
def export(ctx) -> None:
    """Add this file's ``fullgraph`` and ``swept`` facts to ``ctx.exported``."""
    out = ctx.exported
    for node, site in ctx.compile_sites:
        target = ctx.compile_targets.get(node)
        if isinstance(target, ImportRef) and site.target_kind != "optimizer_step":
            out.fullgraph.append((target, FULLGRAPH_TRUE if site.fullgraph else FULLGRAPH_FALSE))
    # a class's fullgraph comes only from this file's compile sites or a project fact naming a local
    # class (_class_fullgraph): without either, every class answers None -- skip the submodule reads
    told = ctx.compile_sites or any(cls.name in ctx.project.fullgraph for cls in ctx.class_info.values())
    for cls in ctx.class_info.values() if told else ():
        value = class_fullgraph(ctx, cls) if any(isinstance(s, ImportRef) for s in _submodule_classes(ctx, cls)) \
            else None
        if value is None:
            continue
        for sub in _submodule_classes(ctx, cls):
            if isinstance(sub, ImportRef):
                out.fullgraph.append((sub, FULLGRAPH_TRUE if value else FULLGRAPH_FALSE))
    # a sweep is a `for` loop around the call (sweep_loop): a file without one has none
    for call in ctx.all_calls() if any(isinstance(loop, cst.For) for loop in ctx.loops) else ():
        func = call.func
        if isinstance(func, cst.Name) and func.value in ctx.imports and func.value[:1].islower():
            loop = sweep_loop(ctx, call)
            if loop is not None:
                out.swept.append((ctx.imports[func.value], f"called in every iteration of "
                                                           f"`for {ctx.module.code_for_node(loop.target)} in ...`"))
