"""Where values go and what runs compiled code: "does this call run a compiled
model?" and "does this value reach one?"

- ``compiled_callee(ctx, call)``: whether a call runs a compiled object (a
  name bound to ``torch.compile(...)``, a module compiled in place with
  ``.compile()``, ``self.encoder`` set to a compiled module, a function
  decorated with ``@torch.compile``, or a parameter that a local caller binds
  to one of these), and a description of it for messages; ``compiled_value``
  for any expression.
- ``compiled_sink(ctx, expr)``: follow the value of ``expr`` forward --
  through assignments, transparent methods (``.t()``, ``.to(device)``),
  ``return`` to the callers of a local function, arguments of local
  functions into their parameters, ``obj.attr = value`` -- to the first call
  of a compiled object that receives it.
- ``name_uses(ctx, name)`` / ``attribute_nodes(ctx, attr)`` / ``is_read``:
  the reads of a name or attribute in the file (one index per file).

Functions of the context, computed lazily per question (only GNN005 asks
most of them); FileContext exposes each as a one-line method. Everything here
is conservative: when unsure, the answer is "no".
Who calls a local function and which binding reaches a use are not answered
here: flow asks callers.py and bindings.py (``ctx.callers_of(func, through_aliases=True)``,
``ctx.reaching(name, use, exclusive_only=True)``).
"""
from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Optional

import libcst as cst

from gnnlint.semantic.instance_members import compiled_member
from gnnlint.semantic.model import FuncInfo
from gnnlint.semantic.ref_aliases import choice_values
from gnnlint.semantic.returned_args import result_index, returned_argument
from gnnlint.semantic.syntax import arg_of, param_position
from gnnlint.semantic.vocab import COMPILE_FUNCS

if TYPE_CHECKING:
    from gnnlint.context import FileContext

_INDEX: "weakref.WeakKeyDictionary[FileContext, dict]" = weakref.WeakKeyDictionary()


def _index(ctx: FileContext) -> dict:
    idx = _INDEX.get(ctx)
    if idx is None:
        names: dict[str, list[cst.Name]] = {}
        attrs: dict[str, list[cst.Attribute]] = {}
        for node in ctx.order:
            if isinstance(node, cst.Name):
                names.setdefault(node.value, []).append(node)
            elif isinstance(node, cst.Attribute):
                attrs.setdefault(node.attr.value, []).append(node)
        idx = {"names": names, "attrs": attrs}
        _INDEX[ctx] = idx
    return idx


def all_calls(ctx: FileContext) -> list[cst.Call]:
    return ctx.all_calls()


def attribute_nodes(ctx: FileContext, attr: str) -> list[cst.Attribute]:
    return _index(ctx)["attrs"].get(attr, [])


def is_load(ctx: FileContext, name: cst.Name) -> bool:
    """A Name node that reads a variable (not a target, keyword, attribute part)."""
    parent = ctx.parent.get(name)
    if isinstance(parent, cst.Attribute) and parent.attr is name:
        return False
    if isinstance(parent, (cst.Arg,)) and parent.keyword is name:
        return False
    if isinstance(parent, (cst.Param, cst.FunctionDef, cst.ClassDef, cst.ImportAlias, cst.AsName,
                           cst.Global, cst.Nonlocal)):
        return False
    if isinstance(parent, cst.NamedExpr) and parent.target is name:
        return False
    # assignment / loop targets (possibly inside tuples)
    child: cst.CSTNode = name
    node = parent
    while isinstance(node, (cst.Tuple, cst.List, cst.Element, cst.StarredElement)):
        child, node = node, ctx.parent.get(node)
    if isinstance(node, cst.AssignTarget) and node.target is child:
        return False
    if isinstance(node, (cst.For, cst.CompFor)) and node.target is child:
        return False
    if isinstance(node, (cst.AugAssign, cst.AnnAssign)) and node.target is child:
        return False
    return True


def name_uses(ctx: FileContext, name: str) -> list[cst.Name]:
    return [n for n in _index(ctx)["names"].get(name, []) if is_load(ctx, n)]


