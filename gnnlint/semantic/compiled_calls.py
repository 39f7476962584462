"""Which calls run what this compile call compiles, and what do they pass?

The one module for both answers (it was entry_calls.py, and the walk in
compiled_overrides.with_passed): ``entry_calls(ctx, site)`` -- every call of an
assigned compiled holder, or None -- and ``ref_calls_passed(ctx, site)`` -- what
the calls of the compiled refs give, following hand-offs into local functions
(``ctx.passed_spec`` per call, optional_inputs.py), ``*`` when unknown.


A script compiles a model whose class lives in another file and runs it
itself::

    trainer_model = EncoderTrainer(model, args)
    trainer_model.model = torch.compile(trainer_model.model)
    ...
    class EncoderTrainer(L.LightningModule):
        def training_step(self, batch, i):
            pred = self.model(batch, batch.x, batch.edge_index)   # no `pos_mask`

The class's ``forward(self, data, x, edge_index, pos_mask=None)`` keeps an
optional input for another program that runs it eagerly; compiled, it never
gets it, so ``if pos_mask is not None:`` never runs compiled. The defining file
learns that from the ``compiled_passed`` facts (optional_inputs.py) -- but only
if this file can name every call of the compiled object. ``entry_calls(ctx,
site)`` answers them, or None when the compiled object may be run elsewhere:
held by a name, ``self.<attr>`` of the class compiling it, or ``inst.<attr>`` of
a local class instance (instance_members.py), every read of the holder after
the compile must be a call of it (``m(...)``, ``m.forward(...)``) or an
attribute access on the wrapper (``m.eval()``, ``m.parameters()``: they do not
run the compiled forward); a holder passed on, returned, aliased or stored
elsewhere, an instance handed to a project function, or a holder object of
another class with the same attribute name: None.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import libcst as cst

from gnnlint.semantic.kinds import _MODEL_METHODS_NON_TENSOR, _MODEL_METHODS_SELF

if TYPE_CHECKING:
    from gnnlint.context import FileContext

# Roots whose calls take the holder's instance without calling its attribute themselves
# (``L.Trainer(...).fit(trainer_model)`` runs the module's hooks, which are in this file).
# Methods returning the module itself: their result is the compiled wrapper again.
_RETURN_SELF = frozenset(("to", "cuda", "cpu", "train", "eval", "float", "double", "half", "bfloat16",
                          "requires_grad_", "type", "to_empty", "share_memory"))
_MAX_REFS = 24  # refs followed from one compile site (ref_calls_passed)
# nn.Module's own API: called on the wrapper, it tells nothing about which of the model's methods run
_MODULE_API = frozenset(_MODEL_METHODS_NON_TENSOR | _MODEL_METHODS_SELF | {"forward", "__call__"})
# Functions that take a module without running it (they log it, register hooks, inspect it).
_NOT_RUNNING = frozenset(("wandb.watch", "print", "isinstance", "hasattr", "type", "id", "repr", "str",
                          "builtins.print", "builtins.isinstance", "builtins.hasattr", "builtins.type",
                          "builtins.id", "builtins.repr", "builtins.str"))
_LIBRARY_ROOTS = ("lightning", "pytorch_lightning", "torch", "builtins", "print", "len", "isinstance")


def entry_calls(ctx: "FileContext", site: cst.Call) -> Optional[list]:
    """Every call running the object ``site`` (an assigned ``torch.compile(...)``) compiles, or None."""
    parent = ctx.parent.get(site)
    if not (isinstance(parent, cst.Assign) and len(parent.targets) == 1):
        return None
    target = parent.targets[0].target
    if isinstance(target, cst.Name):
        return _name_calls(ctx, target.value, site)
    if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name):
        if target.value.value == "self":
            cls = ctx.enclosing_class(site)
            return _attr_calls(ctx, target.attr.value, site, cls, None) if cls is not None else None
        cls = ctx.class_of(target.value, site)
        if cls is None or not hasattr(cls, "methods") or not _instance_stays(ctx, target.value.value, site):
            return None
        return _attr_calls(ctx, target.attr.value, site, cls, target.value.value)
    return None


def ref_calls_passed(ctx: "FileContext", site: cst.Call) -> str:
    """What the calls running the object ``site`` compiles give, one ``passed_spec`` per call
    joined by ``|`` (``0|0,reduction``), following its refs into the local functions and
    ``functools.partial`` it is handed to; ``*``: unknown (handed to code not read here)."""
    calls, todo, seen = [], [(ref, 0) for ref in ctx.compiled_refs(site)], 0
    while todo and seen < _MAX_REFS:
        ref, depth = todo.pop()
        seen += 1
        calls += ctx.ref_calls(ref)
        for how, new, call in ctx.ref_passes(ref) if depth < 4 else ((None, None, None),):
            new = new if how == "ref" else _partial_ref(ctx, call, ref)
            if new is None:  # handed to code not read here (or too deep): what it passes is unknown
                return "*"
            todo.append((new, depth + 1))
    return "|".join(ctx.passed_spec(c) for c in calls) if calls and not todo else "*"


def _partial_ref(ctx: "FileContext", call, ref: tuple):
    """``partial(self.update, model, ddp_model=ddp_model)``: the parameter of the
    local function the keyword hands the object to, as a ref; else None."""
    if call is None or ctx.resolve(call.func) != "functools.partial" or not call.args:
        return None
    func = call.args[0].value
    callee = None
    if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self":
        cls = ctx.enclosing_class(call)
        callee = ctx.method_of(cls, func.attr.value) if cls is not None else None
    elif isinstance(func, cst.Name):
        callee = ctx.functions.get(func.value)
    for arg in call.args[1:]:
        if ctx.is_ref_expr(arg.value, ref, arg.value):
            if callee is None or arg.keyword is None or arg.keyword.value not in callee.params:
                return None
            return ("name", arg.keyword.value, callee, -1, None)
    return None


def _call_of(ctx: "FileContext", node: cst.CSTNode) -> Optional[cst.Call]:
    """``node(...)`` or ``node.forward(...)``: the call; None otherwise."""
    parent = ctx.parent.get(node)
    if isinstance(parent, cst.Call) and parent.func is node:
        return parent
    if isinstance(parent, cst.Attribute) and parent.value is node and parent.attr.value == "forward":
        outer = ctx.parent.get(parent)
        return outer if isinstance(outer, cst.Call) and outer.func is parent else None
    return None


def _harmless(ctx: "FileContext", node: cst.CSTNode) -> bool:
    """An attribute access on the compiled wrapper other than ``forward`` (``m.parameters()``; a
    ``m.to(device)`` / ``m.eval()`` returning the wrapper only as a statement or back into the holder),
    a truth or identity test of it, or a store into the holder."""
    parent = ctx.parent.get(node)
    if isinstance(parent, cst.Attribute) and parent.value is node and parent.attr.value != "forward":
        call = ctx.parent.get(parent)
        if parent.attr.value not in _RETURN_SELF or not (isinstance(call, cst.Call) and call.func is parent):
            return True
        holder = ctx.parent.get(call)
        if isinstance(holder, cst.Expr):
            return True
        return isinstance(holder, cst.Assign) and len(holder.targets) == 1 \
            and ctx.module.code_for_node(holder.targets[0].target) == ctx.module.code_for_node(node)
    if isinstance(parent, cst.UnaryOperation) and isinstance(parent.operator, cst.Not) \
            or isinstance(parent, (cst.If, cst.While)) and parent.test is node \
            or isinstance(parent, cst.Comparison) and all(isinstance(c.operator, (cst.Is, cst.IsNot))
                                                          for c in parent.comparisons):
        return True  # `if not self.net:` / `net is None`: a module's truth or identity runs no forward
    if isinstance(parent, cst.Arg) and parent.value is node:  # wandb.watch(model): hooks, no forward
        call = ctx.parent.get(parent)
        return isinstance(call, cst.Call) and (ctx.resolve(call.func) or "") in _NOT_RUNNING
    return isinstance(parent, cst.AssignTarget) and parent.target is node


def _before(ctx: "FileContext", node: cst.CSTNode, site: cst.Call) -> bool:
    """``node`` is in the compile's function, in or before its statement (the object is not compiled yet)."""
    if ctx.enclosing_function(node) is not ctx.enclosing_function(site):
        return False
    stmt = ctx.statement_of(site)
    return ctx.order.get(node, 0) <= ctx.order.get(stmt, 0) or any(a is stmt for a in ctx.ancestors(node))


