"""Which methods of a class another file hands a compiled model does the program run?

``trainer = Trainer(model=torch.compile(model), ...)`` then ``trainer.train()`` in the script: the
script runs ``train`` (and what it calls on ``self``), never ``Trainer.evaluate`` when nothing names
it. The handing file tells the class's file which attributes it reads on the instance it builds
(``instance_methods`` facts: "Class" -> "data_fingerprint,load_checkpoint,train"), or ``*`` when the
instance leaves its hands (passed, returned, stored, ``getattr``): anything may run then.

``export_instance_methods(ctx, call, targets)`` tells it for one construction (handoffs.py, where the
compiled model is handed); ``uncalled_method(ctx, node)`` is the receiving side: ``node`` is in a
method of a told class that neither the told names nor the methods they reach through ``self.<name>``
(dunders always run) reach, so its loops run nothing per step of the compiled program. Only a class
whose bases are this file's own (or none), in a file that compiles nothing itself (an exact, cheap
precondition: a class compiling its own model runs compiled for every constructor, told or not), and
with no ``getattr(self, name)`` dispatch. Asked through ``step_unreached`` (context.py).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import libcst as cst

from gnnlint.facts import ImportRef

if TYPE_CHECKING:
    from gnnlint.context import FileContext
    from gnnlint.semantic.model import ClassInfo

ANY = "*"
_NEUTRAL_BASES = frozenset(("object", "ABC", "Protocol", "Generic"))


def export_instance_methods(ctx: "FileContext", call: cst.Call, targets: list) -> None:
    """``call`` builds an instance of one of ``targets`` (imported classes) with a compiled model."""
    used = _instance_uses(ctx, call)
    for target in targets:
        ctx.exported.instance_methods.append((ImportRef(target.module, target.name, target.level), used))


def _instance_uses(ctx: "FileContext", call: cst.Call) -> str:
    parent = ctx.parent.get(call)
    if isinstance(parent, cst.Attribute) and parent.value is call:
        return parent.attr.value  # `Trainer(model).fit()`
    if isinstance(parent, cst.Expr):
        return ""  # built and dropped: its __init__ only
    if not (isinstance(parent, cst.Assign) and len(parent.targets) == 1
            and isinstance(parent.targets[0].target, cst.Name)):
        return ANY
    name = parent.targets[0].target.value
    func = ctx.enclosing_function(call)
    used: set = set()
    for use in ctx.name_uses(name):
        if func is not None and not any(anc is func.node for anc in ctx.ancestors(use)):
            continue  # another function's own `trainer`
        holder = ctx.parent.get(use)
        if not (isinstance(holder, cst.Attribute) and holder.value is use):
            return ANY  # handed on, returned, stored, `getattr(trainer, name)`
        used.add(holder.attr.value)
    return ",".join(sorted(used))


def uncalled_method(ctx: "FileContext", node: cst.CSTNode) -> bool:
    told = ctx.project.instance_methods
    if not told or ctx.compile_sites:
        return False
    func = ctx.enclosing_function(node)
    while func is not None and func.parent is not None:
        func = func.parent
    if func is None or func.cls is None or func.cls.name not in told:
        return False
    reached = _reached(ctx, func.cls, told[func.cls.name])
    return reached is not None and func.name not in reached


def _reached(ctx: "FileContext", cls: "ClassInfo", told: str) -> Optional[frozenset]:
    def compute():
        names = set(filter(None, told.split(",")))
        if ANY in names:
            return None
        lineage = list(ctx.local_lineage(cls))
        local = {c.name for c in lineage}
        if any(base.split(".")[-1] not in local and base.split(".")[-1] not in _NEUTRAL_BASES
               for c in lineage for base in c.bases):
            return None  # an imported base may call any method (a framework's hooks)
        methods = {}
        for c in reversed(lineage):
            methods.update({f.name: f for f in ctx.func_info.values() if f.cls is c and f.parent is None})
        reached = {n for n in methods if n.startswith("__")} | names
        todo = [n for n in reached if n in methods]
        while todo:
            info = methods[todo.pop()]
            for sub in _self_refs(ctx, info.node):
                if sub is None:
                    return None  # `getattr(self, name)`: any method may run
                if sub not in reached:
                    reached.add(sub)
                    if sub in methods:
                        todo.append(sub)
        return frozenset(reached)
    return ctx._memoised(("instance_methods", cls.name), compute, None)


def _self_refs(ctx: "FileContext", node: cst.CSTNode):
    """The ``self.<name>`` / ``super().<name>`` names read in ``node``; None for ``getattr(self, <not a literal>)``."""
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Attribute):
            value = current.value
            if isinstance(value, cst.Name) and value.value in ("self", "cls") \
                    or isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == "super":
                yield current.attr.value
        elif isinstance(current, cst.Call) and isinstance(current.func, cst.Name) \
                and current.func.value in ("getattr", "hasattr") and len(current.args) >= 2 \
                and isinstance(current.args[0].value, cst.Name) and current.args[0].value.value == "self":
            name = current.args[1].value
            if isinstance(name, cst.SimpleString):
                yield name.evaluated_value
            else:
                yield None
        stack.extend(current.children)