_SELF_METHODS = ("to", "cuda", "cpu", "eval", "train", "float", "double", "half", "bfloat16", "requires_grad_")


def _is_compile_call(ctx: FileContext, expr: cst.BaseExpression) -> bool:
    while isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) \
            and expr.func.attr.value in _SELF_METHODS:
        expr = expr.func.value
    return isinstance(expr, cst.Call) and ctx.compile_api(expr.func) is not None


def _conditional(ctx: FileContext, stmt: Optional[cst.CSTNode], scope_node: Optional[cst.CSTNode]) -> bool:
    """Whether a binding statement runs only on some paths of its scope."""
    if stmt is None:
        return False
    for anc in ctx.ancestors(stmt):
        if anc is scope_node:
            return False
        if isinstance(anc, (cst.If, cst.Try, cst.For, cst.While, cst.ExceptHandler, cst.Else)):
            return True
        if isinstance(anc, (cst.FunctionDef, cst.ClassDef)):
            return False
    return False


def _in_place_compiled(ctx: FileContext, text: str) -> bool:
    for _node, site in ctx.compile_sites:
        if site.api == "Module.compile" and site.target == text:
            return True
    return False


def compiled_value(ctx: FileContext, expr: cst.BaseExpression, at: cst.CSTNode, depth: int = 0) -> Optional[str]:
    """Whether ``expr`` (evaluated at ``at``) may be a compiled callable; a
    description (e.g. "compiled `model`") or None."""
    if depth > 4:
        return None
    if _is_compile_call(ctx, expr):
        return "a compiled model"
    if isinstance(expr, cst.Name):
        return _compiled_name(ctx, expr.value, at, depth)
    if isinstance(expr, cst.Subscript):
        return _compiled_entry(ctx, expr, at, depth)
    if isinstance(expr, cst.Attribute):
        text = ctx.module.code_for_node(expr)
        if _in_place_compiled(ctx, text):
            return f"compiled `{text}`"
        if isinstance(expr.value, cst.Name) and expr.value.value == "self":
            cls = ctx.enclosing_class(at)
            if cls is not None:
                for value in ctx.class_attr_values(cls, expr.attr.value):
                    if _is_compile_call(ctx, value):
                        return f"compiled `{text}`"
                member = compiled_member(ctx, cls, expr.attr.value)  # `trainer.model = torch.compile(trainer.model)`
                if member is not None:
                    return f"compiled `{member}`"
    return None


def _compiled_name(ctx: FileContext, name: str, at: cst.CSTNode, depth: int) -> Optional[str]:
    if _in_place_compiled(ctx, name):
        return f"compiled `{name}`"
    binding, func = ctx.lookup(name, at)
    if binding is None:
        if name in ctx.functions and _decorated_compiled(ctx, ctx.functions[name]):
            return f"compiled function `{name}`"
        return None
    bindings = (func.bindings if func is not None else ctx.module_bindings).get(name, [])
    use = ctx.order.get(at, 1 << 60)
    closure = func is not None and not (func.node in ctx.ancestors(at) or func.node is at)
    candidates = [b for b in bindings if closure or b.order < use or b.how == "param"]
    scope_node = func.node if func is not None else None
    for b in reversed(candidates):
        if b.how == "assign" and b.value is not None:
            if _is_compile_call(ctx, b.value):
                return f"compiled `{name}`"
            # `m2 = model`; `eval_model = ema.module if ema is not None else model` (one choice is it)
            choices = [b.value] if isinstance(b.value, cst.Name) else \
                [c for c in choice_values(b.value) if isinstance(c, cst.Name)] \
                if isinstance(b.value, (cst.IfExp, cst.BooleanOperation)) else []
            for choice in choices:
                if choice.value != name:
                    found = _compiled_name(ctx, choice.value, b.node or at, depth + 1)
                    if found:
                        return found
        elif b.how == "def":
            info = ctx.func_info.get(b.node)  # type: ignore[arg-type]
            if info is not None and _decorated_compiled(ctx, info):
                return f"compiled function `{info.qualname}`"
            return None
        elif b.how == "param" and func is not None:
            found = _compiled_param(ctx, func, name, depth)
            if found:
                return found
            return None
        spot = result_index(ctx, b) if b.how in ("assign", "unpack") else None
        if spot is not None:  # `model, ok = setup(model, device)`: the helper gives the model back (returned_args.py)
            arg = returned_argument(ctx, spot[0], spot[1])
            found = compiled_value(ctx, arg, ctx.statement_of(spot[0]) or spot[0], depth + 1) \
                if arg is not None else None  # (read before the statement binds the name again)
            if found:
                return found
            found = _returned_compiled(ctx, spot[0], spot[1], depth)
            if found:  # `model, loader = setup_experiment(cfg)` whose `return model, ...` gives its compiled model
                return found
        if b.how in ("assign", "unpack", "with", "iter", "iter_unpack") and not _conditional(ctx, b.node, scope_node):
            return None  # an unconditional rebinding to something else
    return None


