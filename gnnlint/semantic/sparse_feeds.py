"""Which sparse ``adj_t`` reaches a compiled model, and where was it made? (GNN005)

By PyG's convention ``batch.adj_t`` / ``data.adj_t_dict`` is the sparse
adjacency ``T.ToSparseTensor()`` adds. ``adj_sinks`` lists the reads of such an
attribute this file feeds to a compiled model. The finding belongs where the
adjacency is made (the cases policy): when that transform is not in this
file, the value is followed back -- the loop variable, the loader
(``NeighborLoader(data, ...)``, ``tqdm(loader)``), the callers' arguments for a
parameter, ``data = dataset[0]``, ``data, n = get_dataset(...)`` -- to the
project function another file defines that returned it, and that file is told
(``sparse_fed`` facts: ``ImportRef(module, "get_dataset")`` -> what is fed
where). There ``sparse_fed_functions`` names the told functions and the local
functions they call, and GNN005 reports the ``T.ToSparseTensor()`` built in
them (PyG's ``benchmark/utils``: ``get_dataset`` -> ``get_dataset_with_transformation``).

Gate: only a file with a compile site, or one handed a compiled model, looks
for the sinks to export (the reads of ``adj_t`` come from the per-file attribute index).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import libcst as cst

from gnnlint.facts import ImportRef
from gnnlint.semantic.flow import compiled_callee
from gnnlint.semantic.kinds import SCALAR
from gnnlint.semantic.model import FuncInfo

if TYPE_CHECKING:  # pragma: no cover
    from gnnlint.context import FileContext

ADJ_ATTRS = ("adj_t", "adj_t_dict")
_KEEPS_VALUE = ("to", "cuda", "cpu", "pin_memory", "clone", "contiguous")  # x.to(device) is x
_MAX_DEPTH = 10


def adj_sinks(ctx: "FileContext") -> list[tuple[cst.Call, str, cst.BaseExpression, str]]:
    """``(compiled call, why, the object fed, the attribute)`` for each compiled call fed
    an ``X.adj_t`` / ``X.adj_t_dict`` of this file (one per call): ``model(x, batch.adj_t)``
    (``batch``), or ``model(data)`` whose compiled ``forward(self, data)`` reads
    ``data.adj_t`` (``data``, the argument of the call)."""
    def compute():
        out, seen = [], set()
        for attr in ADJ_ATTRS:
            for node in ctx.attribute_nodes(attr):
                if not ctx.is_read(node) or isinstance(node.value, cst.Name) and node.value.value == "self":
                    continue
                if ctx.kind(node.value) == SCALAR:
                    continue
                sink = ctx.compiled_sink(node)
                if sink is not None:
                    if sink[0] not in seen:
                        seen.add(sink[0])
                        out.append((sink[0], sink[1], node.value, attr))
                    continue
                for call, why, arg in _forward_reads(ctx, node):
                    if call not in seen:
                        seen.add(call)
                        out.append((call, why, arg, attr))
        return out
    return ctx._memoised(("sparse_feeds", "sinks"), compute, [])


def _forward_reads(ctx: "FileContext", node: cst.Attribute) -> list[tuple[cst.Call, str, cst.BaseExpression]]:
    """``data.adj_t`` read in the ``forward(self, data)`` of a class this file compiles: the
    compiled calls of it here and what each passes for ``data``."""
    if not isinstance(node.value, cst.Name):
        return []
    func = ctx.enclosing_function(node)
    if func is None or func.cls is None or func.name != "forward" or node.value.value not in func.params:
        return []
    binding = ctx.feed_binding(node.value.value, node)
    if binding is None or binding.how != "param":
        return []  # rebound in the forward: not the caller's object
    out = []
    for site_node, _site in ctx.compile_sites:
        if ctx.compile_targets.get(site_node) is not func.cls:
            continue
        for ref in ctx.compiled_refs(site_node):
            for call in ctx.ref_calls(ref):
                arg = ctx.arg_for_param(func, call, node.value.value)
                why = compiled_callee(ctx, call) if arg is not None else None
                if why:
                    out.append((call, why, arg))
    return out


def export_sparse_fed(ctx: "FileContext") -> None:
    """Tell the files defining the project functions that returned the data
    whose ``adj_t`` this file feeds to a compiled model (none when this file
    builds the transform itself: it reports it)."""
    if not (ctx.compile_sites or ctx.project.compiled_args or ctx.project.compiled_returns):
        return  # the gate: nothing compiled is called here
    sinks = adj_sinks(ctx)
    if not sinks or any(to_sparse_transform(ctx, call) for call in ctx.all_calls()):
        return
    for call, why, obj, attr in sinks:
        text = f"`{ctx.module.code_for_node(obj)}.{attr}` is fed to {why}"
        for ref in _origins(ctx, obj, obj, 0, set()):
            ctx.exported.sparse_fed.append((ref, text))


def to_sparse_transform(ctx: "FileContext", call: cst.Call) -> bool:
    """``T.ToSparseTensor(...)`` (PyG's transform adding ``adj_t``)."""
    resolved = ctx.resolve(call.func) or ""
    return resolved.startswith("torch_geometric") and resolved.rpartition(".")[2] == "ToSparseTensor"


def sparse_fed_functions(ctx: "FileContext") -> dict[FuncInfo, str]:
    """This file's functions whose result another file feeds as ``adj_t`` to
    a compiled model, and the local functions they call (transitively): -> why."""
    def compute():
        out: dict[FuncInfo, str] = {}
        todo = [(ctx.functions[name], why) for name, why in ctx.project.sparse_fed.items()
                if name in ctx.functions]
        for name, why in ctx.project.sparse_fed.items():  # loaders = {"reddit": load_reddit, ...}
            for value in _table_functions(ctx, name):
                todo.append((value, why))
        while todo:
            func, why = todo.pop()
            if func in out:
                continue
            out[func] = why
            for call in func.calls:
                callee = ctx.local_callee(call)
                if isinstance(callee, FuncInfo) and callee not in out:
                    todo.append((callee, why))
        return out
    if not ctx.project.sparse_fed:
        return {}
    return ctx._memoised(("sparse_feeds", "fed"), compute, {})


def _table_functions(ctx: "FileContext", name: str) -> list[FuncInfo]:
    """The local functions a module-level dict ``name`` maps to (``loaders[key]()`` calls one)."""
    if name in ctx.functions:
        return []
    out = []
    for binding in ctx.module_bindings.get(name, ()):
        if binding.how == "assign" and isinstance(binding.value, cst.Dict):
            out += [ctx.functions[e.value.value] for e in binding.value.elements
                    if isinstance(e, cst.DictElement) and isinstance(e.value, cst.Name) and e.value.value in ctx.functions]
    return out


def _origins(ctx: "FileContext", expr: Optional[cst.BaseExpression], at: cst.CSTNode, depth: int,
             seen: set) -> list[ImportRef]:
    """The imported project functions whose result ``expr`` holds (or iterates)."""
    if expr is None or depth > _MAX_DEPTH or id(expr) in seen:
        return []
    seen.add(id(expr))
    if isinstance(expr, cst.Name):
        out = []
        for binding, func in ctx.reaching(expr.value, at):
            if binding.how == "param" and isinstance(func, FuncInfo):
                for call in ctx.callers_of(func, through_aliases=True):
                    out += _origins(ctx, ctx.arg_for_param(func, call, expr.value), call, depth + 1, seen)
            elif binding.how in ("assign", "unpack", "iter", "iter_unpack") and binding.value is not None:
                out += _origins(ctx, binding.value, binding.value, depth + 1, seen)
        return out
    if isinstance(expr, cst.Subscript):  # dataset[0]
        return _origins(ctx, expr.value, expr.value, depth + 1, seen)
    if isinstance(expr, cst.Call):
        ref = ctx._imported_function(expr)
        if ref is not None:
            return [ref]
        table = expr.func.value if isinstance(expr.func, cst.Subscript) else None
        if isinstance(table, cst.Name) and table.value in ctx.imports:  # loaders[name](): an imported table's
            binding = ctx.lookup(table.value, expr)[0]
            ref = ctx.imports[table.value]
            if (binding is None or binding.how == "import") and ref.name[:1].isalpha() and ref.module \
                    and not ref.module.startswith(("torch", "dgl")):
                return [ref]
            return []
        func = expr.func
        if isinstance(func, cst.Attribute) and func.attr.value in _KEEPS_VALUE:
            return _origins(ctx, func.value, func.value, depth + 1, seen)
        first = next((a.value for a in expr.args if a.keyword is None and not a.star), None)
        return _origins(ctx, first, first, depth + 1, seen)  # NeighborLoader(data, ...), tqdm(loader)
    return []