def _name_calls(ctx: "FileContext", name: str, site: cst.Call) -> Optional[list]:
    scope = ctx.enclosing_function(site)
    if scope is None:
        return None  # a module-level name: any importer may run it
    calls = []
    for use in ctx.name_uses(name):
        if ctx.enclosing_function(use) is not scope:
            if any(f is scope for f in _scopes_above(ctx, use)):
                return None  # a closure reads it
            continue
        if not _after_compile_counted(ctx, use, site, calls):
            return None
    return calls


def _after_compile_counted(ctx: "FileContext", node: cst.CSTNode, site: cst.Call, calls: list) -> bool:
    """A read of the holder: before the compile, ignored; a call of it, added to ``calls``; an
    attribute access on the wrapper, harmless. False: any other read (what runs it is unknown)."""
    if _before(ctx, node, site):
        return True
    call = _call_of(ctx, node)
    if call is not None:
        calls.append(call)
        return True
    return _harmless(ctx, node) or _handed_to_unwrap(ctx, node)


def _handed_to_unwrap(ctx: "FileContext", node: cst.CSTNode, depth: int = 0) -> bool:
    """``run(model, ...)`` of a local function that only unwraps its parameter
    (``inner = getattr(model, "_orig_mod", model)``, ``model._orig_mod``, directly or through
    the local functions it hands it to): what runs is the original, eager module."""
    arg = ctx.parent.get(node)
    call = ctx.parent.get(arg) if isinstance(arg, cst.Arg) and arg.value is node and not arg.star else None
    if not isinstance(call, cst.Call) or depth > 3:
        return False
    callee = ctx.local_callee(call)
    if callee is None or not hasattr(callee, "params") or callee.is_async:
        return False
    param = ctx._param_for(callee, call, call.args.index(arg), arg,
                           skip_self=callee.cls is not None and isinstance(call.func, cst.Attribute))
    if param is None or any(b.how != "param" for b in callee.bindings.get(param, [])):
        return False
    uses = [use for use in ctx.name_uses(param) if ctx.enclosing_function(use) is callee]
    return bool(uses) and all(_unwraps(ctx, use) or _harmless(ctx, use) or _handed_to_unwrap(ctx, use, depth + 1)
                              for use in uses)