def _returned_compiled(ctx: FileContext, call: cst.Call, index: int, depth: int) -> Optional[str]:
    """A local function ``call`` runs whose ``return`` gives a compiled object at ``index`` (-1: the whole
    result): ``def setup(cfg): ... model = torch.compile(model); return model, loader``."""
    func = ctx.local_callee(call)
    if not isinstance(func, FuncInfo) or not func.returns or depth > 2:
        return None
    for ret in func.returns:
        value = ret.value
        if index >= 0:
            if not isinstance(value, cst.Tuple) or index >= len(value.elements):
                continue
            value = value.elements[index].value
        if value is not None and not isinstance(value, cst.Tuple):
            found = compiled_value(ctx, value, ret, depth + 1)
            if found:
                return found
    return None


def _compiled_entry(ctx: FileContext, expr: cst.Subscript, at: cst.CSTNode, depth: int) -> Optional[str]:
    """``model["gnn"]`` where ``model = {"gnn": torch.compile(gnn), ...}``, the name's only
    binding (a dict literal of models, one compiled): the entry holds the compiled object."""
    key = string_key(expr)
    if key is None or not isinstance(expr.value, cst.Name):
        return None
    binding, func = ctx.lookup(expr.value.value, at)
    bindings = (func.bindings if func is not None else ctx.module_bindings).get(expr.value.value, [])
    if binding is None or len(bindings) != 1 or binding.how != "assign" or not isinstance(binding.value, cst.Dict):
        return None
    for element in binding.value.elements:
        if isinstance(element, cst.DictElement) and isinstance(element.key, cst.SimpleString) \
                and element.key.evaluated_value == key:
            found = compiled_value(ctx, element.value, element.value, depth + 1)
            return f"compiled `{ctx.module.code_for_node(expr)}`" if found else None
    return None


def string_key(expr: cst.Subscript) -> Optional[str]:
    """``"gnn"`` of ``x["gnn"]`` (one plain string index), else None."""
    if len(expr.slice) != 1 or not isinstance(expr.slice[0].slice, cst.Index):
        return None
    value = expr.slice[0].slice.value
    return value.evaluated_value if isinstance(value, cst.SimpleString) \
        and isinstance(value.evaluated_value, str) else None


def _decorated_compiled(ctx: FileContext, info: FuncInfo) -> bool:
    for deco in info.node.decorators:
        target = deco.decorator
        target = target.func if isinstance(target, cst.Call) else target
        if ctx.resolve(target) in COMPILE_FUNCS:
            return True
    return False


def _compiled_param(ctx: FileContext, func: FuncInfo, name: str, depth: int) -> Optional[str]:
    position, kwonly = param_position(func, name)
    for call in ctx.callers_of(func, through_aliases=True):
        arg = None
        for a in call.args:
            if a.keyword is not None and a.keyword.value == name:
                arg = a
        if arg is None and not kwonly and position >= 0:
            arg = arg_of(call, name, position)
        if arg is None:
            continue
        found = compiled_value(ctx, arg.value, call, depth + 1)
        if found:
            return found
    return None


