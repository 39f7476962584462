"""The parse-once semantic model of one file (ruff's SemanticModel, LibCST's
ParentNodeProvider + ScopeProvider in one walk).

``SemanticModel`` holds what ``_Collector`` gathers in a single pre-order
walk: ``parent`` and ``order`` of every node, ``preorder``/``postorder``,
imports and aliases, ``FuncInfo``/``ClassInfo`` per def with their bindings,
parameters, calls and returns, module and class-body bindings, loops and the
``torch.compile`` calls. Nothing here interprets values: the questions are in
the sibling modules (see README.md).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Iterator, Optional

import libcst as cst

from gnnlint.facts import ContextOptions, ImportRef, ProjectFacts
from gnnlint.semantic.vocab import COMPILE_FUNCS


# Packages whose top-level module has an attribute of its own name (`torch_geometric.torch_geometric
# is torch_geometric`, `torch.torch is torch`: they import their own submodules).
_SELF_NAMED = frozenset({"torch", "torch_geometric"})
_REGISTERS = ("register_buffer", "register_parameter")  # self.<name> holds the value they are given


@dataclass(eq=False)
class Binding:
    order: int
    value: Optional[cst.BaseExpression]
    # How the bound name relates to ``value``: "assign" (the value itself),
    # "unpack" (one element of the value), "iter" (an element of an iterable),
    # "aug" (``name op= value``), "param", "with", "import", "def", "class".
    how: str
    index: int = -1  # position in a Tuple unpack target, when known
    node: Optional[cst.CSTNode] = None  # the Param/FunctionDef/ClassDef for param/def/class


@dataclass(eq=False)
class FuncInfo:
    node: cst.FunctionDef
    name: str
    qualname: str
    cls: Optional["ClassInfo"]
    parent: Optional["FuncInfo"]
    bindings: dict[str, list[Binding]] = field(default_factory=dict)
    calls: list[cst.Call] = field(default_factory=list)
    returns: list[cst.Return] = field(default_factory=list)
    nested: dict[str, "FuncInfo"] = field(default_factory=dict)
    params: dict[str, cst.Param] = field(default_factory=dict)
    is_async: bool = False


@dataclass(eq=False)
class ClassInfo:
    node: cst.ClassDef
    name: str
    bases: list[str]
    methods: dict[str, FuncInfo] = field(default_factory=dict)
    # self.<attr> = value, from any method.
    attrs: dict[str, list[cst.BaseExpression]] = field(default_factory=dict)
    # names given a non-None value by `self.register_buffer(name, v)` / `register_parameter`: torch takes
    # only a tensor there, so `self.<name>` is one whatever `v` is spelled as (a parameter, a call)
    registered: set = field(default_factory=set)


# Fields that hold only whitespace and punctuation: never worth a visit.
_SKIP_FIELDS = frozenset({
    "lpar", "rpar", "comma", "semicolon", "leading_lines", "lines_after_decorators", "header",
    "footer", "equal", "colon", "lbracket", "rbracket", "lbrace", "rbrace", "newline",
    "trailing_whitespace", "first_line", "empty_lines", "indent", "default_indent",
    "default_newline", "encoding", "has_trailing_newline", "dot", "relative", "star_tok",
})


_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}


def _child_fields(node_type: type) -> tuple[str, ...]:
    names = _CHILD_FIELDS.get(node_type)
    if names is None:
        names = tuple(f.name for f in dataclasses.fields(node_type)
                      if f.name not in _SKIP_FIELDS and "whitespace" not in f.name)
        _CHILD_FIELDS[node_type] = names
    return names


_IS_NODE: dict[type, bool] = {}


def _is_node_type(t: type) -> bool:
    # CSTNode is an ABC: isinstance() on it is slow; a per-type memo is not.
    known = _IS_NODE.get(t)
    if known is None:
        known = _IS_NODE[t] = isinstance(t, type) and issubclass(t, cst.CSTNode)
    return known


def iter_children(node: cst.CSTNode) -> list[cst.CSTNode]:
    """Child nodes in source order, read straight from the dataclass fields.

    libcst's own visitor protocol rebuilds every node it passes (even for a
    read-only visitor); reading the fields is several times faster and is all
    an analysis needs.
    """
    out = []
    is_node = _IS_NODE
    for name in _child_fields(type(node)):
        value = getattr(node, name)
        t = type(value)
        if t is list or t is tuple:
            for item in value:
                it = type(item)
                if is_node.get(it) or (it not in is_node and _is_node_type(it)):
                    out.append(item)
        elif is_node.get(t) or (t not in is_node and _is_node_type(t)):
            out.append(value)
    return out


def walk(root: cst.CSTNode, enter, leave=None) -> None:
    """Depth-first, source-order walk calling ``enter(node, parent)`` and
    ``leave(node)``; iterative, so deeply nested code cannot overflow."""
    stack: list[tuple[cst.CSTNode, Optional[cst.CSTNode], bool]] = [(root, None, False)]
    pop, push = stack.pop, stack.append
    while stack:
        node, parent, done = pop()
        if done:
            if leave is not None:
                leave(node)
            continue
        enter(node, parent)
        push((node, parent, True))
        children = iter_children(node)
        for i in range(len(children) - 1, -1, -1):
            push((children[i], node, False))


def assigned_targets(node: "cst.Assign | cst.AnnAssign") -> list[cst.BaseAssignTargetExpression]:
    """The targets of ``a = b = value`` / ``a: T = value``."""
    return [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]


def keyed_args(call: cst.Call) -> Optional[list[tuple[str, cst.BaseExpression]]]:
    """``call``'s arguments keyed by keyword or by position ("0", "1", ...),
    or None when one is starred (``*args``/``**kw``: what they pass is unknown)."""
    out, position = [], 0
    for arg in call.args:
        if arg.star:
            return None
        if arg.keyword is not None:
            out.append((arg.keyword.value, arg.value))
        else:
            out.append((str(position), arg.value))
            position += 1
    return out


def arg_specs(call: cst.Call) -> Iterator[tuple[str, cst.Arg]]:
    """(spec, argument) for each argument of ``call``: its keyword, or its position
    (``"0"``, ``"1"``...) when positional; ``**kwargs`` skipped; nothing after a ``*args``
    (the positions are unknown from there)."""
    position = 0
    for arg in call.args:
        if arg.star:
            if arg.keyword is None and arg.star == "*":
                return
            continue
        if arg.keyword is not None:
            yield arg.keyword.value, arg
        else:
            yield str(position), arg
            position += 1


def nodes_under(root: cst.CSTNode, into_functions: bool = True):
    """The nodes under ``root``, ``root`` included, in no particular order (a
    plain stack walk: libcst's visitors rebuild every node they pass, ten
    times slower on a long loop body). ``into_functions=False``: not into
    nested defs and lambdas."""
    todo = [root]
    while todo:
        node = todo.pop()
        yield node
        if into_functions or not isinstance(node, (cst.FunctionDef, cst.Lambda)) or node is root:
            todo.extend(iter_children(node))


def wrapped_iterables(expr: cst.BaseExpression, containers: bool = True) -> list[cst.BaseExpression]:
    """``expr`` and what it wraps: the positional arguments of the calls around
    it (``tqdm(enumerate(self.loader))`` -> ..., ``self.loader``) and, with
    ``containers``, the container a subscript takes an item of
    (``loaders[split]`` -> ``loaders``). Bounded: a loop header, not a program."""
    out, stack = [], [expr]
    while stack and len(out) < 16:
        node = stack.pop()
        out.append(node)
        if isinstance(node, cst.Call):
            stack.extend(a.value for a in node.args if a.keyword is None and not a.star)
        elif containers and isinstance(node, cst.Subscript):
            stack.append(node.value)
    return out


def calls_under(block: cst.CSTNode):
    """The calls under ``block`` in source order, not inside nested defs,
    classes or lambdas (what runs when the block runs)."""
    stack = [block]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Call):
            yield node
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        stack.extend(reversed(iter_children(node)))


_OVERLOAD_DECORATORS = ("overload", "_overload", "_overload_method")


def _is_overload_stub(node: cst.FunctionDef) -> bool:
    """``@typing.overload`` / ``@torch.jit._overload``: a signature only, the
    definition that follows is the one that runs."""
    for deco in node.decorators:
        target = deco.decorator
        last = target.attr.value if isinstance(target, cst.Attribute) else \
            target.value if isinstance(target, cst.Name) else None
        if last in _OVERLOAD_DECORATORS:
            return True
    return False


def _define(table: dict, name: str, info: "FuncInfo") -> None:
    """The first definition of ``name`` wins, except over overload stubs."""
    known = table.get(name)
    if known is None or _is_overload_stub(known.node) and not _is_overload_stub(info.node):
        table[name] = info


class _Collector:
    """One walk over the module: parents, order, scopes, bindings, calls."""

    def __init__(self, ctx: "SemanticModel") -> None:
        self.ctx = ctx
        self.scopes: list[object] = []  # FuncInfo | ClassInfo
        self.counter = 0
        self.handlers: dict[type, object] = {}

    def run(self, module: cst.Module) -> None:
        walk(module, self.on_visit, self.on_leave)

    # generic bookkeeping ----------------------------------------------------
    def on_visit(self, node: cst.CSTNode, parent: Optional[cst.CSTNode]) -> None:
        ctx = self.ctx
        if parent is not None:
            ctx.parent[node] = parent
        ctx.order[node] = self.counter
        ctx.preorder.append(node)
        self.counter += 1
        node_type = type(node)
        handler = self.handlers.get(node_type, False)
        if handler is False:
            handler = getattr(self, "visit_" + node_type.__name__, None)
            self.handlers[node_type] = handler
        if handler is not None:
            handler(node)

    def on_leave(self, original_node: cst.CSTNode) -> None:
        self.ctx.postorder.append(original_node)
        if type(original_node) in (cst.FunctionDef, cst.ClassDef):
            self.scopes.pop()

    # scopes ------------------------------------------------------------------
    def _func(self) -> Optional[FuncInfo]:
        for scope in reversed(self.scopes):
            if isinstance(scope, FuncInfo):
                return scope
            return None  # directly in a class body
        return None

    def _bindings(self) -> dict[str, list[Binding]]:
        scope = self.scopes[-1] if self.scopes else None
        if isinstance(scope, FuncInfo):
            return scope.bindings
        if isinstance(scope, ClassInfo):
            return self.ctx.class_body_bindings.setdefault(scope.name, {})
        return self.ctx.module_bindings

    def _bind(self, name: str, binding: Binding) -> None:
        self._bindings().setdefault(name, []).append(binding)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        parent_scope = self.scopes[-1] if self.scopes else None
        cls = parent_scope if isinstance(parent_scope, ClassInfo) else None
        parent_func = parent_scope if isinstance(parent_scope, FuncInfo) else None
        name = node.name.value
        if cls is not None:
            qual = f"{cls.name}.{name}"
        elif parent_func is not None:
            qual = f"{parent_func.qualname}.{name}"
        else:
            qual = name
        info = FuncInfo(node, name, qual, cls, parent_func, is_async=node.asynchronous is not None)
        self._bind(name, Binding(self.ctx.order[node], None, "def", node=node))
        if cls is not None:
            _define(cls.methods, name, info)
        elif parent_func is not None:
            parent_func.nested[name] = info
        else:
            _define(self.ctx.functions, name, info)
        self.ctx.func_info[node] = info
        for param in _all_params(node.params):
            info.params[param.name.value] = param
            info.bindings.setdefault(param.name.value, []).append(
                Binding(-1, None, "param", node=param))
        self.scopes.append(info)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        # `class B(A[T])` (a generic base) derives from `A`
        bases = [self.ctx.dotted(arg.value.value if isinstance(arg.value, cst.Subscript) else arg.value) or ""
                 for arg in node.bases]
        info = ClassInfo(node, node.name.value, bases)
        self._bind(node.name.value, Binding(self.ctx.order[node], None, "class", node=node))
        if not self.scopes:
            self.ctx.classes.setdefault(node.name.value, info)
        self.ctx.class_info[node] = info
        self.scopes.append(info)

    # imports -------------------------------------------------------------------
    def visit_Import(self, node: cst.Import) -> None:
        for alias in node.names:
            full = self.ctx.dotted(alias.name) or ""
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                self.ctx.aliases[alias.asname.name.value] = full
            else:
                top = full.split(".")[0]
                self.ctx.aliases.setdefault(top, top)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if isinstance(node.names, cst.ImportStar):
            if not self.scopes:
                module = self.ctx.dotted(node.module) if node.module is not None else ""
                self.ctx.star_imports.append(ImportRef(module or "", "", len(node.relative)))
            return
        module = self.ctx.dotted(node.module) if node.module is not None else ""
        level = len(node.relative)
        fallback = self._import_fallback(node)
        for alias in node.names:
            name = self.ctx.dotted(alias.name) or ""
            local = name
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                local = alias.asname.name.value
            if fallback and local in self.ctx.imports:
                continue  # `try: from torch_scatter import x` / `except ImportError: from .utils import x`
            if level == 0:
                # `from torch_geometric import torch_geometric` (an editor's auto-import): a package
                # that imports its own submodules holds itself under its name -- the package
                self.ctx.aliases[local] = module if name == module in _SELF_NAMED else \
                    f"{module}.{name}" if module else name
            self.ctx.imports[local] = ImportRef(module or "", name, level)

    def _import_fallback(self, node: cst.ImportFrom) -> bool:
        """An import in an ``except ImportError:`` handler: the fallback of the ``try``'s
        import, which runs wherever the library is installed (the name keeps that import)."""
        parent = self.ctx.parent.get(self.ctx.parent.get(node))
        handler = self.ctx.parent.get(parent) if isinstance(parent, cst.IndentedBlock) else None
        if not isinstance(handler, cst.ExceptHandler) or handler.type is None:
            return False
        text = self.ctx.dotted(handler.type) if not isinstance(handler.type, cst.Tuple) else None
        return text in ("ImportError", "ModuleNotFoundError")

    # bindings -------------------------------------------------------------------
    def visit_Assign(self, node: cst.Assign) -> None:
        order = self.ctx.order[node]
        for target in node.targets:
            self._bind_target(target.target, node.value, order, stmt=node)
        # c = torch.compile  (an alias of a dotted API name, at module level;
        # `limit = torch._dynamo.config.cache_size_limit` reads a value)
        if len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name) and not self.scopes:
            dotted = self.ctx.dotted(node.value)
            if dotted is not None and isinstance(node.value, (cst.Name, cst.Attribute)):
                resolved = self.ctx.resolve_dotted(dotted)
                if resolved and resolved.split(".")[0] in ("torch", "torch_geometric") \
                        and ".config." not in resolved:
                    self.ctx.aliases.setdefault(node.targets[0].target.value, resolved)
            # compile = functools.partial(torch.compile, mode=...): an alias that carries options
            value = node.value
            if isinstance(value, cst.Call) and self.ctx.resolve(value.func) == "functools.partial" and value.args \
                    and value.args[0].keyword is None and self.ctx.resolve(value.args[0].value) in COMPILE_FUNCS:
                name = node.targets[0].target.value
                self.ctx.aliases.setdefault(name, self.ctx.resolve(value.args[0].value) or "torch.compile")
                self.ctx.compile_partials[name] = value

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._bind_target(node.target, node.value, self.ctx.order[node], stmt=node)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.target, cst.Name):
            self._bind(node.target.value, Binding(self.ctx.order[node], node.value, "aug", node=node))

    def visit_For(self, node: cst.For) -> None:
        self.ctx.loops.append(node)
        self._bind_target(node.target, node.iter, self.ctx.order[node], how="iter", stmt=node)

    def visit_While(self, node: cst.While) -> None:
        self.ctx.loops.append(node)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self._bind_target(node.asname.name, None, self.ctx.order[node], how="with")

    def visit_CompFor(self, node: cst.CompFor) -> None:
        self._bind_target(node.target, node.iter, self.ctx.order[node], how="iter", stmt=node)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        if isinstance(node.target, cst.Name):
            self._bind(node.target.value, Binding(self.ctx.order[node], node.value, "assign"))

    def _bind_target(self, target: cst.BaseExpression, value, order: int, how: str = "assign",
                     stmt: Optional[cst.CSTNode] = None, nested: bool = False) -> None:
        if isinstance(target, cst.Name):
            self._bind(target.value, Binding(order, value, how, node=stmt))
        elif isinstance(target, (cst.Tuple, cst.List)):
            for i, element in enumerate(target.elements):
                inner = element.value
                if isinstance(value, (cst.Tuple, cst.List)) and how == "assign" and i < len(value.elements):
                    self._bind_target(inner, value.elements[i].value, order, how, stmt)
                else:
                    sub_how = "unpack" if how == "assign" else ("iter_unpack" if how == "iter" else how)
                    if isinstance(inner, cst.Name):
                        # in a nested target (`for i, (g, c) in enumerate(xs)`) the position is
                        # inside the inner tuple, not of `value`'s elements: unknown
                        self._bind(inner.value, Binding(order, value, sub_how, index=-1 if nested else i, node=stmt))
                    else:
                        self._bind_target(inner, value, order, sub_how, stmt, nested=True)
        elif isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) \
                and target.value.value == "self" and value is not None:
            cls = self._enclosing_class()
            if cls is not None:
                cls.attrs.setdefault(target.attr.value, []).append(value)
                self.ctx.self_attr_order.setdefault((cls.name, target.attr.value), []).append(order)

    def _enclosing_class(self) -> Optional[ClassInfo]:
        for scope in reversed(self.scopes):
            if isinstance(scope, ClassInfo):
                return scope
        return None

    # calls and returns ----------------------------------------------------------
    def visit_Call(self, node: cst.Call) -> None:
        func = self._func()
        if func is not None:
            func.calls.append(node)
            callee = node.func
            if type(callee) is cst.Attribute and callee.attr.value in _REGISTERS and len(node.args) >= 2 \
                    and type(node.args[0].value) is cst.SimpleString and type(callee.value) is cst.Name \
                    and callee.value.value == "self":
                # `self.register_buffer("flag", torch.tensor(True))`: `self.flag` holds that value
                name = node.args[0].value.evaluated_value
                cls = self._enclosing_class()
                value = node.args[1].value
                if cls is not None and isinstance(name, str) and name.isidentifier() \
                        and not (type(value) is cst.Name and value.value == "None"):  # (a placeholder)
                    cls.attrs.setdefault(name, []).append(value)
                    cls.registered.add(name)
        else:
            self.ctx.module_calls.append(node)
        dotted = self.ctx.resolve(node.func)
        if compile_disabled(node):
            return
        if dotted in COMPILE_FUNCS or (isinstance(node.func, cst.Call) and self.ctx.compile_api(node.func)
                                       and not compile_disabled(node.func)):
            self.ctx.compile_calls.append(node)  # also torch.compile(options=...)(self.forward)
        elif isinstance(node.func, cst.Attribute) and node.func.attr.value == "compile" \
                and dotted not in ("re.compile",) and not (dotted or "").startswith(("re.", "regex.")):
            self.ctx.method_compile_calls.append(node)

    def visit_Return(self, node: cst.Return) -> None:
        func = self._func()
        if func is not None:
            func.returns.append(node)


def compile_disabled(call: cst.Call) -> bool:
    """``torch.compile(model, disable=True)``: the call returns the model
    unchanged, so it compiles nothing (a computed ``disable=not flag`` may
    compile and is kept)."""
    return any(arg.keyword is not None and arg.keyword.value == "disable"
               and isinstance(arg.value, cst.Name) and arg.value.value == "True" for arg in call.args)


def _ends_with_exit(block: cst.BaseSuite) -> bool:
    body = getattr(block, "body", ())
    last = body[-1] if body else None
    if isinstance(block, cst.SimpleStatementSuite):
        last_small = body[-1] if body else None
        return isinstance(last_small, (cst.Return, cst.Raise))
    if isinstance(last, cst.SimpleStatementLine) and last.body:
        return isinstance(last.body[-1], (cst.Return, cst.Raise))
    return False


def _all_params(params: cst.Parameters) -> Iterator[cst.Param]:
    yield from params.posonly_params
    yield from params.params
    if isinstance(params.star_arg, cst.Param):
        yield params.star_arg
    yield from params.kwonly_params
    if params.star_kwarg is not None:
        yield params.star_kwarg


class SemanticModel:
    """The parse-once collection every analysis reads: parents, order, scopes,
    bindings, imports and aliases, functions and classes, calls, loops and
    compile calls -- filled by one walk (``_Collector``)."""

    def __init__(self, module: cst.Module, path: str, project: ProjectFacts, options: ContextOptions) -> None:
        self.module = module
        self.path = path
        self.project = project
        self.options = options
        self.parent: dict[cst.CSTNode, cst.CSTNode] = {}
        self.order: dict[cst.CSTNode, int] = {}
        self.aliases: dict[str, str] = {}
        self.imports: dict[str, ImportRef] = {}
        self.star_imports: list[ImportRef] = []  # `from .conv import *` at module level: ImportRef("conv", "", 1)
        self.functions: dict[str, FuncInfo] = {}
        self.classes: dict[str, ClassInfo] = {}
        self.func_info: dict[cst.FunctionDef, FuncInfo] = {}
        self.class_info: dict[cst.ClassDef, ClassInfo] = {}
        self.module_bindings: dict[str, list[Binding]] = {}
        self.class_body_bindings: dict[str, dict[str, list[Binding]]] = {}
        self.self_attr_order: dict[tuple[str, str], list[int]] = {}
        self.module_calls: list[cst.Call] = []
        self.loops: list[cst.CSTNode] = []
        self.compile_calls: list[cst.Call] = []
        self.method_compile_calls: list[cst.Call] = []
        self.compile_partials: dict[str, cst.Call] = {}  # module-level name -> functools.partial(torch.compile, ...)
        self._kind_cache: dict[cst.CSTNode, str] = {}
        self._returns_cache: dict[FuncInfo, str] = {}
        self._memo: dict[tuple, object] = {}  # per-file answers of the caller/return analyses
        self._in_progress: set = set()
        self.preorder: list[cst.CSTNode] = []
        self.postorder: list[cst.CSTNode] = []
        self._enclosing_memo: Optional[dict] = None  # enclosing_function's answers, once the tree is collected
        _Collector(self).run(module)
        self._enclosing_memo = {}
        # `torch.compile(model)` as a statement compiles nothing (the result is dropped; GNN010
        # reports it): every compile question sees only the calls whose result is kept
        self.compile_calls = [c for c in self.compile_calls if not self.compile_result_discarded(c)]

    def compile_result_discarded(self, call: cst.Call) -> bool:
        """``torch.compile(x)`` / ``torch_geometric.compile(x)`` is a whole
        statement, or assigned to the throwaway ``_`` (a test that only builds it):
        the compiled wrapper is dropped and ``x`` runs eagerly."""
        if not call.args or call.args[0].keyword is not None:
            return False
        parent = self.parent.get(call)
        return isinstance(parent, cst.Expr) or isinstance(parent, cst.Assign) and len(parent.targets) == 1 \
            and isinstance(parent.targets[0].target, cst.Name) and parent.targets[0].target.value == "_"
