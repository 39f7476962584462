"""Where a module built in ``__init__`` runs: the questions GNN014 asks.

- ``stored_attr``: the ``self.<attr>`` a constructor call ends up in
  (directly, in a ModuleList/Sequential/ModuleDict, appended to one, or via a
  local list or an ``init_conv``-style method that returns it);
- ``attr_uses``: where a compiled method of the class reads ``self.<attr>``,
  and the Python loop each read runs in (dynamo cannot resume a graph break
  inside a loop, so the whole frame runs eagerly — E11f/E11h);
- ``loop_around``: the innermost ``for``/``while`` of the function that
  holds a node;
- ``compiled_constructors``: the constructor calls that ``torch.compile``
  sites compile directly (``torch.compile(GCN(...))``, ``model = GCN(...)`` …
  ``torch.compile(model)`` / ``model.compile()``);
- ``fullgraph_everywhere`` / ``captured_reasons``: whether every compile site
  of the file uses ``fullgraph=True``, and which break reasons the file's
  dynamo config captures (``capture_dynamic_output_shape_ops`` → NZ,
  ``capture_scalar_outputs`` → ITEM).

Every function takes the ``FileContext`` (which exposes each with a one-line
method: rules ask ``ctx.loop_around(node)``); answers are memoised on it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional

import libcst as cst

from gnnlint.semantic import flow
from gnnlint.semantic.model import ClassInfo, FuncInfo, assigned_targets

if TYPE_CHECKING:
    from gnnlint.context import FileContext

_CONTAINERS = {"ModuleList", "Sequential", "ModuleDict", "HeteroConv", "ParameterList"}
_LIST_GROWERS = {"append", "extend", "insert", "add_module"}


@dataclass(frozen=True)
class AttrUse:
    node: cst.CSTNode  # the ``self.<attr>`` read
    func: FuncInfo  # the compiled method it is in
    loop: Optional[cst.CSTNode]  # the For/While it runs in, or None


def _memo(ctx: FileContext, key: tuple, compute):
    store = ctx.__dict__.setdefault("_semantic_layers_memo", {})
    if key not in store:
        store[key] = compute()
    return store[key]


def _self_attr(ctx: FileContext, node: Optional[cst.CSTNode]) -> Optional[str]:
    """``X`` for ``self.X`` (also ``self.X[i]``)."""
    while isinstance(node, cst.Subscript):
        node = node.value
    if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self":
        return node.attr.value
    return None


def stored_attr(ctx: FileContext, call: cst.Call, depth: int = 0) -> Optional[tuple[ClassInfo, str]]:
    """The class and ``self.<attr>`` a constructor call is stored in, or None."""
    cls = ctx.enclosing_class(call)
    func = ctx.enclosing_function(call)
    if cls is None or func is None or depth > 2:
        return None
    node: cst.CSTNode = call
    while True:
        parent = ctx.parent.get(node)
        if parent is None:
            return None
        if isinstance(parent, (cst.Arg, cst.Element, cst.StarredElement, cst.List, cst.Tuple, cst.Set,
                               cst.DictElement, cst.Dict, cst.ListComp, cst.GeneratorExp, cst.SetComp,
                               cst.DictComp, cst.IfExp)):
            if isinstance(parent, (cst.ListComp, cst.GeneratorExp, cst.SetComp)) and parent.elt is not node:
                return None
            if isinstance(parent, cst.DictElement) and parent.value is not node:
                return None
            node = parent
            continue
        if isinstance(parent, cst.Call):
            name = ctx.last_part(parent.func) or ""
            if name in _CONTAINERS:
                node = parent
                continue
            if name in _LIST_GROWERS and isinstance(parent.func, cst.Attribute):
                owner = parent.func.value
                attr = _self_attr(ctx, owner)
                if attr is not None:
                    return cls, attr
                if isinstance(owner, cst.Name):
                    return _local_list_attr(ctx, func, owner.value, cls)
            return None
        if isinstance(parent, cst.AssignTarget):
            return None
        if isinstance(parent, (cst.Assign, cst.AnnAssign, cst.AugAssign)):
            targets = assigned_targets(parent)
            for target in targets:
                attr = _self_attr(ctx, target)
                if attr is not None:
                    return cls, attr
                if isinstance(target, cst.Name):
                    return _local_list_attr(ctx, func, target.value, cls)
            return None
        if isinstance(parent, cst.Return):
            # def init_conv(self, ...): return GCNConv(...)  ->  self.convs.append(self.init_conv(...))
            for use in flow.attribute_nodes(ctx, func.name):
                outer = ctx.parent.get(use)
                if isinstance(outer, cst.Call) and outer.func is use and _self_attr(ctx, use) == func.name:
                    found = stored_attr(ctx, outer, depth + 1)
                    if found is not None:
                        return found
            return None
        return None


def _local_list_attr(ctx: FileContext, func: FuncInfo, name: str, cls: ClassInfo) -> Optional[tuple[ClassInfo, str]]:
    """``convs = []; convs.append(Conv(...)); self.convs = ModuleList(convs)`` -> "convs"."""
    for use in flow.name_uses(ctx, name):
        if ctx.enclosing_function(use) is not func:
            continue
        stmt = ctx.statement_of(use)
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            if isinstance(small, cst.Assign):
                for target in small.targets:
                    attr = _self_attr(ctx, target.target)
                    if attr is not None and _contains(small.value, use):
                        return cls, attr
    return None


def _contains(root: cst.CSTNode, target: cst.CSTNode) -> bool:
    found = [False]

    class _Find(cst.CSTVisitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            if node is target:
                found[0] = True
            return not found[0]

    root.visit(_Find())
    return found[0]


def loop_around(ctx: FileContext, node: cst.CSTNode) -> Optional[cst.CSTNode]:
    """The innermost For/While of the enclosing function that runs ``node``
    once per iteration (its body), or whose ``for`` iterates over ``node``."""
    child = node
    for anc in ctx.ancestors(node):
        if isinstance(anc, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            return None
        if isinstance(anc, cst.For) and (child is anc.body or child is anc.iter):
            return anc
        if isinstance(anc, cst.While) and child is anc.body:
            return anc
        child = anc
    return None


def attr_uses(ctx: FileContext, cls: ClassInfo, attr: str) -> list[AttrUse]:
    """Reads of ``self.<attr>`` in the compiled methods of ``cls``."""
    def compute() -> list[AttrUse]:
        out = []
        for node in flow.attribute_nodes(ctx, attr):
            if _self_attr(ctx, node) != attr or ctx.enclosing_class(node) is not cls:
                continue
            func = ctx.enclosing_function(node)
            if func is None or func.name == "__init__" or ctx.compiled_region(node) is None:
                continue
            parent = ctx.parent.get(node)
            if isinstance(parent, cst.AssignTarget):
                continue
            out.append(AttrUse(node, func, loop_around(ctx, node)))
        return out

    return _memo(ctx, ("uses", cls.name, attr), compute)


def compiled_constructors(ctx: FileContext) -> list[tuple[cst.Call, cst.CSTNode]]:
    """(constructor call, compile site node) for every compile site whose
    target is built by a call in this file."""
    def compute() -> list[tuple[cst.Call, cst.CSTNode]]:
        out = []
        for site_node, _site in ctx.compile_sites:
            target = None
            if isinstance(site_node, cst.Call):
                if ctx.resolve(site_node.func) in ("torch.compile", "torch_geometric.compile"):
                    if site_node.args and site_node.args[0].keyword is None:
                        target = site_node.args[0].value
                elif isinstance(site_node.func, cst.Attribute) and site_node.func.attr.value == "compile":
                    target = site_node.func.value
            ctor = _constructor_of(ctx, target, site_node)
            if ctor is not None:
                out.append((ctor, site_node))
        return out

    return _memo(ctx, ("ctors",), compute)


def constructor_of(ctx: FileContext, expr, at: cst.CSTNode) -> Optional[cst.Call]:
    """The ``Class(...)`` call that built ``expr`` (a name bound to it, through
    ``torch.compile(...)`` and ``.to(...)``), or None."""
    return _constructor_of(ctx, expr, at)


def _constructor_of(ctx: FileContext, expr, at: cst.CSTNode, depth: int = 0) -> Optional[cst.Call]:
    if expr is None or depth > 3:
        return None
    if isinstance(expr, cst.Call):
        name = ctx.last_part(expr.func) or ""
        if name[:1].isupper():
            return expr
        if ctx.resolve(expr.func) in ("torch.compile", "torch_geometric.compile") and expr.args \
                and expr.args[0].keyword is None:  # model = torch.compile(Net())
            return _constructor_of(ctx, expr.args[0].value, at, depth + 1)
        if name == "to" and isinstance(expr.func, cst.Attribute):  # GCN(...).to(device)
            return _constructor_of(ctx, expr.func.value, at, depth + 1)
        return None
    if isinstance(expr, cst.Name):
        binding, _ = ctx.lookup(expr.value, at)
        if binding is not None and binding.how == "assign" and binding.value is not None:
            return _constructor_of(ctx, binding.value, binding.value, depth + 1)
    return None


def fullgraph_everywhere(ctx: FileContext) -> bool:
    """Every compile site of the file passes ``fullgraph=True`` (and there is one)."""
    sites = [site for _node, site in ctx.compile_sites if site.target_kind != "optimizer_step"]
    return bool(sites) and all(site.fullgraph for site in sites)


_CAPTURE = {"capture_dynamic_output_shape_ops": "NZ", "capture_scalar_outputs": "ITEM"}


def captured_reasons(ctx: FileContext) -> frozenset:
    """Break reasons the file's dynamo config turns into captured ops:
    ``torch._dynamo.config.capture_dynamic_output_shape_ops = True`` (NZ),
    ``capture_scalar_outputs = True`` (ITEM), also through
    ``torch._dynamo.config.patch(...)``."""
    def compute() -> frozenset:
        out = set()
        for key, reason in _CAPTURE.items():
            for node in flow.attribute_nodes(ctx, key):
                parent = ctx.parent.get(node)
                if isinstance(parent, cst.AssignTarget):
                    assign = ctx.parent.get(parent)
                    if isinstance(assign, cst.Assign) and isinstance(assign.value, cst.Name) \
                            and assign.value.value == "True":
                        out.add(reason)
        for call in flow.all_calls(ctx):
            if ctx.last_part(call.func) == "patch":
                for arg in call.args:
                    if arg.keyword is not None and arg.keyword.value in _CAPTURE \
                            and isinstance(arg.value, cst.Name) and arg.value.value == "True":
                        out.add(_CAPTURE[arg.keyword.value])
        return frozenset(out)

    return _memo(ctx, ("captured",), compute)