def compiled_callee(ctx: FileContext, call: cst.Call) -> Optional[str]:
    """Whether ``call`` runs a compiled model or function (see module doc)."""
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value in ("forward", "__call__"):
        func = func.value
    if not isinstance(func, (cst.Name, cst.Attribute, cst.Subscript)):
        return None
    found = compiled_value(ctx, func, call)
    if found is None:
        # an instance of a model that compiles itself (instances.py): not a
        # torch.compile wrapper (its state_dict and hooks are the module's), but
        # calling it runs compiled code
        instance = ctx.compiled_instance(func, call)
        if instance is not None:
            return f"compiled `{ctx.module.code_for_node(func)}` ({instance})"
    return found


# Methods that return (a view/copy of) the same kind of value.
TRANSPARENT_METHODS = {
    "t", "to", "cuda", "cpu", "coalesce", "to_symmetric", "fill_diag", "set_diag", "remove_diag",
    "set_value", "set_value_", "fill_value", "fill_value_", "float", "double", "half", "bfloat16",
    "contiguous", "detach", "clone", "requires_grad_", "to_device", "pin_memory", "type",
    "to_sparse_csr", "to_sparse_csc", "to_sparse_coo", "to_sparse", "transpose", "share_memory_",
    "device_as", "type_as",
}


def compiled_sink(ctx: FileContext, expr: cst.BaseExpression,
                  depth: int = 0, seen: Optional[set] = None) -> Optional[tuple[cst.Call, str]]:
    """The first call of a compiled object that receives the value of ``expr``."""
    seen = seen if seen is not None else set()
    if depth > 6 or expr in seen:
        return None
    seen.add(expr)
    cur: cst.CSTNode = expr
    while True:
        parent = ctx.parent.get(cur)
        if parent is None:
            return None
        if isinstance(parent, cst.Arg) and parent.value is cur:
            call = ctx.parent.get(parent)
            if not isinstance(call, cst.Call):
                return None
            why = compiled_callee(ctx, call)
            if why:
                return call, why
            return _into_callee(ctx, call, parent, depth, seen)
        if isinstance(parent, cst.Attribute) and parent.value is cur:
            grand = ctx.parent.get(parent)
            if isinstance(grand, cst.Call) and grand.func is parent and parent.attr.value in TRANSPARENT_METHODS:
                cur = grand
                continue
            return None
        if isinstance(parent, (cst.Element,)) or isinstance(parent, (cst.Tuple, cst.List)):
            cur = parent
            continue
        if isinstance(parent, cst.IfExp) and cur is not parent.test:
            cur = parent
            continue
        if isinstance(parent, (cst.BooleanOperation,)):
            cur = parent
            continue
        if isinstance(parent, cst.Assign) and parent.value is cur:
            for target in parent.targets:
                found = _from_target(ctx, target.target, cur, parent, depth, seen)
                if found:
                    return found
            return None
        if isinstance(parent, cst.AnnAssign) and parent.value is cur:
            return _from_target(ctx, parent.target, cur, parent, depth, seen)
        if isinstance(parent, cst.Return):
            info = ctx.enclosing_function(parent)
            if info is None:
                return None
            for call in ctx.callers_of(info, through_aliases=True):
                found = compiled_sink(ctx, call, depth + 1, seen)
                if found:
                    return found
            return None
        return None


def _contains(node: cst.CSTNode, target: cst.CSTNode) -> bool:
    if node is target:
        return True
    return any(_contains(child, target) for child in node.children)


def _from_target(ctx: FileContext, target: cst.BaseExpression, value: cst.CSTNode, stmt: cst.CSTNode,
                 depth: int, seen: set) -> Optional[tuple[cst.Call, str]]:
    if isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, (cst.Tuple, cst.List)):
        # a, b = x, y: only the matching position carries the value
        for t_el, v_el in zip(target.elements, value.elements):
            if isinstance(t_el.value, (cst.Name, cst.Attribute)) and _has_tracked(ctx, v_el.value, seen):
                found = _follow_binding(ctx, t_el.value, stmt, depth, seen)
                if found:
                    return found
        return None
    if isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            if isinstance(element.value, (cst.Name, cst.Attribute)):
                found = _follow_binding(ctx, element.value, stmt, depth, seen)
                if found:
                    return found
        return None
    if isinstance(target, (cst.Name, cst.Attribute)):
        return _follow_binding(ctx, target, stmt, depth, seen)
    return None


