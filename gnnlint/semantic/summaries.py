"""One file's call-graph summary: per function, what it compiles, whom it calls, from which loop.

The question this module answers: *what does each function of this file do that a
project call graph needs* -- read off the SemanticModel the file's parse already built,
no other analysis asked, so the summary is small, JSON-serialisable and cheap. The
project solver (``gnnlint/call_graph.py``) resolves the refs across files and computes
what reaches compiled code; nothing here looks at another file.

A summary (``summarize(ctx)``) is a dict:

* ``funcs``: qualname -> ``{"cls", "params", "entry", "rc", "cp", "loops", "calls", "span"}``
  - ``entry``: the function itself is compiled (``@torch.compile``, ``f = torch.compile(f)``,
    ``self.forward = torch.compile(self.forward)``);
  - ``rc``: it returns a compiled object (``return torch.compile(m)``, a name holding one);
  - ``rv``: the calls whose results it returns (a factory: ``return Net(cfg)``);
  - ``cp``: parameters it calls (``def train(model): model(x)``): a compiled argument runs here;
  - ``loops``: ``[start, end, parent]`` per loop (parent: the enclosing loop's index or -1);
  - ``calls``: ``[callee, method, loop, args]`` -- ``loop`` the innermost loop whose body
    runs the call once per iteration (-1: once per call), ``args`` {position: "c" | "p:<param>"}
    for compiled arguments and forwarded parameters.
* ``classes``: name -> ``{"bases": [ref], "attrs": {attr: [value]}, "methods": [name]}``.
* ``entries``: compile calls whose target is known: ``["ref", ref]`` a function or class,
  ``["self", cls, method]``, ``["val", value]`` (an instance).
* ``imports``: local name -> ``[module, name, level]`` (re-exports: the solver follows them).

Refs: ``["L", qualname]`` (this file) or ``["I", module, name, level]``. Values:
``["c"]`` compiled (also a container filled with compiled objects: ``models[i] =
torch.compile(m)``, ``models.append(...)``, a comprehension of compiles), ``["v", ref]``
the result of calling ``ref`` (an instance when ``ref`` is a class), ``["t", ref]``
annotated with ``ref``, ``["p", name]`` a parameter. Callees: ``["ref", ref]``,
``["val", value]``, ``["self", cls]`` (a method of the enclosing class), ``["sa", cls, attr]``
(``self.attr``), ``["poss"]`` (receiver unknown: every project method of that name is a
*possible* callee), ``["cfg"]`` (``hydra.utils.instantiate(cfg.trainer, models=models)``: the
``__init__`` of every project class taking those keywords is a *possible* callee).
"""
from __future__ import annotations

from typing import Callable, Optional

import libcst as cst

from gnnlint.semantic.model import ClassInfo, FuncInfo

_LOOPS = (cst.For, cst.While)
_CONFIG_BUILDERS = ("hydra.utils.instantiate", "hydra.utils.call", ".instantiate_from_config")
_SCOPES = (cst.FunctionDef, cst.ClassDef, cst.Lambda)
# builtins / container methods whose name says nothing about a project method
_NOT_PROJECT = frozenset({
    "append", "extend", "items", "keys", "values", "get", "pop", "update", "format", "join", "split",
    "to", "cpu", "cuda", "item", "numpy", "tolist", "detach", "clone", "size", "view", "reshape",
    "sum", "mean", "max", "min", "add", "copy", "zero_grad", "backward", "setdefault", "startswith",
    "endswith", "replace", "strip", "insert", "remove", "clear", "index", "count", "sort",
})


def summarize(ctx, span: Optional[Callable[[cst.CSTNode], Optional[tuple]]] = None) -> dict:
    """The file's summary (see the module docstring). ``span(node)``: a statement's
    (first, last) line, for reports; None leaves positions out."""
    return _Summarizer(ctx, span).run()


