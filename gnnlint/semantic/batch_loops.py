"""Functions that hold their own loop over batches: "is this function a
per-step helper, or a pass over a loader of its own?"

A function a training loop calls every step is per-step code (regions.py
marks it hot). A function that iterates a loader of its own --
``validate()``, ``predict(loader)``, a relaxation pass over ``self.relax_loader``
-- is not, even when the training loop calls it (every ``eval_every`` steps):
its per-step code is the body of its own loop, which is hot in its own right
when it runs the model or steps an optimizer. Reporting the code around that
loop as "every batch of the training loop" would be false (what runs once
per evaluation is not per step).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import libcst as cst

from gnnlint.semantic.model import calls_under, wrapped_iterables

if TYPE_CHECKING:
    from gnnlint.context import FileContext, FuncInfo


def iterates_batches(ctx: "FileContext", info: "FuncInfo") -> bool:
    """``info`` holds (in its own body, not a nested def) a ``for`` loop over
    a loader -- also through a name bound to the wrapped loader
    (``iterator = enumerate(valid_loader)``, ``if tty: iterator = tqdm(iterator)``,
    then ``for i, batch in iterator:``)."""
    for loop in ctx.loops:
        if not isinstance(loop, cst.For) or ctx.enclosing_function(loop) is not info:
            continue
        if _over_loader(ctx, loop.iter, loop, 0):
            return True
    return False


def _over_loader(ctx: "FileContext", expr: cst.BaseExpression, at: cst.CSTNode, depth: int) -> bool:
    """Iterating ``expr`` yields a loader's batches: a loader (wrapped in
    ``enumerate`` / ``tqdm`` ...), or a local name every reaching assignment of
    which is one (bounded: a loop header's wrappers, not a program)."""
    for it in wrapped_iterables(expr, containers=False):
        if ctx.looks_like_loader(it):
            return True
        if isinstance(it, cst.Name) and depth < 3:
            reaching = ctx.reaching(it.value, it)
            if reaching and all(b.how == "assign" and b.value is not None and b.value is not expr
                                and _over_loader(ctx, b.value, b.value, depth + 1) for b, _f in reaching):
                return True
    return False


# -- a batch handed to another file's function together with the compiled model ----------
def model_holder(ctx: "FileContext", cls) -> Optional[str]:
    """What compiled model an instance of the local class ``cls`` runs: a call
    ``self.X(...)`` in one of its methods runs compiled code (``self.model``
    built from a registry of self-compiling models, ``torch.compile``d in
    ``__init__``); a description, or None. Memoised per class."""
    memo = ctx.__dict__.setdefault("_model_holders", {})
    if cls in memo:
        return memo[cls]
    memo[cls] = None  # recursion guard
    found = None
    for attr in cls.attrs:  # `self.model = registry.get_model_class(name)(...)` of a self-compiling model
        found = ctx.compiled_instance(cst.Attribute(cst.Name("self"), cst.Name(attr)), cls.attrs[attr][0])
        if found is not None:
            memo[cls] = f"compiled `self.{attr}` ({found})"
            return memo[cls]
    for call in _self_calls(ctx).get(cls, ()):
        found = ctx.compiled_callee(call)
        if found is not None:
            break
    if found is None:  # `self.model = maybe_compile(self.model, ...)`, never called here: a step object runs it
        found = _compiled_self_attrs(ctx).get(cls)
    memo[cls] = found
    return found


def _compiled_self_attrs(ctx: "FileContext") -> dict:
    """{class: what}: the local classes one of whose ``self.<attr>`` holds a compiled
    object (a compile site's ref, an imported builder's compiled result, a compiled
    object another file hands to ``__init__``), though no method of theirs calls it:
    the trainer whose ``train_step`` object (another file) runs ``trainer.model(batch)``."""
    if "_compiled_self_attrs" not in ctx.__dict__:
        refs = [(ref, f"compiled `self.{ref[1]}`") for site_node, _site in ctx.compile_sites
                for ref in ctx.compiled_refs(site_node)]
        refs += ctx.returned_compiled_refs() + ctx.handed_compiled_refs()
        found: dict = {}
        for ref, what in refs:
            if ref[0] == "self":
                found.setdefault(ref[2], what)
        ctx._compiled_self_attrs = found
    return ctx._compiled_self_attrs


def _self_calls(ctx: "FileContext") -> dict:
    """The ``self.X(...)`` calls of the file, by enclosing class: grouped in
    one pass, so asking every class costs one walk of the calls, not one each."""
    if "_self_calls_by_class" not in ctx.__dict__:
        by_class: dict = {}
        for call in ctx.all_calls():
            func = call.func
            if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self":
                by_class.setdefault(ctx.enclosing_class(call), []).append(call)
        ctx._self_calls_by_class = by_class
    return ctx._self_calls_by_class


def _holds_compiled_model(ctx: "FileContext") -> bool:
    """Some local class holds a compiled model (``model_holder``): without one,
    no call hands one over -- answered once per file, before any argument's kind."""
    if "_holds_compiled_model" not in ctx.__dict__:
        ctx._holds_compiled_model = False  # recursion guard
        ctx._holds_compiled_model = _may_hold_compiled(ctx) and \
            any(model_holder(ctx, cls) is not None for cls in list(ctx.class_info.values()))
    return ctx._holds_compiled_model


def _may_hold_compiled(ctx: "FileContext") -> bool:
    """An exact gate for ``model_holder``: every answer it can give starts at
    a call of a compile API in this file (flow.compiled_value's compile calls,
    compiled_holders' ``self.X = torch.compile(self.X)``), a compile site
    (``@torch.compile``, ``model.compile()``: in-place and member compiles), a
    class regions.py marked compiled, or another file's ``compiled_instances``
    fact (instances.compiled_instance). A file with none of them -- most files
    -- holds no compiled model, and asking every ``self.X(...)`` call is skipped."""
    return bool(ctx.compile_sites or ctx.compiled_classes or ctx.project.compiled_instances
                or ctx.project.compiled_returns or ctx.project.compiled_args or ctx.calls_compile_api())


def hands_model(ctx: "FileContext", call: cst.Call) -> Optional[str]:
    """``ml_relax(batch=batch, model=self)``, ``evaluate(trainer, batch)``: a
    call of a function this file does not define, handed a batch together with
    an object that holds a compiled model (``self`` of a trainer whose
    ``self.model`` is compiled, an instance of such a local class). The
    function runs on the batch what it was handed: the model. So does
    ``self._forward(batch)`` in such a class when the class leaves the method
    to its subclasses (it neither defines nor inherits it here). What compiled
    model, or None. Local functions are read, not guessed (steps.py)."""
    from gnnlint.semantic.kinds import BATCH
    from gnnlint.semantic.model import ClassInfo, FuncInfo

    if not call.args or not _holds_compiled_model(ctx) or isinstance(ctx.method_callee(call), FuncInfo):
        return None
    values = [a.value for a in call.args if not a.star]
    if not any(ctx.kind(v) == BATCH for v in values):
        return None
    func = call.func
    if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self":
        # `self._forward(batch)` of a method the class leaves to its subclasses: the holder is `self` --
        # only in the class that stores the compiled model itself, and never an attribute it stores
        # (`self.loader(batch)` may hold anything)
        cls = ctx.enclosing_class(call)
        if cls is not None and func.attr.value not in cls.attrs and any(
                ctx.compiled_instance(cst.Attribute(cst.Name("self"), cst.Name(attr)), cls.attrs[attr][0])
                for attr in cls.attrs):
            values = [func.value] + values
    for value in values:
        if isinstance(value, cst.Name) and value.value == "self":
            cls = ctx.enclosing_class(call)
        elif isinstance(value, (cst.Name, cst.Attribute)):
            cls = ctx.class_of(value, call)
        else:
            continue
        if isinstance(cls, ClassInfo):
            found = model_holder(ctx, cls)
            if found is not None:
                return found
    return None


# -- a loader batch not yet moved -------------------------------------------------------
_MOVES = ("to", "cuda", "to_device", "apply")


def _loop_variable(expr: cst.BaseExpression) -> Optional[cst.Name]:
    """``batch`` of ``batch``, ``batch.sid``, ``batch["sid"]``."""
    while isinstance(expr, (cst.Attribute, cst.Subscript)):
        expr = expr.value
    return expr if isinstance(expr, cst.Name) else None


def _binds(target: cst.BaseExpression, name: str) -> bool:
    if isinstance(target, cst.Name):
        return target.value == name
    if isinstance(target, (cst.Tuple, cst.List)):
        return any(_binds(e.value, name) for e in target.elements)
    return False


def _may_move(ctx: "FileContext", call: cst.Call) -> bool:
    """A call handed the batch may move it (in place, as a PyG batch's
    ``.to()`` does) or run a model on it: the model, a compiled callable, a
    local function (``self._forward(batch)``), a call that names a device."""
    from gnnlint.semantic.model import FuncInfo

    return isinstance(ctx.method_callee(call), FuncInfo) or bool(ctx.compiled_callee(call)) \
        or bool(hands_model(ctx, call)) or ctx.kind(call.func) == "model" \
        or "device" in ctx.module.code_for_node(call).lower() or "cuda" in ctx.module.code_for_node(call)


def fresh_loader_batch(ctx: "FileContext", expr: cst.BaseExpression) -> Optional[str]:
    """``batch.sid.tolist()`` in ``for batch in loader:`` before anything in
    the iteration moves ``batch`` to a device (``batch.to(device)``, ``batch =
    batch.cuda()``) or runs a model on it: a loader collates a fresh batch on
    the host every iteration, so reading it syncs nothing. How, or None."""
    var = _loop_variable(expr)
    if var is None:
        return None
    name = var.value
    loop = next((a for a in ctx.ancestors(expr) if isinstance(a, cst.For) and _binds(a.target, name)), None)
    if loop is None or ctx.enclosing_function(loop) is not ctx.enclosing_function(expr) \
            or not any(ctx.looks_like_loader(it) or _built_loader(ctx, it)
                       for it in wrapped_iterables(loop.iter, containers=False)):
        return None
    reaching = ctx.reaching(name, expr)
    if not reaching or any(b.order != ctx.order.get(loop) for b, _f in reaching):
        return None  # rebound in the loop (`batch = batch.to(device)`)
    at = ctx.order.get(expr, 0)
    for call in calls_under(loop.body):
        if ctx.order.get(call, at) >= at:
            continue
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value in _MOVES and _loop_variable(func.value) is not None \
                and _loop_variable(func.value).value == name:
            return None  # `batch.to(device)` earlier in the iteration (in place for a PyG batch)
        if any(isinstance(_loop_variable(a.value), cst.Name) and _loop_variable(a.value).value == name
               for a in call.args) and _may_move(ctx, call):
            return None  # handed to the model, a local function, or a helper given a device
    return f"`{name}` is a batch the loader made on the host, {FRESH}"


FRESH = "not yet moved to a device"


def _built_loader(ctx: "FileContext", expr: cst.BaseExpression) -> bool:
    """``train_dl`` bound (every reaching assignment) to a ``DataLoader(...)`` / ``NeighborLoader(...)`` call,
    from whatever module (a vendored copy of PyG's, ``data.DataLoader``), not handed a device: it collates
    on the host like the library's."""
    from gnnlint.semantic.vocab import VARIABLE_SIZE_LOADERS

    if not isinstance(expr, cst.Name):
        return False
    reaching = ctx.reaching(expr.value, expr)
    return bool(reaching) and all(
        b.how == "assign" and isinstance(b.value, cst.Call) and ctx.last_part(b.value.func) in VARIABLE_SIZE_LOADERS
        and not any(a.star or a.keyword is not None and "device" in a.keyword.value
                    and a.keyword.value != "pin_memory_device" for a in b.value.args)
        for b, _f in reaching)


def alias_moved(ctx: "FileContext", use: cst.Name, binding) -> bool:
    """``seq = batch["graphs"]`` then ``seq[t] = seq[t].to(device)`` (or ``seq.to(device)``, ``model(seq)``)
    before ``use``: the loader's batch was fresh where the alias was bound, not where it is read."""
    func = ctx.enclosing_function(use)
    start, at = binding.order, ctx.order.get(use, 0)
    for call in calls_under(func.node.body if func is not None else ctx.module):
        if not start < ctx.order.get(call, at) < at:
            continue
        receiver = call.func.value if isinstance(call.func, cst.Attribute) else None
        moved = _loop_variable(receiver) if receiver is not None and call.func.attr.value in _MOVES \
            and not _to_cpu(call) else None
        if moved is not None and moved.value == use.value:
            return True
        if any(_loop_variable(a.value) is not None and _loop_variable(a.value).value == use.value for a in call.args) \
                and _may_move(ctx, call):
            return True
    return False


def _to_cpu(call: cst.Call) -> bool:
    """``x.to("cpu")`` / ``x.to(torch.device("cpu"))``: a copy to the host, not a move to the device."""
    for arg in call.args:
        value = arg.value
        if isinstance(value, cst.Call) and value.args:
            value = value.args[0].value  # torch.device("cpu")
        if isinstance(value, cst.SimpleString) and value.value[1:-1].split(":")[0] == "cpu":
            return True
    return False


def handed_fresh_batch(ctx: "FileContext", call: cst.Call) -> bool:
    """``check_files(batch, cfg["dir"])`` before the iteration moves ``batch``:
    the call is handed the loader's host batch and no tensor, model or other
    batch -- what it reads of them syncs nothing."""
    from gnnlint.semantic.kinds import BATCH, MODEL, TENSOR

    fresh = False
    for arg in call.args:
        if fresh_loader_batch(ctx, arg.value) is not None:
            fresh = True
        elif ctx.kind(arg.value) in (TENSOR, MODEL, BATCH):
            return False
    return fresh


def hands_batch_to_step(ctx: "FileContext", loop: cst.CSTNode, calls: list, runs_step, with_hot_loop: set) -> bool:
    """A loop that hands a batch to a function running the model
    (``out = self._forward(batch)``) is a batch loop itself, even when it also
    calls a pass over a loader of its own (``self.run_relaxations()`` every
    ``eval_every`` steps). A name bound outside the loop is the same graph on
    every iteration (``test(full_data)`` once per epoch beside a ``train()``
    that loops over mini-batches): that hands no batch."""
    from gnnlint.semantic.kinds import _BATCH_NAMES, BATCH
    from gnnlint.semantic.model import FuncInfo

    bound = None
    for call in calls:
        callee = ctx.method_callee(call)
        if not (isinstance(callee, FuncInfo) and callee not in with_hot_loop and runs_step(callee)):
            continue
        for arg in call.args:
            value = arg.value
            if not (ctx.kind(value) == BATCH or isinstance(value, cst.Name) and _BATCH_NAMES.match(value.value)):
                continue
            if isinstance(value, cst.Name):
                bound = _varying(ctx, loop) if bound is None else bound
                if value.value not in bound:
                    continue  # loop-invariant: the whole graph, once per iteration of an epoch loop
            return True
    return False


def _varying(ctx: "FileContext", loop: cst.CSTNode) -> set:
    """Names the loop binds (its target, its body's assignments): compile_facts answers it."""
    from gnnlint.semantic.compile_facts import names_bound_in, varying_names

    return varying_names(ctx, loop) if isinstance(loop, cst.For) else names_bound_in(loop.body)  # type: ignore
