"""Objects that hold compiled submodules: "does calling a method of this object run compiled code?"

A class often compiles some of its own submodules and runs them from plain
methods: an RL agent compiles its policy and value heads in ``__init__``
(``self.value_net = torch.compile(self.value_net, dynamic=True)``) and a
training loop in another file calls ``agent.get_action_and_value(obs)`` every
step. The object is not a compiled wrapper (``model.encode(x)`` on an
``OptimizedModule`` runs eagerly, bench/evidence/e22): its methods run the
compiled submodules. ``holder_why(cls)`` answers for a local class whose own
methods re-bind ``self.<attr>`` to a compiled ``self.<attr>`` (an attribute
that is not one of its methods: compiling ``self.forward`` is a self-compiled
model, instances.py); ``instances.compiled_instance`` then treats its
instances as compiled (told to other files as ``compiled_instances`` facts),
``handoffs`` tells the file of a function or method such an instance is passed
to (``ppo.train(agent)``: ``compiled_args["PPO.train:0"]``), and the per-step
analysis (steps.py) counts a call of any running method of the handed object
(``HOLDER_MARK`` in what it runs).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import libcst as cst

if TYPE_CHECKING:  # pragma: no cover
    from gnnlint.context import FileContext
    from gnnlint.semantic.model import ClassInfo

HOLDER_MARK = "which compiles its submodule"
HANDED_HOLDER = "compiled submodules of"
# methods of an nn.Module that run no forward (parameters, state, moving, modes)
NOT_RUNNING = frozenset((
    "parameters", "named_parameters", "buffers", "named_buffers", "modules", "named_modules", "children",
    "named_children", "state_dict", "load_state_dict", "to", "cpu", "cuda", "eval", "train", "zero_grad",
    "requires_grad_", "apply", "half", "float", "double", "register_buffer", "register_forward_hook",
    "register_forward_pre_hook", "save", "load", "share_memory", "type",
))


def held_compiled_attrs(ctx: FileContext, cls: ClassInfo) -> list[str]:
    """The attributes ``cls``'s own methods re-bind to their compiled selves
    (``self.head = torch.compile(self.head)``), methods of the class left out."""
    out: list[str] = []
    for call in ctx.compile_calls:
        if not call.args or call.args[0].keyword is not None:
            continue
        target = call.args[0].value
        if not (isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name)
                and target.value.value == "self"):
            continue
        func = ctx.enclosing_function(call)
        if func is None or func.cls is not cls or ctx.method_of(cls, target.attr.value) is not None:
            continue
        stmt = ctx.parent.get(call)
        if isinstance(stmt, cst.Assign) and any(
                isinstance(t.target, cst.Attribute) and isinstance(t.target.value, cst.Name)
                and t.target.value.value == "self" and t.target.attr.value == target.attr.value
                for t in stmt.targets) and target.attr.value not in out:
            out.append(target.attr.value)
    return out


def holder_why(ctx: FileContext, cls: ClassInfo) -> Optional[str]:
    """Why instances of ``cls`` run compiled code from their methods, or None."""
    attrs = held_compiled_attrs(ctx, cls)
    if not attrs:
        return None
    return f"`{cls.name}`, {HOLDER_MARK} " + ", ".join(f"`{a}`" for a in attrs[:3])