def _has_tracked(ctx: FileContext, node: cst.CSTNode, seen: set) -> bool:
    return any(_contains(node, s) for s in seen if isinstance(s, cst.CSTNode))


def _follow_binding(ctx: FileContext, target: cst.BaseExpression, stmt: cst.CSTNode,
                    depth: int, seen: set) -> Optional[tuple[cst.Call, str]]:
    stmt_order = ctx.order.get(stmt, 0)
    scope = ctx.enclosing_function(stmt)
    if isinstance(target, cst.Name):
        for use in name_uses(ctx, target.value):
            if ctx.order.get(use, 0) <= stmt_order and not _in_loop_with(ctx, use, stmt):
                continue
            # surely this binding's value there (if/else alternatives only)
            if not any(b.node is stmt for b, _ in ctx.reaching(target.value, use, exclusive_only=True)):
                continue
            found = compiled_sink(ctx, use, depth + 1, seen)
            if found:
                return found
        return None
    # obj.attr = value: later reads of the same dotted text in the same function
    text = ctx.module.code_for_node(target)
    for node in attribute_nodes(ctx, target.attr.value):  # type: ignore[union-attr]
        if node is target or ctx.order.get(node, 0) <= stmt_order:
            continue
        if ctx.enclosing_function(node) is not scope and not (
                isinstance(target.value, cst.Name) and target.value.value == "self"):  # type: ignore[union-attr]
            continue
        if ctx.module.code_for_node(node) != text or not is_read(ctx, node):
            continue
        found = compiled_sink(ctx, node, depth + 1, seen)
        if found:
            return found
    return None


def _in_loop_with(ctx: FileContext, use: cst.CSTNode, stmt: cst.CSTNode) -> bool:
    """A use before the binding in the same loop body sees it on the next iteration."""
    for anc in ctx.ancestors(stmt):
        if isinstance(anc, (cst.For, cst.While)):
            return anc in set(ctx.ancestors(use))
        if isinstance(anc, cst.FunctionDef):
            return False
    return False


def is_read(ctx: FileContext, node: cst.Attribute) -> bool:
    parent = ctx.parent.get(node)
    if isinstance(parent, cst.AssignTarget) and parent.target is node:
        return False
    if isinstance(parent, (cst.AugAssign, cst.AnnAssign)) and parent.target is node:
        return False
    return True


def _into_callee(ctx: FileContext, call: cst.Call, arg: cst.Arg, depth: int, seen: set):
    """Follow an argument of a local (not compiled) function into its parameter."""
    try:
        callee = ctx.local_callee(call)
    except RecursionError:  # pragma: no cover
        return None
    if not isinstance(callee, FuncInfo):
        return None
    name = None
    if arg.keyword is not None:
        name = arg.keyword.value
    elif not arg.star:
        index = [a for a in call.args if a.keyword is None].index(arg)
        positional = list(callee.node.params.posonly_params) + list(callee.node.params.params)
        if callee.cls is not None and positional and positional[0].name.value in ("self", "cls"):
            positional = positional[1:]
        if index < len(positional):
            name = positional[index].name.value
    if name is None or name not in callee.params:
        return None
    for use in name_uses(ctx, name):
        if ctx.enclosing_function(use) is not callee and not _nested_in(ctx, use, callee):
            continue
        binding, _ = ctx.lookup(name, use)
        if binding is None or binding.how != "param":
            continue
        found = compiled_sink(ctx, use, depth + 1, seen)
        if found:
            return found
    return None


def _nested_in(ctx: FileContext, node: cst.CSTNode, info: FuncInfo) -> bool:
    return info.node in set(ctx.ancestors(node))