def _unwraps(ctx: "FileContext", node: cst.CSTNode) -> bool:
    """``getattr(node, "_orig_mod", ...)`` or ``node._orig_mod``: the module ``torch.compile`` wrapped."""
    parent = ctx.parent.get(node)
    if isinstance(parent, cst.Attribute) and parent.value is node:
        return parent.attr.value == "_orig_mod"
    call = ctx.parent.get(parent) if isinstance(parent, cst.Arg) else None
    return isinstance(call, cst.Call) and ctx.resolve(call.func) in ("getattr", "builtins.getattr") \
        and len(call.args) >= 2 and parent in (call.args[0], call.args[-1]) \
        and ctx.literal_value(call.args[1].value) == "_orig_mod"  # the object, or the default: the same


def _scopes_above(ctx: "FileContext", node: cst.CSTNode) -> list:
    out, func = [], ctx.enclosing_function(node)
    while func is not None:
        func = func.parent
        out.append(func)
    return out


def _attr_calls(ctx: "FileContext", attr: str, site: cst.Call, cls, inst: Optional[str]) -> Optional[list]:
    calls = []
    for node in ctx.attribute_nodes(attr):
        owner = node.value
        if isinstance(owner, cst.Name) and owner.value == "self":
            if ctx.enclosing_class(node) is not cls:
                return None  # another class's (or a subclass's) `self.<attr>`: not followed
        elif not (inst is not None and isinstance(owner, cst.Name) and owner.value == inst) \
                and not (inst is None and isinstance(owner, cst.Name) and ctx.class_of(owner, node) is cls):
            return None  # `other.<attr>`: the same object, maybe (another instance of this class: the same)
        if not _after_compile_counted(ctx, node, site, calls):
            return None
    return calls