class _Summarizer:
    def __init__(self, ctx, span) -> None:
        self.ctx = ctx
        self.span = span
        self.entries: list = []

    def run(self) -> dict:
        ctx = self.ctx
        funcs = {}
        for info in ctx.func_info.values():
            funcs[info.qualname] = self._function(info)
        for call in ctx.compile_calls:
            self._entry(call)
        classes = {name: self._class(cls) for name, cls in ctx.classes.items()}
        imports = {local: [ref.module, ref.name, ref.level] for local, ref in ctx.imports.items()}
        return {"funcs": funcs, "classes": classes, "entries": self.entries, "imports": imports}

    # -- refs and values -------------------------------------------------------------
    def ref(self, expr: cst.BaseExpression, at: cst.CSTNode) -> Optional[list]:
        """The project-level ref a Name / dotted Attribute names (a def, a class, an import)."""
        ctx = self.ctx
        dotted = ctx.dotted(expr)
        if dotted is None:
            return None
        head, _, tail = dotted.partition(".")
        binding, scope = ctx.lookup(head, at)
        if binding is not None and binding.how in ("def", "class") and scope is None:
            return ["L", dotted]
        if binding is None and (head in ctx.functions or head in ctx.classes):
            return ["L", dotted]
        if binding is not None:
            return None
        imported = ctx.imports.get(head)
        if imported is not None:
            name = f"{imported.name}.{tail}" if tail else imported.name
            return ["I", imported.module, name, imported.level]
        full = ctx.aliases.get(head)
        if full is not None and tail and not full.startswith(("torch", "numpy", "torch_geometric")):
            module, _, name = f"{full}.{tail}".rpartition(".")
            return ["I", module, name, 0]
        return None

    def value(self, expr: Optional[cst.BaseExpression], at: cst.CSTNode, depth: int = 0) -> Optional[list]:
        """What a value expression holds, as far as the graph cares."""
        ctx = self.ctx
        if expr is None or depth > 4:
            return None
        if isinstance(expr, cst.Call):
            if ctx.compile_api(expr.func) is not None:
                return ["c"]
            if isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "to":  # m.to(device)
                return self.value(expr.func.value, at, depth + 1)
            target = self.ref(expr.func, at)
            return ["v", target] if target is not None else None
        if isinstance(expr, (cst.List, cst.Tuple)) and expr.elements:
            inner = [self.value(e.value, at, depth + 1) for e in expr.elements]
            return ["c"] if any(v == ["c"] for v in inner) else None
        if isinstance(expr, (cst.ListComp, cst.GeneratorExp)):
            return ["c"] if self.value(expr.elt, expr.elt, depth + 1) == ["c"] else None
        if isinstance(expr, cst.DictComp):
            return ["c"] if self.value(expr.value, expr.value, depth + 1) == ["c"] else None
        if isinstance(expr, cst.Subscript):  # models[i]: an item of a compiled container
            return ["c"] if self.value(expr.value, at, depth + 1) == ["c"] else None
        if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self":
            cls = ctx.enclosing_class(at)
            return ["sa", cls.name, expr.attr.value] if cls is not None else None
        if isinstance(expr, cst.Name):
            return self._name_value(expr.value, at, depth)
        return None

    def _name_value(self, name: str, at: cst.CSTNode, depth: int) -> Optional[list]:
        ctx = self.ctx
        binding, scope = ctx.lookup(name, at)
        if binding is None:
            return None
        if binding.how == "param":
            annotation = binding.node.annotation if isinstance(binding.node, cst.Param) else None
            if annotation is not None:
                typed = self.ref(annotation.annotation, at)
                if typed is not None:
                    return ["t", typed]
            return ["p", name] if scope is not None else None
        if binding.how == "iter":  # for m in models: an element of what is iterated
            value = self.value(binding.value, at, depth + 1)  # a parameter / attribute: its items
            return value if value is not None and value[0] in ("c", "p", "sa") else None
        if binding.how != "assign":
            return None
        if self._filled_with_compiled(name, scope):
            return ["c"]
        return self.value(binding.value, binding.node or at, depth + 1)

    def _filled_with_compiled(self, name: str, scope: Optional[FuncInfo]) -> bool:
        """``models[i] = torch.compile(m)`` / ``models.append(torch.compile(m))`` in the scope."""
        key = ("filled", name, scope.qualname if scope is not None else None)
        memo = self.ctx._memo
        if key not in memo:
            memo[key] = any(self._stores_compiled_item(node, name)
                            for node in (self._scope_nodes(scope)))
        return memo[key]

    def _scope_nodes(self, scope: Optional[FuncInfo]):
        if scope is None:
            return self.ctx.module_calls + [p for c in self.ctx.compile_calls
                                            for p in (self.ctx.parent.get(c),) if isinstance(p, cst.Assign)]
        return scope.calls + [p for c in scope.calls for p in (self.ctx.parent.get(c),) if isinstance(p, cst.Assign)]

    def _stores_compiled_item(self, node: cst.CSTNode, name: str) -> bool:
        ctx = self.ctx
        if isinstance(node, cst.Call):
            func = node.func
            return isinstance(func, cst.Attribute) and func.attr.value in ("append", "insert", "setdefault") \
                and _names(func.value, name) and bool(node.args) \
                and any(isinstance(a.value, cst.Call) and ctx.compile_api(a.value.func) for a in node.args)
        if isinstance(node, cst.Assign) and isinstance(node.value, cst.Call) and ctx.compile_api(node.value.func):
            return any(isinstance(t.target, cst.Subscript) and _names(t.target.value, name) for t in node.targets)
        return False

    # -- functions ---------------------------------------------------------------------
    def _function(self, info: FuncInfo) -> dict:
        ctx = self.ctx
        loops: list = []
        index: dict = {}
        calls = []
        called_params: set = set()
        for call in info.calls:
            chain = self._loop_chain(call, info)
            for loop in reversed(chain):
                if loop not in index:
                    index[loop] = len(loops)
                    parent = chain[chain.index(loop) + 1] if chain.index(loop) + 1 < len(chain) else None
                    loops.append([*(self._lines(loop) or (0, 0)), index.get(parent, -1)])
            record = self._call(call, info, called_params)
            if record is not None:
                record.append(index[chain[0]] if chain else -1)
                record.append(self._arg_flows(call))
                calls.append(record)
        out = {"cls": info.cls.name if info.cls is not None else None,
               "params": list(info.params), "entry": self._decorated(info), "rc": self._returns_compiled(info),
               "cp": sorted(called_params), "loops": loops, "calls": calls, "rv": self._returned_values(info)}
        lines = self._lines(info.node)
        if lines is not None:
            out["span"] = list(lines)
        return out

    def _lines(self, node) -> Optional[tuple]:
        return self.span(node) if self.span is not None else None

    def _loop_chain(self, call: cst.Call, info: FuncInfo) -> list:
        """The loops whose body runs ``call`` per iteration, innermost first (a loop's
        ``iter`` runs once, so a call there is not in that loop)."""
        chain = []
        child: cst.CSTNode = call
        for anc in self.ctx.ancestors(call):
            if anc is info.node or isinstance(anc, _SCOPES):
                break
            if isinstance(anc, _LOOPS) and (child is anc.body or isinstance(anc, cst.While) and child is anc.test):
                chain.append(anc)
            child = anc
        return chain

    def _call(self, call: cst.Call, info: FuncInfo, called_params: set) -> Optional[list]:
        ctx = self.ctx
        func = call.func
        if ctx.compile_api(func) is not None:
            return None
        if (ctx.resolve(func) or "").endswith(_CONFIG_BUILDERS):
            return [["cfg"], None]  # a config-chosen class: its keyword arguments go to some __init__
        if isinstance(func, cst.Name):
            if func.value == "self" and info.cls is not None:
                return [["self", info.cls.name], "__call__"]
            value = self._name_value(func.value, call, 0)
            if value is not None:
                if value[0] == "p":
                    called_params.add(value[1])
                return [["val", value], "__call__"]
            target = self.ref(func, call)
            return [["ref", target], None] if target is not None else None
        if isinstance(func, cst.Subscript):  # models[i](x)
            value = self.value(func, call)
            return [["val", value], "__call__"] if value is not None else None
        if not isinstance(func, cst.Attribute):
            return None
        method = func.attr.value
        owner = func.value
        if isinstance(owner, cst.Name) and owner.value == "self" and info.cls is not None:
            if method in info.cls.attrs or any(method in c.attrs for c in ctx.local_lineage(info.cls)):
                return [["sa", info.cls.name, method], "__call__"]
            return [["self", info.cls.name], method]
        if isinstance(owner, cst.Call) and isinstance(owner.func, cst.Name) and owner.func.value == "super" \
                and info.cls is not None:
            return [["super", info.cls.name], method]
        target = self.ref(func, call)
        if target is not None:
            return [["ref", target], None]
        value = self.value(owner, call)
        if value is not None and value[0] != "p":
            return [["val", value], method]
        if value is not None and method == "forward":
            called_params.add(value[1])
        if method in _NOT_PROJECT or method.startswith("__"):
            return None
        return [["poss"], method, len(call.args)]

    def _arg_flows(self, call: cst.Call) -> dict:
        """Positions of the arguments that are compiled objects or the caller's parameters."""
        out = {}
        for i, arg in enumerate(call.args):
            if arg.star:
                break
            key = arg.keyword.value if arg.keyword is not None else str(i)
            value = self.value(arg.value, call)
            if value == ["c"]:
                out[key] = "c"
            elif value is not None and value[0] == "p":
                out[key] = "p:" + value[1]
            elif value is not None and value[0] in ("sa", "v", "t"):
                out[key] = value  # the solver decides whether it holds compiled code
        return out

    def _decorated(self, info: FuncInfo) -> bool:
        """``@torch.compile`` / ``@torch.compile(fullgraph=True)`` on the def."""
        ctx = self.ctx
        return any(ctx.compile_api(d.decorator) is not None
                   or isinstance(d.decorator, cst.Call) and ctx.compile_api(d.decorator.func) is not None
                   for d in info.node.decorators)

    def _returned_values(self, info: FuncInfo) -> list:
        """What a factory returns, when it builds it (``return Net(cfg)``, ``model = Net(); return model``)."""
        out = []
        for ret in info.returns:
            value = self.value(ret.value, ret) if ret.value is not None else None
            if value is not None and value[0] == "v" and value not in out:
                out.append(value)
        return out[:4]

    def _returns_compiled(self, info: FuncInfo) -> bool:
        return any(ret.value is not None and self.value(ret.value, ret) == ["c"] for ret in info.returns)

    # -- compile entries and classes -------------------------------------------------------
    def _entry(self, call: cst.Call) -> None:
        """What a kept compile call compiles, when the graph can name it."""
        if not call.args or call.args[0].keyword is not None:
            return
        arg = call.args[0].value
        if isinstance(arg, cst.Attribute) and isinstance(arg.value, cst.Name) and arg.value.value == "self":
            cls = self.ctx.enclosing_class(call)
            if cls is not None:
                kind = "self" if arg.attr.value in cls.methods else "sa"
                self.entries.append([kind, cls.name, arg.attr.value])
            return
        if isinstance(arg, cst.Call):
            target = self.ref(arg.func, call)
            if target is not None:
                self.entries.append(["val", ["v", target]])
            return
        target = self.ref(arg, call)
        if target is not None:
            self.entries.append(["ref", target])
            return
        value = self.value(arg, call)
        if value is not None and value[0] in ("v", "t", "sa"):
            self.entries.append(["val", value])

    def _class(self, cls: ClassInfo) -> dict:
        ctx = self.ctx
        bases = []
        for base in cls.bases:
            head = base.split(".")[0]
            if head in ctx.classes:
                bases.append(["L", base])
            elif head in ctx.imports:
                imported = ctx.imports[head]
                tail = base[len(head) + 1:]
                bases.append(["I", imported.module, f"{imported.name}.{tail}" if tail else imported.name,
                              imported.level])
        attrs = {}
        for attr, values in cls.attrs.items():
            kinds = []
            for value in values:
                described = self.value(value, value)
                if described is not None and described not in kinds:  # ["p", x]: an __init__ argument
                    kinds.append(described)
            if self._filled_self_attr(cls, attr):
                kinds.append(["c"])
            if kinds:
                attrs[attr] = kinds
        return {"bases": bases, "attrs": attrs, "methods": sorted(cls.methods)}

    def _filled_self_attr(self, cls: ClassInfo, attr: str) -> bool:
        """``self.models[i] = torch.compile(m)`` / ``self.models.append(torch.compile(m))``."""
        for method in cls.methods.values():
            for node in self._scope_nodes(method):
                if self._stores_compiled_item(node, "self." + attr):
                    return True
        return False


def _names(expr: cst.BaseExpression, name: str) -> bool:
    if name.startswith("self."):
        return isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) \
            and expr.value.value == "self" and expr.attr.value == name[5:]
    return isinstance(expr, cst.Name) and expr.value == name