def _instance_stays(ctx: "FileContext", inst: str, site: cst.Call) -> bool:
    """The instance holding the compiled attribute goes to no project function (only to library
    calls such as ``trainer.fit(inst)``, which run its methods: those are in this file)."""
    scope = ctx.enclosing_function(site)
    for use in ctx.name_uses(inst):
        if ctx.enclosing_function(use) is not scope:
            return False
        parent = ctx.parent.get(use)
        if isinstance(parent, cst.Attribute) and parent.value is use:
            continue
        if isinstance(parent, cst.Arg):
            call = ctx.parent.get(parent)
            if isinstance(call, cst.Call) and _library_call(ctx, call):
                continue
        return False
    return True


def _library_call(ctx: "FileContext", call: cst.Call) -> bool:
    """A call of a library function, or a method of an object a library constructor built
    (``trainer = L.Trainer(...)``; ``trainer.fit(inst)``)."""
    if ctx.local_callee(call) is not None:
        return False
    root = call.func
    while isinstance(root, cst.Attribute):
        root = root.value
    if not isinstance(root, cst.Name):
        return False
    if root.value in ctx.imports or root.value in _LIBRARY_ROOTS:
        return (ctx.resolve(call.func) or root.value).split(".")[0] in _LIBRARY_ROOTS
    reaching = ctx.reaching(root.value, call)
    return bool(reaching) and all(
        isinstance(b.value, cst.Call) and (ctx.resolve(b.value.func) or "").split(".")[0] in _LIBRARY_ROOTS
        for b, _f in reaching)


def never_run(ctx: "FileContext", site: cst.Call) -> bool:
    """The model ``site`` compiles is never run compiled: every read of its holder after the compile
    is an attribute access on the wrapper (``self.ae.encode(x)``, ``self.ae.recon_loss(z)``:
    ``OptimizedModule`` hands back the original module's bound methods, which run eagerly), or
    hands it to a local function that unwraps it (``getattr(model, "_orig_mod", model)``). Not for a
    holder named like a method (``self.forward = torch.compile(self.forward)``: ``self(x)`` runs it)."""
    parent = ctx.parent.get(site)
    if not (isinstance(parent, cst.Assign) and len(parent.targets) == 1):
        return False
    target = parent.targets[0].target
    if isinstance(target, cst.Attribute):
        cls = ctx.enclosing_class(site)
        if target.attr.value == "forward" or (cls is not None and ctx.method_of(cls, target.attr.value) is not None):
            return False
    if entry_calls(ctx, site) != []:
        return False
    # and the wrapper is used: one of the model's own methods is called on it (not a holder left unused)
    text = ctx.module.code_for_node(target)
    reads = ctx.attribute_nodes(target.attr.value) if isinstance(target, cst.Attribute) else \
        ctx.name_uses(target.value) if isinstance(target, cst.Name) else []
    for node in reads:
        if not _before(ctx, node, site) and _handed_to_unwrap(ctx, node):
            return True  # `run(model)` running `getattr(model, "_orig_mod", model)`: the eager module
        outer = ctx.parent.get(node)
        if ctx.module.code_for_node(node) == text and isinstance(outer, cst.Attribute) and outer.value is node \
                and outer.attr.value not in _MODULE_API and not _before(ctx, node, site):
            call = ctx.parent.get(outer)
            if isinstance(call, cst.Call) and call.func is outer:
                return True
    return False
