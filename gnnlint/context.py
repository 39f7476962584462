"""Per-file facts the rules share, computed once per parse.

Rules ask, they never re-derive:

- ``resolve(expr)``: the dotted name an expression stands for, through import
  aliases (``import torch as T``, ``from torch import compile``,
  ``c = torch.compile``).
- ``compiled_region(node)``: why ``node`` runs under torch.compile (the body of
  a compiled function, the ``forward`` of a compiled class and what it calls),
  or None. ``is_compiling()``-guarded eager branches are not compiled.
- ``hot_region(node)``: why ``node`` runs once per training/inference step
  (the per-iteration body of the innermost loop that steps an optimizer, calls
  ``.backward()`` or runs a model, and the functions called from it), or None.
- ``kind(expr)``: a local, conservative guess of what a value is: TENSOR,
  BATCH (a PyG Data/HeteroData object), MODEL, OPTIMIZER, SCALAR (Python or
  numpy, definitely not a tensor) or UNKNOWN. Rules flag only what is surely
  a tensor.

Cross-file knowledge (a class compiled in another file) arrives as
``ProjectFacts``; ``exported_facts()`` is what this file tells the project.
"""
from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from typing import Iterator, Optional

import libcst as cst

from gnnlint.facts import (  # noqa: F401 - re-exported: rules and tools import them from here
    ContextOptions,
    ExportedFacts,
    ImportRef,
    ProjectFacts,
)

# -- kinds -------------------------------------------------------------------
TENSOR = "tensor"
BATCH = "batch"
MODEL = "model"
OPTIMIZER = "optimizer"
SCHEDULER = "scheduler"
LOADER = "loader"
SCALAR = "scalar"
UNKNOWN = "unknown"

COMPILE_FUNCS = {"torch.compile", "torch_geometric.compile"}
IS_COMPILING = {
    "torch.compiler.is_compiling",
    "torch._dynamo.is_compiling",
    "torch_geometric.is_compiling",
    "torch.compiler.is_dynamo_compiling",
    "torch._utils.is_compiling",
    "torch_geometric.typing.is_compiling",
}
# Bases that make a class an nn.Module (resolved names or bare last parts).
MODULE_BASE_SUFFIXES = (
    "Module", "MessagePassing", "Sequential", "ModuleList", "ModuleDict",
    "LightningModule", "Conv", "Aggregation", "BasicGNN",
)
MESSAGE_PASSING_METHODS = ("message", "aggregate", "update", "message_and_aggregate", "edge_update")
LIGHTNING_STEP_HOOKS = ("training_step", "validation_step", "test_step", "predict_step")
VARIABLE_SIZE_LOADERS = {
    "NeighborLoader", "LinkNeighborLoader", "HGTLoader", "ClusterLoader", "ShaDowKHopSampler",
    "DataLoader", "DenseDataLoader", "DataListLoader", "GraphSAINTNodeSampler",
    "GraphSAINTEdgeSampler", "GraphSAINTRandomWalkSampler", "NeighborSampler",
    "ImbalancedSampler", "DynamicBatchSampler", "RandomNodeLoader", "ZipLoader",
    "HGTLoader", "LinkLoader", "NodeLoader", "GraphSAINTSampler", "ClusterData",
}

# torch.<fn> calls that do not return a tensor.
_TORCH_NON_TENSOR = {
    "device", "dtype", "Size", "no_grad", "inference_mode", "enable_grad", "set_grad_enabled",
    "manual_seed", "seed", "compile", "save", "load", "is_tensor", "is_floating_point",
    "is_complex", "is_nonzero", "numel", "get_default_dtype", "set_default_dtype",
    "set_printoptions", "use_deterministic_algorithms", "set_num_threads", "get_num_threads",
    "is_grad_enabled", "is_inference_mode_enabled", "typename", "set_float32_matmul_precision",
    "is_storage", "broadcast_shapes", "initial_seed", "get_rng_state", "autocast",
    "Generator", "Stream", "Event", "set_default_device", "get_default_device",
    "allclose", "equal", "is_same_size", "is_autocast_enabled", "are_deterministic_algorithms_enabled",
}
_TORCH_TENSOR_SUBMODULES = {"linalg", "fft", "special", "sparse", "nested", "masked"}
_TENSOR_METHODS_NON_TENSOR = {
    "item", "tolist", "size", "dim", "ndimension", "numel", "nelement", "element_size",
    "data_ptr", "is_contiguous", "is_floating_point", "numpy", "stride", "storage_offset",
    "get_device", "is_complex", "type", "untyped_storage", "equal", "__len__", "is_pinned",
    "is_coalesced", "is_set_to", "is_shared", "has_names", "is_signed", "__repr__",
}
_TENSOR_ATTRS_NON_TENSOR = {
    "shape", "dtype", "device", "ndim", "is_cuda", "requires_grad", "is_sparse", "layout",
    "is_leaf", "names", "is_quantized", "is_meta", "is_cpu", "itemsize", "nbytes",
}
# Attributes of a PyG Data/HeteroData/Batch that are not tensors.
_BATCH_ATTRS_NON_TENSOR = {
    "num_nodes", "num_edges", "num_graphs", "batch_size", "num_features", "num_node_features",
    "num_edge_features", "keys", "node_types", "edge_types", "metadata", "is_directed",
    "is_undirected", "has_isolated_nodes", "has_self_loops", "stores", "node_stores",
    "edge_stores", "num_node_types", "num_edge_types", "x_dict", "edge_index_dict",
    "edge_attr_dict", "y_dict", "collect", "to_dict", "to_namedtuple", "input_id",
}
# Methods only tensors have (not numpy arrays, modules or Python values):
# calling one on a value of unknown kind returns a tensor.
_TENSOR_ONLY_METHODS = {
    "detach", "softmax", "log_softmax", "sigmoid", "relu", "unsqueeze", "permute", "contiguous",
    "masked_fill", "masked_fill_", "index_select", "eq", "ne", "lt", "gt", "le", "ge", "long",
    "clamp", "clamp_min", "clamp_max", "topk", "gather", "scatter", "scatter_add", "scatter_reduce",
    "new_zeros", "new_ones", "new_full", "new_empty", "new_tensor", "type_as", "expand", "expand_as",
    "repeat_interleave", "masked_select", "logical_and", "logical_or", "logical_not", "bmm", "mm",
    "matmul", "index_add", "index_add_", "argsort", "logsumexp", "norm", "unbind", "narrow",
    "flip", "roll", "tril", "triu", "diag", "sign", "sqrt", "rsqrt", "exp", "log", "log1p", "pow",
    "isnan", "isinf", "isfinite", "nan_to_num", "clone", "numpy", "tolist", "item",
}
_MODEL_METHODS_NON_TENSOR = {
    "parameters", "named_parameters", "state_dict", "modules", "children", "named_modules",
    "named_children", "buffers", "named_buffers", "zero_grad", "load_state_dict", "apply",
    "register_buffer", "register_parameter", "register_forward_hook", "add_module",
    "reset_parameters", "requires_grad_", "share_memory", "extra_repr", "num_parameters",
}
_MODEL_METHODS_SELF = {"to", "eval", "train", "cuda", "cpu", "float", "double", "half", "bfloat16",
                       "compile", "to_empty", "jittable", "type"}
_BATCH_NAMES = re.compile(r"^(batch|data|graph|sample|mini_?batch|hetero_data|(\w+_)?(data|batch|graph))$")
_MODEL_NAMES = re.compile(r"^(model|net|encoder|decoder|gnn|classifier|module|(\w+_)?(model|net|gnn|encoder|decoder))$")
_SCALAR_PARAM_NAMES = re.compile(
    r"^(num_\w+|n_\w+|\w+_size|size|dim|dims|training|p|k|eps|lr|heads|\w+_channels|channels|"
    r"\w+_dim|epoch|epochs|step|idx|i|j|name|mode|verbose|seed|\w+_ratio|ratio|alpha|beta|"
    r"gamma|tau|temperature|depth|layer|layers|flow|aggr|reduce|bias|normalize|cached|"
    r"add_self_loops|improved|dropout|act|jk|\w+_type|\w+_types|return_\w+)$"
)
_TENSOR_ANNOTATIONS = re.compile(
    r"^(Optional\[)?(torch\.)?(Tensor|FloatTensor|LongTensor|BoolTensor)\]?$|^(Opt)?Tensor$|"
    r"^(Adj|OptTensor|PairTensor|OptPairTensor|SparseTensor|EdgeIndex|Index)$|^(torch\.)?Tensor \| None$"
)
_SCALAR_ANNOTATIONS = re.compile(r"^(Optional\[)?(int|float|bool|str|complex)\]?$|^(int|float|bool|str) \| None$")


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


@dataclass(frozen=True)
class CompileSite:
    """One ``torch.compile`` call (or decorator, or ``.compile()`` method call)."""

    line: int
    target: str  # what is compiled, as written (e.g. "model", "GCN", "optimizer.step")
    target_kind: str  # "class" | "function" | "method" | "optimizer_step" | "unknown"
    mode: Optional[str]
    dynamic: Optional[bool]  # None when not given
    fullgraph: bool
    options: tuple[str, ...] = ()  # keys of options={...}
    api: str = "torch.compile"  # or "torch_geometric.compile", "Module.compile"


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


class _Collector:
    """One walk over the module: parents, order, scopes, bindings, calls."""

    def __init__(self, ctx: "FileContext") -> None:
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
            cls.methods.setdefault(name, info)
        elif parent_func is not None:
            parent_func.nested[name] = info
        else:
            self.ctx.functions.setdefault(name, info)
        self.ctx.func_info[node] = info
        for param in _all_params(node.params):
            info.params[param.name.value] = param
            info.bindings.setdefault(param.name.value, []).append(
                Binding(-1, None, "param", node=param))
        self.scopes.append(info)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        bases = [self.ctx.dotted(arg.value) or "" for arg in node.bases]
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
            return
        module = self.ctx.dotted(node.module) if node.module is not None else ""
        level = len(node.relative)
        for alias in node.names:
            name = self.ctx.dotted(alias.name) or ""
            local = name
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                local = alias.asname.name.value
            if level == 0:
                self.ctx.aliases[local] = f"{module}.{name}" if module else name
            self.ctx.imports[local] = ImportRef(module or "", name, level)

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
                     stmt: Optional[cst.CSTNode] = None) -> None:
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
                        self._bind(inner.value, Binding(order, value, sub_how, index=i, node=stmt))
                    else:
                        self._bind_target(inner, value, order, sub_how, stmt)
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
        else:
            self.ctx.module_calls.append(node)
        dotted = self.ctx.resolve(node.func)
        if dotted in COMPILE_FUNCS:
            self.ctx.compile_calls.append(node)
        elif isinstance(node.func, cst.Attribute) and node.func.attr.value == "compile" \
                and dotted not in ("re.compile",) and not (dotted or "").startswith(("re.", "regex.")):
            self.ctx.method_compile_calls.append(node)

    def visit_Return(self, node: cst.Return) -> None:
        func = self._func()
        if func is not None:
            func.returns.append(node)


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


class FileContext:
    def __init__(self, module: cst.Module, path: str = "<stdin>",
                 project: Optional[ProjectFacts] = None,
                 options: Optional[ContextOptions] = None) -> None:
        self.module = module
        self.path = path
        self.project = project or ProjectFacts()
        self.options = options or ContextOptions()
        self.parent: dict[cst.CSTNode, cst.CSTNode] = {}
        self.order: dict[cst.CSTNode, int] = {}
        self.aliases: dict[str, str] = {}
        self.imports: dict[str, ImportRef] = {}
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
        self._kind_cache: dict[cst.CSTNode, str] = {}
        self._returns_cache: dict[FuncInfo, str] = {}
        self._memo: dict[tuple, object] = {}  # per-file answers of the caller/return analyses
        self._in_progress: set = set()
        self.preorder: list[cst.CSTNode] = []
        self.postorder: list[cst.CSTNode] = []
        _Collector(self).run(module)
        # region analysis
        self.compiled_funcs: dict[FuncInfo, str] = {}
        self.compiled_classes: dict[str, str] = {}  # local class name -> why
        self.compile_sites: list[tuple[cst.CSTNode, CompileSite]] = []
        # compile call -> the class it compiles (ClassInfo, ImportRef, dotted name)
        self.compile_targets: dict[cst.CSTNode, object] = {}
        self.hot_funcs: dict[FuncInfo, str] = {}
        self.hot_loops: dict[cst.CSTNode, str] = {}
        self.exported = ExportedFacts()
        self._analyse_compiled()
        self._analyse_hot()

    # ------------------------------------------------------------------ names
    @staticmethod
    def dotted(node: Optional[cst.CSTNode]) -> Optional[str]:
        if isinstance(node, cst.Name):
            return node.value
        if isinstance(node, cst.Attribute):
            head = FileContext.dotted(node.value)
            return f"{head}.{node.attr.value}" if head is not None else None
        return None

    def resolve_dotted(self, dotted: str) -> str:
        head, _, rest = dotted.partition(".")
        full = self.aliases.get(head)
        if full is None:
            return dotted
        return f"{full}.{rest}" if rest else full

    def resolve(self, node: Optional[cst.CSTNode]) -> Optional[str]:
        """The fully qualified dotted name of a Name/Attribute, via imports."""
        dotted = self.dotted(node)
        if dotted is None:
            return None
        return self.resolve_dotted(dotted)

    def last_part(self, node: Optional[cst.CSTNode]) -> Optional[str]:
        if isinstance(node, cst.Name):
            return node.value
        if isinstance(node, cst.Attribute):
            return node.attr.value
        return None

    # ------------------------------------------------------------------ tree
    def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        node = self.parent.get(node)
        while node is not None:
            yield node
            node = self.parent.get(node)

    def enclosing_function(self, node: cst.CSTNode) -> Optional[FuncInfo]:
        for anc in self.ancestors(node):
            if isinstance(anc, cst.FunctionDef):
                return self.func_info.get(anc)
        return None

    def enclosing_class(self, node: cst.CSTNode) -> Optional[ClassInfo]:
        for anc in self.ancestors(node):
            if isinstance(anc, cst.ClassDef):
                return self.class_info.get(anc)
        return None

    def statement_of(self, node: cst.CSTNode) -> cst.CSTNode:
        """The statement a node belongs to: its simple statement line, or the
        compound statement whose header holds it."""
        current = node
        for anc in self.ancestors(node):
            if isinstance(anc, cst.SimpleStatementLine):
                return anc
            if isinstance(anc, cst.BaseCompoundStatement):
                body = getattr(anc, "body", None)
                if current is not body and not isinstance(current, (cst.Else, cst.If)) \
                        and not isinstance(current, cst.BaseSuite):
                    return anc
                return current if isinstance(current, cst.BaseStatement) else anc
            current = anc
        return node

    def in_error_path(self, node: cst.CSTNode) -> bool:
        """Inside an ``except`` handler or a ``raise``: runs only when
        something already went wrong, not every step."""
        for anc in self.ancestors(node):
            if isinstance(anc, (cst.ExceptHandler, cst.ExceptStarHandler, cst.Raise)):
                return True
            if isinstance(anc, (cst.FunctionDef, cst.ClassDef)):
                return False
        return False

    def in_loop_body(self, node: cst.CSTNode, loop: cst.CSTNode) -> bool:
        """True when ``node`` is inside the per-iteration body of ``loop``."""
        body = loop.body  # type: ignore[attr-defined]
        for anc in self.ancestors(node):
            if anc is body:
                return True
            if anc is loop:
                return False
        return False

    # ------------------------------------------------------------------ guards
    def _is_compiling_test(self, test: cst.BaseExpression) -> Optional[bool]:
        """True: the test is ``is_compiling()``; False: ``not is_compiling()``."""
        negated = False
        while isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            negated = not negated
            test = test.expression
        if isinstance(test, cst.Call) and self.resolve(test.func) in IS_COMPILING:
            return not negated
        if isinstance(test, cst.Call) and (self.last_part(test.func) or "") in ("is_compiling", "is_dynamo_compiling"):
            return not negated
        return None

    def is_eager_only(self, node: cst.CSTNode) -> bool:
        """Inside a branch that does not run under torch.compile."""
        child = node
        for anc in self.ancestors(node):
            if isinstance(anc, (cst.If, cst.IfExp)):
                # `if not is_compiling():`, `if debug and not is_compiling():`, the
                # else of `if is_compiling():` ...
                if (child is anc.body and self._false_when_compiling(anc.test)) or \
                        (child is anc.orelse and self._true_when_compiling(anc.test)):
                    return True
            if isinstance(anc, (cst.IndentedBlock, cst.Module)) and self._after_compiling_exit(anc, child):
                return True
            if isinstance(anc, cst.FunctionDef):
                break
            child = anc
        return False

    def _false_when_compiling(self, test: cst.BaseExpression) -> bool:
        if self._is_compiling_test(test) is False:
            return True
        if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
            return self._false_when_compiling(test.left) or self._false_when_compiling(test.right)
        if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.Or):
            return self._false_when_compiling(test.left) and self._false_when_compiling(test.right)
        return False

    def _true_when_compiling(self, test: cst.BaseExpression) -> bool:
        if self._is_compiling_test(test) is True:
            return True
        if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.Or):
            return self._true_when_compiling(test.left) or self._true_when_compiling(test.right)
        if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
            return self._true_when_compiling(test.left) and self._true_when_compiling(test.right)
        return False

    def _after_compiling_exit(self, block, stmt: cst.CSTNode) -> bool:
        """``stmt`` follows ``if is_compiling(): return ...`` in the same
        block, so it only runs eagerly."""
        for sibling in block.body:
            if sibling is stmt:
                return False
            if isinstance(sibling, cst.If) and sibling.orelse is None \
                    and self._true_when_compiling(sibling.test) and _ends_with_exit(sibling.body):
                return True
        return False

    # ------------------------------------------------------------------ regions
    def compiled_region(self, node: cst.CSTNode) -> Optional[str]:
        """Why ``node`` runs under torch.compile, or None."""
        if self.is_eager_only(node):
            return None
        func = self.enclosing_function(node)
        while func is not None:
            why = self.compiled_funcs.get(func)
            if why is not None:
                return why
            # A nested function (closure) is compiled when its parent is and it
            # is called from it; keep it simple: inherit from the parent.
            func = func.parent
            if func is not None and func not in self.compiled_funcs:
                return None
        return None

    def hot_region(self, node: cst.CSTNode) -> Optional[str]:
        """Why ``node`` runs every training/inference step, or None."""
        child = node
        for anc in self.ancestors(node):
            if anc in self.hot_loops and child is getattr(anc, "body", None):
                return self.hot_loops[anc]
            if isinstance(anc, cst.FunctionDef):
                info = self.func_info.get(anc)
                why = self.hot_funcs.get(info) if info is not None else None
                if why is not None:
                    return why
                return None  # a nested function is hot only if it is itself hot
            child = anc
        return None

    def step_drive(self, node: cst.CSTNode):
        """Whether the per-step code at ``node`` drives compiled code (a
        ``gnnlint.steps.StepDrive``), or None."""
        if getattr(self, "_steps", None) is None:
            from gnnlint.steps import StepAnalysis
            self._steps = StepAnalysis(self)
        return self._steps.drive(node)

    # ------------------------------------------------------------------ kinds
    def kind(self, expr: Optional[cst.CSTNode]) -> str:
        if expr is None:
            return UNKNOWN
        cached = self._kind_cache.get(expr)
        if cached is not None:
            return cached
        if expr in self._in_progress:
            return UNKNOWN
        self._in_progress.add(expr)
        try:
            result = self._kind(expr)
        finally:
            self._in_progress.discard(expr)
        self._kind_cache[expr] = result
        return result

    def is_tensor(self, expr: Optional[cst.CSTNode]) -> bool:
        return self.kind(expr) == TENSOR

    def _kind(self, expr: cst.CSTNode) -> str:
        if isinstance(expr, (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString,
                             cst.ConcatenatedString, cst.FormattedString, cst.List, cst.Dict,
                             cst.Set, cst.ListComp, cst.DictComp, cst.SetComp, cst.GeneratorExp,
                             cst.Lambda)):
            return SCALAR
        if isinstance(expr, cst.Tuple):
            return SCALAR
        if isinstance(expr, cst.Name):
            if expr.value in ("True", "False", "None"):
                return SCALAR
            return self._name_kind(expr.value, expr)
        if isinstance(expr, cst.Attribute):
            return self._attribute_kind(expr)
        if isinstance(expr, cst.Call):
            return self._call_kind(expr)
        if isinstance(expr, cst.Subscript):
            base = self.kind(expr.value)
            if base in (TENSOR, BATCH):
                if base == BATCH and self._subscript_is_key(expr):
                    return BATCH
                return TENSOR if base == TENSOR else BATCH
            name = self.last_part(expr.value) or ""
            if name.endswith("_dict") and base != SCALAR:
                return TENSOR if not name.startswith(("num_", "metadata")) else UNKNOWN
            return UNKNOWN
        if isinstance(expr, cst.BinaryOperation):
            left, right = self.kind(expr.left), self.kind(expr.right)
            if TENSOR in (left, right):
                return TENSOR
            if left == SCALAR and right == SCALAR:
                return SCALAR
            return UNKNOWN
        if isinstance(expr, cst.UnaryOperation):
            if isinstance(expr.operator, cst.Not):
                return SCALAR
            return self.kind(expr.expression)
        if isinstance(expr, cst.Comparison):
            for target in expr.comparisons:
                if isinstance(target.operator, (cst.Is, cst.IsNot, cst.In, cst.NotIn)):
                    return SCALAR
            kinds = [self.kind(expr.left)] + [self.kind(c.comparator) for c in expr.comparisons]
            if TENSOR in kinds:
                return TENSOR
            if all(k == SCALAR for k in kinds):
                return SCALAR
            return UNKNOWN
        if isinstance(expr, cst.BooleanOperation):
            return SCALAR if self.kind(expr.left) == SCALAR and self.kind(expr.right) == SCALAR else UNKNOWN
        if isinstance(expr, cst.IfExp):
            a, b = self.kind(expr.body), self.kind(expr.orelse)
            return a if a == b else UNKNOWN
        if isinstance(expr, cst.NamedExpr):
            return self.kind(expr.value)
        return UNKNOWN

    @staticmethod
    def _subscript_is_key(expr: cst.Subscript) -> bool:
        if len(expr.slice) != 1:
            return False
        element = expr.slice[0].slice
        return isinstance(element, cst.Index) and isinstance(element.value, (cst.SimpleString, cst.Tuple))

    def _scope_chain(self, node: cst.CSTNode) -> Iterator[Optional[FuncInfo]]:
        func = self.enclosing_function(node)
        while func is not None:
            yield func
            func = func.parent
        yield None  # module

    def lookup(self, name: str, at: cst.CSTNode) -> tuple[Optional[Binding], Optional[FuncInfo]]:
        """The binding of ``name`` visible at ``at``: the last one before it in
        the innermost scope that binds the name."""
        use = self.order.get(at, 1 << 60)
        for func in self._scope_chain(at):
            bindings = func.bindings.get(name) if func is not None else self.module_bindings.get(name)
            if not bindings:
                continue
            before = [b for b in bindings if b.order < use and not self._binds_around(b, at)]
            if func is not None and not (func.node in self.ancestors(at) or func.node is at):
                before = bindings  # an enclosing scope seen from a closure: all of it
            elif func is None and self.enclosing_function(at) is not None:
                # a global read inside a function runs after the module body
                # (`def train(): ... train_loader` with train_loader below)
                before = bindings
            if not before:
                # Bound later in the same scope only (loop-carried): unknown.
                return None, func
            return before[-1], func
        return None, None

    def _binds_around(self, binding: Binding, at: cst.CSTNode) -> bool:
        """``x = f(x)``: the use of ``x`` inside the value sees the old ``x``."""
        stmt = binding.node
        if stmt is None or binding.how in ("param", "def", "class"):
            return False
        if isinstance(stmt, (cst.For, cst.CompFor)):
            # the loop target is bound for the body, not for the iterable
            return any(anc is stmt.iter for anc in self.ancestors(at)) or at is stmt.iter
        return any(anc is stmt for anc in self.ancestors(at))

    def _name_kind(self, name: str, at: cst.CSTNode) -> str:
        binding, func = self.lookup(name, at)
        if binding is None:
            return UNKNOWN
        kinds = set()
        for candidate in self._reaching(name, binding, func, at):
            if candidate.how == "assign" and isinstance(candidate.value, cst.Name) \
                    and candidate.value.value == "None":
                continue  # `x = None` then `if ...: x = tensor`: x is a tensor where it is used
            kinds.add(self._binding_kind(name, candidate, func))
        if not kinds:
            return SCALAR
        return kinds.pop() if len(kinds) == 1 else UNKNOWN

    def _reaching(self, name: str, last: Binding, func: Optional[FuncInfo], at: cst.CSTNode) -> list[Binding]:
        """The bindings that may reach ``at``: the last one before it, and the
        earlier ones for as long as the later was made only conditionally
        (inside an if/for/while/try block that does not hold ``at``)."""
        out = [last]
        bindings = (func.bindings if func is not None else self.module_bindings).get(name, [])
        earlier = [b for b in bindings if b.order < last.order]
        current = last
        while self._conditional(current, at) and earlier:
            current = earlier.pop()
            out.append(current)
        return out

    def _conditional(self, binding: Binding, at: cst.CSTNode) -> bool:
        stmt = binding.node
        if stmt is None or binding.how in ("param", "def", "class"):
            return False
        use_ancestors = set(map(id, self.ancestors(at)))
        for anc in self.ancestors(stmt):
            if isinstance(anc, (cst.FunctionDef, cst.ClassDef, cst.Module)):
                return False
            if isinstance(anc, (cst.If, cst.Else, cst.For, cst.While, cst.Try, cst.ExceptHandler,
                                cst.TryStar, cst.ExceptStarHandler, cst.Finally)):
                return id(anc) not in use_ancestors
        return False

    def _binding_kind(self, name: str, binding: Binding, func: Optional[FuncInfo]) -> str:
        how = binding.how
        if how == "param":
            return self._param_kind(binding.node, func)  # type: ignore[arg-type]
        if how in ("def", "class", "import", "with"):
            return UNKNOWN
        value = binding.value
        if how == "assign":
            return self.kind(value)
        if how == "aug":
            value_kind = self.kind(value)
            if value_kind == TENSOR:
                return TENSOR
            # name op= scalar keeps whatever it was before
            prev = self._previous_binding(name, binding, func)
            if prev is not None:
                prev_kind = self._binding_kind(name, prev, func)
                if value_kind == SCALAR:
                    return prev_kind
                return TENSOR if prev_kind == TENSOR else UNKNOWN
            return UNKNOWN
        if how == "unpack":
            if isinstance(value, cst.Call) and self._local_callee(value) is not None:
                callee = self._local_callee(value)
                # `x, counts = collate(...)` with `return torch.cat(xs), counts`
                if isinstance(callee, FuncInfo) and binding.index >= 0:
                    return self._returned_element_kind(callee, binding.index)
                return UNKNOWN
            kind = self.kind(value)
            return TENSOR if kind == TENSOR else UNKNOWN
        if how in ("iter", "iter_unpack"):
            return self._iter_element_kind(name, value, how, binding.index)
        return UNKNOWN

    def _previous_binding(self, name: str, binding: Binding, func: Optional[FuncInfo]) -> Optional[Binding]:
        bindings = (func.bindings if func is not None else self.module_bindings).get(name, [])
        earlier = [b for b in bindings if b.order < binding.order]
        return earlier[-1] if earlier else None

    _ITER_WRAPPERS = ("tqdm", "iter", "progress", "track", "trange_wrap", "islice")

    def _unwrap_iterable(self, iterable):
        """``tqdm(loader, ...)`` / ``iter(loader)`` iterate what they wrap."""
        while isinstance(iterable, cst.Call) and iterable.args and \
                (self.last_part(iterable.func) or "") in self._ITER_WRAPPERS:
            iterable = iterable.args[0].value
        return iterable

    def _iter_element_kind(self, name: str, iterable, how: str, index: int = -1) -> str:
        if iterable is None:
            return UNKNOWN
        iterable = self._unwrap_iterable(iterable)
        func_name = self.resolve(iterable.func) if isinstance(iterable, cst.Call) else None
        if how == "iter_unpack" and func_name in ("enumerate", "zip") and isinstance(iterable, cst.Call):
            # for i, batch in enumerate(loader) / for a, b in zip(xs, ys)
            args = [a.value for a in iterable.args if a.keyword is None]
            if func_name == "enumerate":
                if index == 0:
                    return SCALAR
                return self._iter_element_kind(name, args[0], "iter") if index == 1 and args else UNKNOWN
            if 0 <= index < len(args):
                return self._iter_element_kind(name, args[index], "iter")
            return UNKNOWN
        kind = self.kind(iterable)
        if kind == TENSOR:
            return TENSOR
        if how == "iter" and _BATCH_NAMES.match(name) and self._looks_like_loader(iterable):
            return BATCH
        if how == "iter" and kind == LOADER:
            return BATCH
        if how == "iter" and func_name == "range":
            return SCALAR
        return UNKNOWN

    def _looks_like_loader(self, iterable) -> bool:
        iterable = self._unwrap_iterable(iterable)
        if isinstance(iterable, cst.Call) and self.resolve(iterable.func) == "enumerate" and iterable.args:
            iterable = self._unwrap_iterable(iterable.args[0].value)
        if self.kind(iterable) == LOADER:
            return True
        last = self.last_part(iterable.func if isinstance(iterable, cst.Call) else iterable) or ""
        return "loader" in last.lower() or last in VARIABLE_SIZE_LOADERS or "batches" in last.lower()

    def _param_kind(self, param: cst.Param, func: Optional[FuncInfo]) -> str:
        name = param.name.value
        if name in ("self", "cls"):
            return UNKNOWN
        if param.annotation is not None:
            text = self.module.code_for_node(param.annotation.annotation).strip()
            if _TENSOR_ANNOTATIONS.match(text):
                return TENSOR
            if _SCALAR_ANNOTATIONS.match(text):
                return SCALAR
        if param.default is not None:
            default_kind = self.kind(param.default)
            if default_kind == SCALAR and not (isinstance(param.default, cst.Name)
                                               and param.default.value == "None"):
                return SCALAR
        in_forward = func is not None and func.cls is not None and self.is_module_class(func.cls) \
            and (func.name == "forward" or func.name in MESSAGE_PASSING_METHODS)
        if in_forward and name in ("batch", "ptr", "index", "mask"):
            return TENSOR  # PyG's batch vector, not a Data batch
        if _MODEL_NAMES.match(name):
            return MODEL
        if name in ("optimizer", "opt", "optim"):
            return OPTIMIZER
        if _BATCH_NAMES.match(name):
            return BATCH
        if "loader" in name:
            return LOADER
        if func is not None and func.cls is not None and self.is_module_class(func.cls) \
                and (func.name == "forward" or func.name in MESSAGE_PASSING_METHODS):
            if _SCALAR_PARAM_NAMES.match(name) or param.star not in ("", None, cst.MaybeSentinel.DEFAULT) \
                    and isinstance(param.star, str) and param.star:
                return UNKNOWN
            if param.default is not None:
                return UNKNOWN
            return TENSOR
        if func is not None:
            cls = self._param_class_from_callers(param, func, 0)
            if isinstance(cls, ClassInfo) and self.is_module_class(cls):
                return MODEL  # every caller passes a model of a local module class
            return self._param_kind_from_callers(param, func)
        return UNKNOWN

    def _args_for_param(self, param: cst.Param, func: FuncInfo) -> Optional[list]:
        """The expression every in-file call of ``func`` passes for ``param``
        (the parameter's default or a ``*args`` call: None for that call), or
        None when there is no caller. The first 20 callers are read."""
        callers = self._callers_of(func)
        if not callers:
            return None
        position = next((i for i, p in enumerate(func.node.params.params) if p is param), -1)
        if func.cls is not None and "staticmethod" not in {
                self.last_part(d.decorator) for d in func.node.decorators}:
            position -= 1  # obj.method(...): self is not an argument
        out = []
        for call in callers[:20]:
            keyword = [a for a in call.args if a.keyword is not None and a.keyword.value == param.name.value]
            positional = [a for a in call.args if a.keyword is None]
            if keyword:
                out.append(keyword[0].value)
            elif any(a.star for a in positional[:position + 1]) or not 0 <= position < len(positional):
                out.append(None)
            else:
                out.append(positional[position].value)
        return out

    def _memoised(self, key: tuple, compute, guard):
        """``compute()`` once per key; ``guard`` answers a recursive question."""
        if key not in self._memo:
            self._memo[key] = guard
            self._memo[key] = compute()
        return self._memo[key]

    def _param_class_from_callers(self, param, func: FuncInfo, depth: int):
        """The local class every in-file caller passes for ``param``
        (``test(model, evaluator)`` with ``evaluator = HitsEvaluator()``)."""
        if not isinstance(param, cst.Param):
            return None

        def compute():
            args = self._args_for_param(param, func)
            found = {self.class_of(a, a, depth + 1) if a is not None else None for a in args or [None]}
            only = found.pop() if len(found) == 1 else None
            return only if isinstance(only, ClassInfo) else None
        return self._memoised((func, param.name.value, "class"), compute, None)

    def _param_kind_from_callers(self, param: cst.Param, func: FuncInfo) -> str:
        """TENSOR when every call of a function or method in this file
        passes a tensor for ``param`` (``node_saliency(model, x, counts)`` with
        ``counts`` a tensor at each call site)."""
        def compute():
            args = self._args_for_param(param, func)
            kinds = {self.kind(a) if a is not None else UNKNOWN for a in args or [None]}
            return TENSOR if kinds == {TENSOR} else UNKNOWN
        return self._memoised((func, param.name.value, "kind"), compute, UNKNOWN)

    def _attribute_kind(self, expr: cst.Attribute) -> str:
        attr = expr.attr.value
        resolved = self.resolve(expr)
        if resolved and resolved.split(".")[0] in ("torch", "np", "numpy", "math"):
            return UNKNOWN if resolved.startswith("torch") else SCALAR
        if isinstance(expr.value, cst.Name) and expr.value.value == "self":
            return self._self_attr_kind(expr)
        base = self.kind(expr.value)
        if base == TENSOR:
            if attr in _TENSOR_ATTRS_NON_TENSOR:
                return SCALAR
            return TENSOR
        if base == BATCH:
            if attr in _BATCH_ATTRS_NON_TENSOR or attr.startswith("num_"):
                return SCALAR if attr not in ("x_dict", "edge_index_dict", "edge_attr_dict", "y_dict") else UNKNOWN
            if attr.endswith("_dict") or attr in ("to", "cuda", "cpu"):
                return UNKNOWN
            return TENSOR
        if base == SCALAR:
            return SCALAR
        return UNKNOWN

    def _self_attr_kind(self, expr: cst.Attribute) -> str:
        cls = self.enclosing_class(expr)
        if cls is None:
            return UNKNOWN
        values = self._class_attr_values(cls, expr.attr.value)
        kinds = {self.kind(v) for v in values}
        for value in values:
            if isinstance(value, cst.Call):
                resolved = self.resolve(value.func) or ""
                if resolved.endswith(("Parameter", "nn.Parameter")):
                    kinds.add(TENSOR)
                    kinds.discard(UNKNOWN)
        if len(kinds) == 1:
            return kinds.pop()
        if MODEL in kinds and UNKNOWN in kinds and len(kinds) == 2:
            return MODEL
        return UNKNOWN

    def _class_attr_values(self, cls: ClassInfo, attr: str) -> list[cst.BaseExpression]:
        seen: set[str] = set()
        todo = [cls]
        while todo:
            current = todo.pop()
            if current.name in seen:
                continue
            seen.add(current.name)
            if attr in current.attrs:
                return current.attrs[attr]
            for base in current.bases:
                local = self.classes.get(base.split(".")[-1])
                if local is not None:
                    todo.append(local)
        return []

    def _call_kind(self, call: cst.Call) -> str:
        func = call.func
        resolved = self.resolve(func) or ""
        root = resolved.split(".")[0]
        # Builtins that return Python values.
        if resolved in ("float", "int", "bool", "len", "round", "str", "repr", "abs", "min", "max",
                        "sum", "range", "enumerate", "zip", "list", "tuple", "dict", "set",
                        "sorted", "isinstance", "hasattr", "getattr", "format", "print", "any", "all"):
            if resolved in ("getattr",):
                return UNKNOWN
            return SCALAR
        if root in ("np", "numpy", "math", "random", "time", "os", "json", "pandas", "pd", "sklearn",
                    "scipy", "statistics"):
            return SCALAR
        if resolved in COMPILE_FUNCS:
            return MODEL
        if root == "torch":
            parts = resolved.split(".")
            if len(parts) == 2:
                name = parts[1]
                if name in _TORCH_NON_TENSOR or name[:1].isupper():
                    return UNKNOWN
                return TENSOR
            if parts[1] == "nn" and len(parts) >= 4 and parts[2] == "functional":
                return TENSOR
            if resolved in _TORCH_UTILS_RETURNING_TENSORS:
                return TENSOR
            if parts[-1] in ("Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer"):
                return TENSOR  # a parameter is a tensor, not a module
            if parts[1] == "nn" and parts[-1][:1].isupper():
                return MODEL
            if parts[1] == "optim":
                if len(parts) >= 3 and parts[2] == "lr_scheduler":
                    return SCHEDULER
                return OPTIMIZER if parts[-1][:1].isupper() else UNKNOWN
            if parts[1] in _TORCH_TENSOR_SUBMODULES:
                return TENSOR
            return UNKNOWN
        if root == "torch_geometric":
            parts = resolved.split(".")
            last = parts[-1]
            if last in VARIABLE_SIZE_LOADERS and "loader" in parts:
                return LOADER
            if last == "to_hetero" or last == "to_hetero_with_bases":
                return MODEL
            if len(parts) >= 2 and parts[1] == "nn" and last[:1].isupper():
                return MODEL
            if len(parts) >= 2 and parts[1] == "utils":
                if last.startswith(("is_", "has_", "contains_")):
                    return SCALAR
                return TENSOR
            if len(parts) >= 2 and parts[1] == "nn" and last.startswith("global_"):
                return TENSOR
            if last in ("Data", "HeteroData", "Batch"):
                return BATCH
            return UNKNOWN
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            receiver = self.kind(func.value)
            if receiver == TENSOR:
                if method in _TENSOR_METHODS_NON_TENSOR or method.startswith(("is_", "has_")):
                    return SCALAR
                return TENSOR
            if receiver == MODEL:
                if method in _MODEL_METHODS_SELF:
                    return MODEL
                if method in _MODEL_METHODS_NON_TENSOR:
                    return UNKNOWN
                if method == "__call__" or method in ("forward", "encode", "decode", "inference",
                                                       "embed", "predict", "decode_all", "score"):
                    return TENSOR
                return UNKNOWN
            if receiver == BATCH:
                if method in ("to", "cuda", "cpu", "pin_memory", "clone", "contiguous", "subgraph",
                              "coalesce", "detach", "apply"):
                    return BATCH
                return UNKNOWN
            if receiver == SCALAR:
                return SCALAR
            if receiver == UNKNOWN and method in _TENSOR_ONLY_METHODS and method not in (
                    "numpy", "tolist", "item"):
                return TENSOR
        callee_kind = self.kind(func) if not isinstance(func, cst.Call) else UNKNOWN
        if callee_kind == MODEL:
            return TENSOR
        local = self._local_callee(call)
        if local is not None:
            if isinstance(local, ClassInfo):
                return MODEL if self.is_module_class(local) else UNKNOWN
            return self.returns_kind(local)
        name = self.last_part(func) or ""
        if isinstance(func, cst.Name) and name in self.imports:
            ref = self.imports[name]
            if name[:1].isupper() and (ref.level > 0 or "model" in ref.module or "net" in ref.module):
                return MODEL
        if name in ("criterion", "loss_fn", "loss_func", "lossfn", "loss_function") or \
                (isinstance(func, cst.Name) and func.value.endswith("_loss_fn")):
            return TENSOR
        if isinstance(func, cst.Name) and _MODEL_NAMES.match(func.value) and callee_kind != SCALAR \
                and self.lookup(func.value, call)[0] is None:
            return TENSOR
        return UNKNOWN

    def _local_callee(self, call: cst.Call):
        """The local FunctionDef/ClassDef info a call targets, when it is one."""
        func = call.func
        if isinstance(func, cst.Name):
            binding, scope = self.lookup(func.value, call)
            if binding is None:
                # forward references: module-level defs later in the file
                if func.value in self.functions:
                    return self.functions[func.value]
                if func.value in self.classes:
                    return self.classes[func.value]
                return None
            if binding.how == "def":
                return self.func_info.get(binding.node)  # type: ignore[arg-type]
            if binding.how == "class":
                return self.class_info.get(binding.node)  # type: ignore[arg-type]
            return None
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self":
            cls = self.enclosing_class(call)
            if cls is not None:
                return self.method_of(cls, func.attr.value)
        return None

    def method_of(self, cls: ClassInfo, name: str) -> Optional[FuncInfo]:
        seen: set[str] = set()
        todo = [cls]
        while todo:
            current = todo.pop(0)
            if current.name in seen:
                continue
            seen.add(current.name)
            if name in current.methods:
                return current.methods[name]
            for base in current.bases:
                local = self.classes.get(base.split(".")[-1])
                if local is not None:
                    todo.append(local)
        return None

    def _returned_element_kind(self, func: FuncInfo, index: int) -> str:
        """The kind of element ``index`` of the tuples a function returns
        (TENSOR only when every return agrees)."""
        def compute():
            kinds = set()
            for r in func.returns:
                if not isinstance(r.value, cst.Tuple) or index >= len(r.value.elements) or \
                        any(isinstance(e, cst.StarredElement) for e in r.value.elements):
                    kinds.add(UNKNOWN)
                    continue
                kinds.add(self.kind(r.value.elements[index].value))
            return TENSOR if kinds == {TENSOR} and not func.is_async else UNKNOWN
        return self._memoised((func, index, "returned"), compute, UNKNOWN)

    def returns_kind(self, func: FuncInfo) -> str:
        cached = self._returns_cache.get(func)
        if cached is not None:
            return cached
        self._returns_cache[func] = UNKNOWN  # recursion guard
        kinds = {self.kind(r.value) for r in func.returns if r.value is not None}
        if func.is_async:
            kinds = {UNKNOWN}  # calling it returns a coroutine
        result = kinds.pop() if len(kinds) == 1 else UNKNOWN
        self._returns_cache[func] = result
        return result

    # ------------------------------------------------------------------ classes
    def is_module_class(self, cls: ClassInfo, _seen: Optional[set] = None) -> bool:
        seen = _seen or set()
        if cls.name in seen:
            return False
        seen.add(cls.name)
        for base in cls.bases:
            last = base.split(".")[-1]
            if last.endswith(MODULE_BASE_SUFFIXES):
                return True
            local = self.classes.get(last)
            if local is not None and self.is_module_class(local, seen):
                return True
            resolved = self.resolve_dotted(base)
            if resolved.startswith(("torch.nn.", "torch_geometric.nn.")):
                return True
        return False

    def class_of(self, expr: Optional[cst.CSTNode], at: Optional[cst.CSTNode] = None, depth: int = 0):
        """The class an expression is an instance of: a local ClassInfo, an
        ImportRef for an imported class, a dotted name for a library class,
        or None."""
        if expr is None or depth > 8:
            return None
        if isinstance(expr, cst.Call):
            func = expr.func
            # model.to(device) / .eval() / .cuda() keep the instance
            if isinstance(func, cst.Attribute) and func.attr.value in _MODEL_METHODS_SELF:
                return self.class_of(func.value, at, depth + 1)
            resolved = self.resolve(func) or ""
            if resolved in COMPILE_FUNCS or resolved.endswith((".to_hetero", ".to_hetero_with_bases")) \
                    or resolved in ("to_hetero", "DataParallel") or resolved.endswith(
                        ("DataParallel", "DistributedDataParallel")):
                first = expr.args[0].value if expr.args else None
                return self.class_of(first, at, depth + 1)
            local = self._local_callee(expr)
            if isinstance(local, ClassInfo):
                return local
            if isinstance(local, FuncInfo) and local.returns and not local.is_async:
                # a factory: `def build(...): return DegreeAugmented(gnn)`
                found = {self.class_of(r.value, r.value, depth + 1) if r.value is not None else None
                         for r in local.returns}
                if len(found) == 1:
                    only = found.pop()
                    if isinstance(only, ClassInfo):
                        return only
            if isinstance(func, cst.Name) and func.value in self.imports and func.value[:1].isupper():
                return self.imports[func.value]
            if resolved and resolved[:1] != "" and (self.last_part(func) or "")[:1].isupper():
                return resolved
            return None
        if isinstance(expr, cst.Name):
            binding, func = self.lookup(expr.value, at or expr)
            if binding is not None and binding.how == "param" and func is not None and depth < 3:
                return self._param_class_from_callers(binding.node, func, depth)
            if binding is None or binding.how != "assign":
                return None
            return self.class_of(binding.value, binding.value, depth + 1)
        if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self":
            cls = self.enclosing_class(at or expr)
            if cls is None:
                return None
            for value in self._class_attr_values(cls, expr.attr.value):
                found = self.class_of(value, value, depth + 1)
                if found is not None:
                    return found
        return None

    # ------------------------------------------------------------------ compile analysis
    def compile_site(self, node: cst.CSTNode) -> Optional[CompileSite]:
        for site_node, site in self.compile_sites:
            if site_node is node:
                return site
        return None

    def _site_from_call(self, call: cst.Call, line: int, target_text: str, kind: str, api: str) -> CompileSite:
        mode = None
        dynamic: Optional[bool] = None
        fullgraph = False
        options: tuple[str, ...] = ()
        for arg in call.args:
            if arg.keyword is None:
                continue
            key = arg.keyword.value
            if key == "mode" and isinstance(arg.value, cst.SimpleString):
                mode = arg.value.evaluated_value  # type: ignore[assignment]
            elif key == "dynamic" and isinstance(arg.value, cst.Name):
                dynamic = {"True": True, "False": False}.get(arg.value.value)
            elif key == "fullgraph" and isinstance(arg.value, cst.Name):
                fullgraph = arg.value.value == "True"
            elif key == "options" and isinstance(arg.value, cst.Dict):
                options = tuple(
                    e.key.evaluated_value for e in arg.value.elements  # type: ignore[union-attr]
                    if isinstance(e, cst.DictElement) and isinstance(e.key, cst.SimpleString))
        return CompileSite(line, target_text, kind, mode, dynamic, fullgraph, options, api)

    def _analyse_compiled(self) -> None:
        # 1. decorators
        for info in list(self.func_info.values()):
            for deco in info.node.decorators:
                target = deco.decorator
                call = target if isinstance(target, cst.Call) else None
                resolved = self.resolve(call.func if call else target)
                if resolved in COMPILE_FUNCS:
                    why = f"compiled function `{info.qualname}`"
                    self._mark_compiled_func(info, why)
                    site = self._site_from_call(call, 0, info.qualname, "function", resolved) if call \
                        else CompileSite(0, info.qualname, "function", None, None, False, (), resolved)
                    self.compile_sites.append((deco, site))
        # 2. torch.compile(X) calls
        for call in self.compile_calls:
            api = self.resolve(call.func) or "torch.compile"
            target = call.args[0].value if call.args and call.args[0].keyword is None else None
            if target is None:
                # torch.compile(fullgraph=True) used as a decorator factory
                continue
            text = self.module.code_for_node(target)
            kind = self._mark_compiled_target(target, call, text)
            self.compile_sites.append((call, self._site_from_call(call, 0, text, kind, api)))
            if kind == "class":
                self.compile_targets[call] = self.class_of(target, call)
        # 3. model.compile()
        for call in self.method_compile_calls:
            receiver = call.func.value  # type: ignore[union-attr]
            rkind = self.kind(receiver)
            cls = self.class_of(receiver, call)
            if rkind != MODEL and cls is None:
                continue
            text = self.module.code_for_node(receiver)
            self._mark_class_target(cls)
            self.compile_sites.append((call, self._site_from_call(call, 0, text, "class", "Module.compile")))
            self.compile_targets[call] = cls
        # 4. library mode: every Module forward
        if self.options.assume_compiled == "modules":
            for cls in self.class_info.values():
                if self.is_module_class(cls):
                    self._mark_class(cls, f"forward of module `{cls.name}` (assume-compiled = \"modules\")")
        # 5. project facts: classes/functions compiled in other files
        for name, why in self.project.compiled.items():
            if name in self.classes:
                self._mark_class(self.classes[name], why)
            elif name in self.functions:
                self._mark_compiled_func(self.functions[name], why)

    def _mark_compiled_target(self, target: cst.BaseExpression, call: cst.Call, text: str) -> str:
        # optimizer.step / opt.step
        if isinstance(target, cst.Attribute):
            owner_kind = self.kind(target.value)
            if target.attr.value == "step" and (owner_kind == OPTIMIZER or "opt" in (self.last_part(target.value) or "")):
                return "optimizer_step"
            cls = self.class_of(target.value, call)
            if isinstance(cls, ClassInfo):
                method = self.method_of(cls, target.attr.value)
                if method is not None:
                    self._mark_compiled_func(method, f"compiled method `{method.qualname}`")
                    return "method"
            elif isinstance(cls, ImportRef):
                self.exported.compiled.append((ImportRef(cls.module, f"{cls.name}.{target.attr.value}", cls.level),
                                               f"compiled method `{cls.name}.{target.attr.value}`"))
                return "method"
        if isinstance(target, cst.Name):
            binding, _ = self.lookup(target.value, call)
            if binding is not None and binding.how == "def":
                info = self.func_info.get(binding.node)  # type: ignore[arg-type]
                if info is not None:
                    self._mark_compiled_func(info, f"compiled function `{info.qualname}`")
                    return "function"
            if binding is None and target.value in self.functions:
                self._mark_compiled_func(self.functions[target.value],
                                         f"compiled function `{target.value}`")
                return "function"
        cls = self.class_of(target, call)
        if cls is not None:
            self._mark_class_target(cls)
            return "class"
        if self.kind(target) == MODEL:
            return "class"
        return "unknown"

    def _mark_class_target(self, cls) -> None:
        if isinstance(cls, ClassInfo):
            self._mark_class(cls, f"compiled forward of `{cls.name}`")
        elif isinstance(cls, ImportRef):
            self.exported.compiled.append((cls, f"compiled forward of `{cls.name}`"))

    def _mark_class(self, cls: ClassInfo, why: str) -> None:
        if cls.name in self.compiled_classes:
            return
        self.compiled_classes[cls.name] = why
        for entry in ("forward",) + MESSAGE_PASSING_METHODS + ("__call__",):
            method = self.method_of(cls, entry)
            if method is not None:
                self._mark_compiled_func(method, f"compiled forward of `{cls.name}`"
                                         if why.startswith("compiled") else why)
        # submodules built in __init__ run inside the compiled forward too,
        # also inside ModuleList / Sequential / ModuleDict containers
        for values in cls.attrs.values():
            for value in self._container_elements(values):
                sub = self.class_of(value, value)
                if isinstance(sub, ClassInfo) and sub is not cls:
                    self._mark_class(sub, f"compiled forward of `{sub.name}` (submodule of `{cls.name}`)")
                elif isinstance(sub, ImportRef):
                    self.exported.compiled.append((sub, f"compiled forward of `{sub.name}` (submodule of `{cls.name}`)"))

    _CONTAINERS = ("ModuleList", "Sequential", "ModuleDict", "HeteroConv")

    def _container_elements(self, values, depth: int = 0) -> list:
        """``values`` plus, for module containers, the module expressions in
        them: ``ModuleList(Conv(...) for _ in range(3))``, ``Sequential(a, b)``,
        ``ModuleDict({"a": A()})``, PyG's ``Sequential("x", [(Conv(...), "...")])``."""
        out = []
        for value in values:
            out.append(value)
            if depth >= 4 or not isinstance(value, cst.Call) or \
                    (self.last_part(value.func) or "") not in self._CONTAINERS:
                continue
            todo = [a.value for a in value.args]
            while todo:
                expr = todo.pop()
                if isinstance(expr, cst.Call) and (self.last_part(expr.func) or "") in self._CONTAINERS:
                    out += self._container_elements([expr], depth + 1)
                elif isinstance(expr, cst.Call):
                    out.append(expr)
                elif isinstance(expr, (cst.List, cst.Tuple, cst.Set)):
                    todo += [e.value for e in expr.elements if isinstance(e, cst.Element)]
                elif isinstance(expr, cst.Dict):
                    todo += [e.value for e in expr.elements if isinstance(e, cst.DictElement)]
                elif isinstance(expr, (cst.ListComp, cst.GeneratorExp, cst.SetComp)):
                    todo.append(expr.elt)
                elif isinstance(expr, cst.DictComp):
                    todo.append(expr.value)
        return out

    def _mark_compiled_func(self, info: FuncInfo, why: str) -> None:
        if info in self.compiled_funcs:
            return
        self.compiled_funcs[info] = why
        for callee, call in self._callees(info):
            if isinstance(callee, FuncInfo):
                self._mark_compiled_func(callee, why)
            elif isinstance(callee, ClassInfo):
                self._mark_class(callee, f"compiled forward of `{callee.name}`")
            elif isinstance(callee, ImportRef):
                self.exported.compiled.append((callee, why))

    def _callees(self, info: FuncInfo) -> Iterator[tuple[object, cst.Call]]:
        """Local functions, methods and model classes a function calls."""
        for call in info.calls:
            if self.enclosing_function(call) is not info:
                continue  # calls inside nested defs belong to them
            local = self._local_callee(call)
            if isinstance(local, FuncInfo):
                yield local, call
                continue
            if isinstance(local, ClassInfo):
                continue  # instantiation, not a forward call
            # self.submodule(...) / model(...): the forward of its class
            func = call.func
            if isinstance(func, (cst.Name, cst.Attribute)):
                cls = self.class_of(func, call)
                if isinstance(cls, ClassInfo) and self.kind(func) == MODEL or isinstance(cls, ClassInfo):
                    yield cls, call
                elif isinstance(cls, ImportRef) and cls.name[:1].isupper():
                    yield cls, call
                elif isinstance(func, cst.Name) and func.value in self.imports and cls is None \
                        and self.lookup(func.value, call)[0] is None:
                    yield self.imports[func.value], call  # an imported helper function
                elif isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) \
                        and func.value.value in self.imports and cls is None:
                    # `from . import ops` ... `ops.check_finite(x)`: a function of a sibling module
                    ref = self.imports[func.value.value]
                    if ref.name and ref.name[:1].islower() and "." not in ref.name:
                        module = f"{ref.module}.{ref.name}" if ref.module else ref.name
                        yield ImportRef(module, func.attr.value, ref.level), call
                # model.encode(...) on a local class instance
                if isinstance(func, cst.Attribute) and not isinstance(func.value, cst.Call):
                    owner = self.class_of(func.value, call)
                    if isinstance(owner, ClassInfo) and not (isinstance(func.value, cst.Name)
                                                            and func.value.value == "self"):
                        method = self.method_of(owner, func.attr.value)
                        if method is not None:
                            yield method, call

    # ------------------------------------------------------------------ hot analysis
    def _is_step_trigger(self, call: cst.Call) -> bool:
        func = call.func
        if isinstance(func, cst.Attribute):
            attr = func.attr.value
            if attr == "backward":
                return True
            if attr == "step":
                owner = func.value
                kind = self.kind(owner)
                if kind == SCHEDULER:
                    return False
                name = (self.last_part(owner) or "").lower()
                if kind == OPTIMIZER or ("opt" in name and "sched" not in name):
                    return True
        if self._inside_forward_pass(call):
            # A layer calling its submodules in a loop is a forward pass, not
            # a training or inference loop.
            return False
        kind = self.kind(func) if isinstance(func, (cst.Name, cst.Attribute)) else UNKNOWN
        if kind == MODEL:
            return True
        if isinstance(func, cst.Attribute) and self.kind(func.value) == MODEL and func.attr.value in (
                "forward", "encode", "decode", "inference", "predict", "embed"):
            return True
        return False

    _FORWARD_METHODS = ("forward", "__call__", "_forward", "inference", "encode", "decode", "embed",
                        "reset_parameters", "__init__") + MESSAGE_PASSING_METHODS

    def _inside_forward_pass(self, node: cst.CSTNode) -> bool:
        """In a module's forward (or the like): loops there run layers, not
        steps. Other methods of a module (``fit``, ``attack``, ``explain``)
        can hold real training loops."""
        func = self.enclosing_function(node)
        if func is None or func.cls is None or not self.is_module_class(func.cls):
            return False
        if any(base.split(".")[-1].startswith("Lightning") for base in func.cls.bases):
            return False
        while func.parent is not None:
            func = func.parent
        return func.name in self._FORWARD_METHODS or func.name.startswith(("_forward", "forward_"))

    def _direct_triggers(self, stmts_root: cst.CSTNode, func: Optional[FuncInfo]) -> Iterator[cst.Call]:
        """Calls under ``stmts_root`` that are not inside a nested loop or def."""
        calls = func.calls if func is not None else self.module_calls
        for call in calls:
            ok = False
            for anc in self.ancestors(call):
                if anc is stmts_root:
                    ok = True
                    break
                if isinstance(anc, (cst.For, cst.While, cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                    break
            if ok:
                yield call

    def _analyse_hot(self) -> None:
        # Functions that run a step (not inside their own loop) when called.
        steps_when_called: dict[FuncInfo, bool] = {}

        def runs_step(info: FuncInfo, stack: frozenset = frozenset()) -> bool:
            if info in steps_when_called:
                return steps_when_called[info]
            if info in stack:
                return False
            result = False
            for call in self._direct_triggers(info.node.body, info):
                if self._is_step_trigger(call):
                    result = True
                    break
                callee = self._local_callee(call)
                if isinstance(callee, FuncInfo) and runs_step(callee, stack | {info}):
                    result = True
                    break
            steps_when_called[info] = result
            return result

        only_via_calls = []
        for loop in self.loops:
            func = self.enclosing_function(loop)
            calls = list(self._direct_triggers(loop.body, func))  # type: ignore[attr-defined]
            if any(self._is_step_trigger(call) for call in calls):
                self.hot_loops[loop] = self._loop_why(loop)
            elif any(isinstance(callee, FuncInfo) and runs_step(callee)
                     for callee in (self._local_callee(call) for call in calls)):
                self.hot_loops[loop] = self._loop_why(loop)
                only_via_calls.append((loop, calls))
        # The innermost loop is the hot one: an epoch loop that calls a
        # function holding its own batch loop is not (so an evaluation it also
        # calls once per epoch is not per step either).
        with_hot_loop = {self.enclosing_function(loop) for loop in self.hot_loops} - {None}
        for loop, calls in only_via_calls:
            callees = [c for c in (self._local_callee(call) for call in calls) if isinstance(c, FuncInfo)]
            if any(c in with_hot_loop for c in callees) and not any(self._updates_when_called(c) for c in callees):
                del self.hot_loops[loop]
        # Lightning-style step hooks run once per batch.
        for cls in self.class_info.values():
            for hook in LIGHTNING_STEP_HOOKS:
                method = cls.methods.get(hook)
                if method is not None:
                    self._mark_hot_func(method, f"`{cls.name}.{hook}` runs every batch")
        for name, why in self.project.hot.items():
            if name in self.classes:
                cls = self.classes[name]
                forward = self.method_of(cls, "forward")
                if forward is not None:
                    self._mark_hot_func(forward, why)
        # Functions called from hot loops are hot.
        for loop, why in list(self.hot_loops.items()):
            func = self.enclosing_function(loop)
            calls = func.calls if func is not None else self.module_calls
            for call in calls:
                if self.in_loop_body(call, loop):
                    self._mark_hot_call(call, why)

    def _updates_when_called(self, info: FuncInfo, depth: int = 0) -> bool:
        """Runs ``.backward()`` or an optimizer step outside its own loops
        (full-batch training), directly or through local functions."""
        for call in self._direct_triggers(info.node.body, info):
            func = call.func
            if isinstance(func, cst.Attribute) and (func.attr.value == "backward" or (
                    func.attr.value == "step" and self._is_step_trigger(call))):
                return True
            callee = self._local_callee(call)
            if isinstance(callee, FuncInfo) and depth < 3 and callee is not info \
                    and self._updates_when_called(callee, depth + 1):
                return True
        return False

    def _loop_why(self, loop: cst.CSTNode) -> str:
        if isinstance(loop, cst.For) and self._looks_like_loader(loop.iter):
            return "inside the loop over batches"
        return "inside the training loop"

    def _mark_hot_call(self, call: cst.Call, why: str) -> None:
        callee = self._local_callee(call)
        if isinstance(callee, FuncInfo):
            self._mark_hot_func(callee, why)
            return
        func = call.func
        if isinstance(func, (cst.Name, cst.Attribute)) and (self.kind(func) == MODEL or isinstance(
                self.class_of(func, call), (ClassInfo, ImportRef))):
            cls = self.class_of(func, call)
            if isinstance(cls, ClassInfo):
                forward = self.method_of(cls, "forward")
                if forward is not None:
                    self._mark_hot_func(forward, f"forward of `{cls.name}` runs every step")
            elif isinstance(cls, ImportRef):
                self.exported.hot.append((cls, f"forward of `{cls.name}` runs every step"))
        if isinstance(func, cst.Attribute) and not isinstance(func.value, cst.Call):
            owner = self.class_of(func.value, call)
            if isinstance(owner, ClassInfo):
                method = self.method_of(owner, func.attr.value)
                if method is not None:
                    self._mark_hot_func(method, why)

    def _mark_hot_func(self, info: FuncInfo, why: str) -> None:
        if info in self.hot_funcs:
            return
        self.hot_funcs[info] = why
        for call in info.calls:
            if self.enclosing_function(call) is info:
                self._mark_hot_call(call, why)

    # ------------------------------------------------------------------ helpers for rules
    def exported_facts(self) -> ExportedFacts:
        if not getattr(self, "_fed_exported", False):
            self._fed_exported = True
            self._export_fed()
        return self.exported

    def _export_fed(self) -> None:
        """``enc = build_encoder(...)`` from another file, then ``enc`` fed a
        variable-size loader's batches here: tell that file (its compile call
        is where GNN006/GNN007 report)."""
        if not any(ref.name.split(".")[-1] in _FEED_LOADERS for ref in self.imports.values()):
            return
        for call in self._all_calls():
            func = call.func
            assign = self.parent.get(call)
            if not (isinstance(func, cst.Name) and func.value in self.imports and func.value[:1].islower()
                    and isinstance(assign, cst.Assign) and len(assign.targets) == 1):
                continue
            ref = self._ref_for_target(assign.targets[0].target, call)
            feeds = self._feeds_from_refs([ref]) if ref is not None else []
            if feeds:
                self.exported.fed.append((self.imports[func.value], f"{feeds[0].loader}: {feeds[0].via}"))

    # ---- loader feeding / compile sites (GNN002, GNN006, GNN007, GNN012) ----
    # What a compile call says (its options), which names hold the compiled
    # object, which variable-size PyG loaders feed it, which optimizer a
    # `.step` belongs to and what changes its lr, and whether a model has
    # lazily initialised parameters. Conservative: when unsure, the answer is
    # "no" (no feed, not lazy, not the same optimizer).

    def compile_call_node(self, site_node: cst.CSTNode) -> Optional[cst.Call]:
        """The Call holding a compile site's arguments (None: bare decorator)."""
        if isinstance(site_node, cst.Decorator):
            return site_node.decorator if isinstance(site_node.decorator, cst.Call) else None
        return site_node if isinstance(site_node, cst.Call) else None

    def compile_kwarg(self, site_node: cst.CSTNode, name: str) -> Optional[cst.Arg]:
        call = self.compile_call_node(site_node)
        for arg in call.args if call is not None else ():
            if arg.keyword is not None and arg.keyword.value == name:
                return arg
        return None

    def literal_value(self, expr: Optional[cst.CSTNode], at: Optional[cst.CSTNode] = None, depth: int = 0):
        """A Python literal (str/int/float/bool/None) an expression surely is,
        through one name binding; ``_NO_VALUE`` otherwise."""
        if expr is None or depth > 3:
            return _NO_VALUE
        if isinstance(expr, cst.SimpleString):
            return expr.evaluated_value
        if isinstance(expr, (cst.Integer, cst.Float)):
            return expr.evaluated_value
        if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus) \
                and isinstance(expr.expression, (cst.Integer, cst.Float)):
            return -expr.expression.evaluated_value
        if isinstance(expr, cst.Name):
            if expr.value in ("True", "False", "None"):
                return {"True": True, "False": False, "None": None}[expr.value]
            binding = self._feed_binding(expr.value, at or expr)
            if binding is not None and binding.how == "assign":
                return self.literal_value(binding.value, binding.value, depth + 1)
        return _NO_VALUE

    def _star_kwarg(self, site_node: cst.CSTNode, name: str):
        """``name`` passed through ``**kwargs`` to a compile call: its value
        expression, None when the kwargs dicts surely lack it (or there are
        none), ``_NO_VALUE`` when a ``**`` argument cannot be read."""
        call = self.compile_call_node(site_node)
        for arg in call.args if call is not None else ():
            if arg.star != "**":
                continue
            value = arg.value
            if isinstance(value, cst.Name):
                binding = self._feed_binding(value.value, value)
                value = binding.value if binding is not None and binding.how == "assign" else None
            if isinstance(value, cst.Dict):
                for element in value.elements:
                    if not isinstance(element, cst.DictElement):
                        return _NO_VALUE
                    if self.literal_value(element.key) == name:
                        return element.value
                continue
            if isinstance(value, cst.Call) and self.resolve(value.func) == "dict" and \
                    all(a.keyword is not None for a in value.args):
                for a in value.args:
                    if a.keyword.value == name:
                        return a.value
                continue
            return _NO_VALUE
        return None

    def compile_dynamic(self, site_node: cst.CSTNode) -> object:
        """``dynamic=`` of a compile site: True/False/None (not given or
        None), or ``_NO_VALUE`` when it is an expression gnnlint cannot read
        (also through ``**kwargs``)."""
        arg = self.compile_kwarg(site_node, "dynamic")
        expr = arg.value if arg is not None else self._star_kwarg(site_node, "dynamic")
        if expr is None or expr is _NO_VALUE:
            return expr
        value = self.literal_value(expr, expr)
        return value if value in (True, False, None) else _NO_VALUE

    def cudagraphs_setting(self, site_node: cst.CSTNode) -> Optional[str]:
        """How a compile site turns on CUDA graphs: "reduce-overhead",
        "max-autotune", "options" (``options={"triton.cudagraphs": True}``)."""
        arg = self.compile_kwarg(site_node, "mode")
        expr = arg.value if arg is not None else self._star_kwarg(site_node, "mode")
        if expr is not None and expr is not _NO_VALUE:
            mode = self.literal_value(expr, expr)
            if mode in ("reduce-overhead", "max-autotune"):
                return mode
        arg = self.compile_kwarg(site_node, "options")
        if arg is not None and isinstance(arg.value, cst.Dict):
            for element in arg.value.elements:
                if isinstance(element, cst.DictElement) and \
                        self.literal_value(element.key) == "triton.cudagraphs" and \
                        self.literal_value(element.value) is True:
                    return "options"
        return None

    def _feed_binding(self, name: str, at: cst.CSTNode) -> Optional[Binding]:
        """``lookup``, falling back to the last module-level binding for a
        global read inside a function defined before the global is assigned."""
        binding, _scope = self.lookup(name, at)
        if binding is None and self.enclosing_function(at) is not None:
            if self._binds_locally(self.enclosing_function(at), name):
                return None
            bindings = self.module_bindings.get(name)
            if bindings:
                return bindings[-1]
        return binding

    def _binds_locally(self, func: Optional[FuncInfo], name: str) -> bool:
        while func is not None:
            if name in func.bindings:
                return True
            func = func.parent
        return False

    # -- which names hold the compiled object ------------------------------------
    def _compile_holder(self, call: cst.CSTNode) -> tuple[cst.CSTNode, Optional[cst.CSTNode]]:
        """Walk up from a compile call through ``a if c else b``, ``x or y``
        and ``.to(device)``-like calls to the node whose parent uses the value."""
        node = call
        while True:
            parent = self.parent.get(node)
            if isinstance(parent, (cst.IfExp, cst.BooleanOperation)) and getattr(parent, "test", None) is not node:
                node = parent
                continue
            if isinstance(parent, cst.Attribute) and parent.value is node \
                    and parent.attr.value in _MODEL_METHODS_SELF:
                grand = self.parent.get(parent)
                if isinstance(grand, cst.Call) and grand.func is parent:
                    node = grand
                    continue
            return node, parent

    def compiled_refs(self, site_node: cst.CSTNode, _depth: int = 0) -> list[tuple]:
        """Who holds the compiled object of a compile site, as refs:
        ``("name", name, scope FuncInfo|None, after_order)``,
        ``("self", attr, ClassInfo)``, ``("func", FuncInfo)`` or
        ``("arg", Call)`` (passed straight into a call)."""
        refs: list[tuple] = []
        if isinstance(site_node, cst.Decorator):
            fdef = self.parent.get(site_node)
            info = self.func_info.get(fdef) if isinstance(fdef, cst.FunctionDef) else None
            if info is None:
                return refs
            if info.cls is not None and info.name == "forward":
                refs.extend(self._instance_refs(info.cls))
            else:
                refs.append(("func", info))
            return refs
        if not isinstance(site_node, cst.Call):
            return refs
        resolved = self.resolve(site_node.func)
        if resolved not in COMPILE_FUNCS:  # model.compile(): compiled in place
            receiver = site_node.func.value if isinstance(site_node.func, cst.Attribute) else None
            ref = self._ref_for_target(receiver, site_node)
            return [ref] if ref is not None else []
        holder, parent = self._compile_holder(site_node)
        if isinstance(parent, (cst.Assign, cst.AnnAssign)):
            targets = [t.target for t in parent.targets] if isinstance(parent, cst.Assign) else [parent.target]
            for target in targets:
                ref = self._ref_for_target(target, site_node)
                if ref is not None:
                    refs.append(ref)
        elif isinstance(parent, cst.Return) and _depth < 3:
            func = self.enclosing_function(site_node)
            if func is not None:
                for caller in self._callers_of(func):
                    refs.extend(self.compiled_refs(caller, _depth + 1) if self.resolve(caller.func) in COMPILE_FUNCS
                                else self._refs_of_value(caller, _depth + 1))
        elif isinstance(parent, cst.Arg):
            outer = self.parent.get(parent)
            if isinstance(outer, cst.Call):
                refs.append(("arg", outer))
                if (self.last_part(outer.func) or "") in _FEED_MODEL_WRAPPERS and _depth < 3:
                    refs.extend(self._refs_of_value(outer, _depth + 1))  # DDP(torch.compile(model))
        return refs

    def _refs_of_value(self, value: cst.Call, depth: int) -> list[tuple]:
        """Refs for the names a call's result is assigned to (``m = build()``)."""
        _holder, parent = self._compile_holder(value)
        refs: list[tuple] = []
        if isinstance(parent, (cst.Assign, cst.AnnAssign)):
            targets = [t.target for t in parent.targets] if isinstance(parent, cst.Assign) else [parent.target]
            for target in targets:
                ref = self._ref_for_target(target, value)
                if ref is not None:
                    refs.append(ref)
        elif isinstance(parent, cst.Arg) and isinstance(self.parent.get(parent), cst.Call):
            refs.append(("arg", self.parent[parent]))
        return refs

    def _ref_for_target(self, target: Optional[cst.CSTNode], at: cst.CSTNode) -> Optional[tuple]:
        if isinstance(target, cst.Attribute) and target.attr.value == "forward" \
                and isinstance(target.value, (cst.Name, cst.Attribute)):
            target = target.value  # model.forward = torch.compile(model.forward)
        if isinstance(target, cst.Name):
            stmt = self.statement_of(at)
            return ("name", target.value, self.enclosing_function(at), self.order.get(stmt, 0), stmt)
        if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and target.value.value == "self":
            cls = self.enclosing_class(at)
            if cls is not None:
                return ("self", target.attr.value, cls)
        return None

    def _instance_refs(self, cls: ClassInfo) -> list[tuple]:
        refs = []
        for node in self.preorder:
            if isinstance(node, cst.Assign) and isinstance(node.value, cst.Call) \
                    and self.class_of(node.value, node.value) is cls:
                for target in node.targets:
                    ref = self._ref_for_target(target.target, node.value)
                    if ref is not None:
                        refs.append(ref)
        return refs

    def _all_calls(self) -> list[cst.Call]:
        cached = getattr(self, "_feed_all_calls", None)
        if cached is None:
            cached = [n for n in self.preorder if isinstance(n, cst.Call)]
            self._feed_all_calls = cached
        return cached

    def _callers_index(self) -> tuple[dict, dict, dict]:
        """Every call once: by the local function it resolves to, and the
        attribute calls (``obj.method(...)``) by method name."""
        index = getattr(self, "_callers_idx", None)
        if index is None:
            by_callee: dict = {}
            by_attr: dict = {}
            for c in self._all_calls():
                callee = self._local_callee(c)
                if callee is not None:
                    by_callee.setdefault(callee, []).append(c)
                if isinstance(c.func, cst.Attribute) and not isinstance(c.func.value, cst.Call):
                    by_attr.setdefault(c.func.attr.value, []).append(c)
            order = {id(c): i for i, c in enumerate(self._all_calls())}
            index = self._callers_idx = (by_callee, by_attr, order)
        return index

    def _callers_of(self, func: FuncInfo) -> list[cst.Call]:
        def compute():
            by_callee, by_attr, order = self._callers_index()
            calls = list(by_callee.get(func, ()))
            if func.cls is not None:
                calls += [c for c in by_attr.get(func.name, ()) if c not in calls
                          and self.class_of(c.func.value, c) is func.cls]
            return sorted(calls, key=lambda c: order.get(id(c), 0))
        return self._memoised((func, "callers"), compute, [])

    def _is_ref_expr(self, expr: cst.CSTNode, ref: tuple, at: cst.CSTNode) -> bool:
        kind = ref[0]
        if kind == "name":
            if not (isinstance(expr, cst.Name) and expr.value == ref[1]):
                return False
            _k, name, scope, after, stmt = ref
            here = self.enclosing_function(at)
            if here is scope:
                return self.order.get(at, 0) > after and not any(a is stmt for a in self.ancestors(at))
            # a closure or a function reading the module-level name
            func = here
            while func is not None and func is not scope:
                if name in func.bindings:
                    return False
                func = func.parent
            return func is scope
        if kind == "self":
            if not (isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name)
                    and expr.value.value == "self" and expr.attr.value == ref[1]):
                return False
            cls = self.enclosing_class(at)
            return cls is not None and (cls is ref[2] or self._inherits(cls, ref[2]))
        return False

    def _inherits(self, cls: ClassInfo, base: ClassInfo, seen: Optional[set] = None) -> bool:
        seen = seen or set()
        for name in cls.bases:
            local = self.classes.get(name.split(".")[-1])
            if local is base:
                return True
            if local is not None and local.name not in seen:
                seen.add(local.name)
                if self._inherits(local, base, seen):
                    return True
        return False

    def ref_calls(self, ref: tuple) -> list[cst.Call]:
        """Calls that run the compiled object a ref holds."""
        if ref[0] == "func":
            return [c for c in self._all_calls() if self._local_callee(c) is ref[1]]
        if ref[0] == "arg":
            return []
        return [c for c in self._all_calls() if self._is_ref_expr(c.func, ref, c)]

    def _ref_passes(self, ref: tuple) -> Iterator[tuple[str, object, cst.Call]]:
        """Where the compiled object is passed on: ("ref", new ref, call) for a
        local function/class, ("external", None, call) for anything else."""
        if ref[0] == "arg":
            yield "external", None, ref[1]
            return
        if ref[0] == "func":
            return
        for call in self._all_calls():
            for index, arg in enumerate(call.args):
                if arg.star or not self._is_ref_expr(arg.value, ref, arg.value):
                    continue
                callee = self._local_callee(call)
                if isinstance(callee, ClassInfo):
                    init = self.method_of(callee, "__init__")
                    param = self._param_for(init, call, index, arg, skip_self=True) if init else None
                    if param is not None:
                        for node in self.preorder:
                            if isinstance(node, cst.Assign) and isinstance(node.value, cst.Name) \
                                    and node.value.value == param and self.enclosing_function(node) is init:
                                for target in node.targets:
                                    new = self._ref_for_target(target.target, node)
                                    if new is not None and new[0] == "self":
                                        yield "ref", new, call
                    continue
                if isinstance(callee, FuncInfo):
                    skip_self = callee.cls is not None and isinstance(call.func, cst.Attribute)
                    param = self._param_for(callee, call, index, arg, skip_self)
                    if param is not None:
                        yield "ref", ("name", param, callee, -1, None), call
                    continue
                yield "external", None, call

    def _param_for(self, func: FuncInfo, call: cst.Call, index: int, arg: cst.Arg,
                   skip_self: bool) -> Optional[str]:
        if arg.keyword is not None:
            return arg.keyword.value if arg.keyword.value in func.params else None
        params = [p.name.value for p in list(func.node.params.posonly_params) + list(func.node.params.params)]
        if skip_self and params and params[0] in ("self", "cls"):
            params = params[1:]
        positional = sum(1 for a in call.args[:index] if a.keyword is None)
        return params[positional] if positional < len(params) else None

    # -- which loaders feed it ---------------------------------------------------
    def variable_size_loader(self, expr: Optional[cst.CSTNode], at: Optional[cst.CSTNode] = None,
                             depth: int = 0) -> Optional[str]:
        """The PyG loader class whose batches (of varying size) ``expr``
        yields: ``NeighborLoader(...)``, a name or ``self.attr`` bound to one,
        ``enumerate``/``tqdm``/``zip`` of one, a local function returning one,
        a parameter a local caller binds to one."""
        if expr is None or depth > 6:
            return None
        at = at or expr
        if isinstance(expr, cst.Call):
            resolved = self.resolve(expr.func) or ""
            last = resolved.split(".")[-1]
            if resolved.startswith(("torch_geometric.loader", "torch_geometric.data")) and last in _FEED_LOADERS:
                first = expr.args[0].value if expr.args and expr.args[0].keyword is None else None
                if last in ("DataLoader", "DataListLoader") and isinstance(first, (cst.List, cst.Tuple)) \
                        and len(first.elements) == 1:
                    return None  # DataLoader([data]): the same single graph every step
                return last  # (PyG 1.x kept the loaders in torch_geometric.data)
            if resolved.startswith("torch_geometric.data") and last in _FEED_LIGHTNING_DATA:
                mode = next((self.literal_value(a.value, a.value) for a in expr.args
                             if a.keyword is not None and a.keyword.value == "loader"), None)
                return None if mode == "full" else last
            if (resolved.startswith("torch_geometric.loader") and last in _FEED_LOADER_WRAPPERS) or \
                    last in _FEED_ITER_WRAPPERS:
                for arg in expr.args:
                    found = self.variable_size_loader(arg.value, at, depth + 1)
                    if found:
                        return found
                return None
            local = self._local_callee(expr)
            if isinstance(local, ClassInfo):  # class NeighborSampler(RawNeighborSampler): ...
                for base in local.bases:
                    found = self.variable_size_loader(cst.Call(func=cst.parse_expression(base)), at, depth + 1) \
                        if base else None
                    if found:
                        return found
                return None
            if local is None and isinstance(expr.func, cst.Attribute) and not isinstance(expr.func.value, cst.Call):
                owner = self.class_of(expr.func.value, at)
                if isinstance(owner, ClassInfo):
                    local = self.method_of(owner, expr.func.attr.value)
            if isinstance(local, FuncInfo):
                for ret in local.returns:
                    found = self.variable_size_loader(ret.value, ret, depth + 1)
                    if found:
                        return found
            return None
        if isinstance(expr, cst.Name):
            binding = self._feed_binding(expr.value, at)
            if binding is None:
                return None
            if binding.how == "assign":
                return self.variable_size_loader(binding.value, binding.value, depth + 1)
            if binding.how == "unpack" and isinstance(binding.value, cst.Call) and binding.index >= 0:
                local = self._local_callee(binding.value)
                if isinstance(local, FuncInfo):
                    for ret in local.returns:
                        if isinstance(ret.value, cst.Tuple) and binding.index < len(ret.value.elements):
                            found = self.variable_size_loader(ret.value.elements[binding.index].value, ret,
                                                              depth + 1)
                            if found:
                                return found
                return None
            if binding.how == "iter" and isinstance(binding.value, (cst.List, cst.Tuple)):
                return self.variable_size_loader(binding.value, at, depth + 1)
            if binding.how == "param":
                func = self.enclosing_function(binding.node) if binding.node is not None else None
                if func is None:
                    return None
                for caller in self._callers_of(func):
                    value = self._arg_for_param(func, caller, expr.value)
                    found = self.variable_size_loader(value, caller, depth + 1) if value is not None else None
                    if found:
                        return found
                if func.name == "__init__" and func.cls is not None:
                    for call in self._all_calls():
                        if self._local_callee(call) is func.cls:
                            value = self._arg_for_param(func, call, expr.value)
                            found = self.variable_size_loader(value, call, depth + 1) if value is not None else None
                            if found:
                                return found
            return None
        if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self":
            cls = self.enclosing_class(at)
            if cls is None:
                return None
            for value in self._class_attr_values(cls, expr.attr.value):
                found = self.variable_size_loader(value, value, depth + 1)
                if found:
                    return found
            return None
        if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name):
            owner = self.class_of(expr.value, at)  # dm.train_loader, dm being a local class
            if isinstance(owner, ClassInfo):
                for value in self._class_attr_values(owner, expr.attr.value):
                    found = self.variable_size_loader(value, value, depth + 1)
                    if found:
                        return found
            return None
        if isinstance(expr, cst.Subscript):
            return self.variable_size_loader(expr.value, at, depth + 1)
        if isinstance(expr, (cst.Dict, cst.List, cst.Tuple)):
            for element in expr.elements:
                value = element.value if not isinstance(element, cst.DictElement) else element.value
                found = self.variable_size_loader(value, at, depth + 1)
                if found:
                    return found
            return None
        if isinstance(expr, cst.IfExp):
            return self.variable_size_loader(expr.body, at, depth + 1) or \
                self.variable_size_loader(expr.orelse, at, depth + 1)
        return None

    def _arg_for_param(self, func: FuncInfo, call: cst.Call, name: str) -> Optional[cst.BaseExpression]:
        params = [p.name.value for p in list(func.node.params.posonly_params) + list(func.node.params.params)]
        if params and params[0] in ("self", "cls") and (func.cls is not None):
            params = params[1:]
        positional = 0
        for arg in call.args:
            if arg.star:
                return None
            if arg.keyword is not None:
                if arg.keyword.value == name:
                    return arg.value
                continue
            if positional < len(params) and params[positional] == name:
                return arg.value
            positional += 1
        return None

    @staticmethod
    def names_in(node: Optional[cst.CSTNode]) -> set[str]:
        """Names read in an expression (not attribute names nor keywords)."""
        out: set[str] = set()
        if node is None:
            return out
        todo = [node]
        while todo:
            current = todo.pop()
            if isinstance(current, cst.Name):
                out.add(current.value)
                continue
            if isinstance(current, cst.Attribute):
                todo.append(current.value)
                continue
            if isinstance(current, cst.Arg):
                todo.append(current.value)
                continue
            todo.extend(current.children)
        return out

    def _assignments_in(self, func: Optional[FuncInfo]) -> list[tuple[set[str], cst.CSTNode]]:
        """(target names, value) for the assignments and loop targets of one
        scope (not nested defs)."""
        cache = getattr(self, "_feed_assign_cache", None)
        if cache is None:
            cache = {}
            for node in self.preorder:
                pairs = []
                if isinstance(node, cst.Assign):
                    pairs = [(self.names_in(t.target), node.value) for t in node.targets]
                elif isinstance(node, (cst.AnnAssign, cst.AugAssign)) and node.value is not None:
                    pairs = [(self.names_in(node.target), node.value)]
                elif isinstance(node, (cst.For, cst.CompFor)):
                    pairs = [(self.names_in(node.target), node.iter)]
                elif isinstance(node, cst.NamedExpr):
                    pairs = [(self.names_in(node.target), node.value)]
                elif isinstance(node, cst.WithItem) and node.asname is not None:
                    pairs = [(self.names_in(node.asname.name), node.item)]
                if pairs:
                    cache.setdefault(self.enclosing_function(node), []).extend(pairs)
            self._feed_assign_cache = cache
        return cache.get(func, [])

    def _tainted(self, func: Optional[FuncInfo], seeds: set[str]) -> set[str]:
        """Names whose value comes from ``seeds`` within one scope."""
        tainted = set(seeds)
        pairs = self._assignments_in(func)
        changed = True
        while changed:
            changed = False
            for targets, value in pairs:
                if targets - tainted and self.names_in(value) & tainted:
                    tainted |= targets
                    changed = True
        return tainted

    def _call_mentions(self, call: cst.Call, names: set[str]) -> bool:
        return any(self.names_in(arg.value) & names for arg in call.args)

    def _mark_dynamic_calls(self) -> dict[cst.Call, set[str]]:
        """Each ``torch._dynamo.mark_dynamic(...)`` call and what it marks, by
        the last part of its first argument (``batch.x`` -> ``x``)."""
        cached = getattr(self, "_feed_mark_calls", None)
        if cached is None:
            cached = {}
            for call in self._all_calls():
                resolved = self.resolve(call.func) or ""
                if resolved.startswith("torch") and resolved.split(".")[-1] in ("mark_dynamic", "maybe_mark_dynamic") \
                        and call.args:
                    first = call.args[0].value
                    keys = {self.last_part(first) or self.module.code_for_node(first)}
                    if isinstance(first, cst.Subscript):
                        keys.add(self.last_part(first.value) or "")
                    cached[call] = keys
            self._feed_mark_calls = cached
        return cached

    def mark_dynamic_keys(self) -> set[str]:
        """What ``torch._dynamo.mark_dynamic(...)`` marks anywhere in this file."""
        return set().union(*self._mark_dynamic_calls().values())

    def _marks_in_loop(self, loop: cst.CSTNode, func: Optional[FuncInfo]) -> set[str]:
        """What the body of ``loop`` marks dynamic: directly, or through the
        local functions it calls (``batch = mark_batch_dynamic(batch)``)."""
        marks = self._mark_dynamic_calls()
        keys: set[str] = set()
        todo = [c for c in (func.calls if func is not None else self.module_calls) if self.in_loop_body(c, loop)]
        seen: set = set()
        while todo:
            call = todo.pop()
            if call in marks:
                keys |= marks[call]
                continue
            callee = self._local_callee(call)
            if isinstance(callee, FuncInfo) and callee not in seen and len(seen) < 20:
                seen.add(callee)
                todo += [c for c in callee.calls if self.enclosing_function(c) is callee]
        return keys

    def _loop_mark_keys(self, loop: cst.CSTNode, func: Optional[FuncInfo]) -> set[str]:
        """The marks that apply to the batches of a loop over a loader: its
        own; none when the file's marks all belong to other such loops (a
        per-batch helper the training loop calls does not mark the eval
        loop's batches); else every mark in the file (marked somewhere we
        cannot place: a collate function, the caller)."""
        own = self._marks_in_loop(loop, func)
        if own or not self._mark_dynamic_calls():
            return own
        taken: set[str] = set()
        for other in self.loops:
            if other is loop or not isinstance(other, cst.For) or not self.variable_size_loader(other.iter, other):
                continue
            taken |= self._marks_in_loop(other, self.enclosing_function(other))
        return set() if taken >= self.mark_dynamic_keys() else self.mark_dynamic_keys()

    def _unmarked_args(self, call: cst.Call, marked: Optional[set[str]] = None) -> list[str]:
        """Tensor-like arguments of a call whose dims ``mark_dynamic`` does not cover."""
        marked = self.mark_dynamic_keys() if marked is None else marked
        out = []
        for arg in call.args:
            value = arg.value
            if self.kind(value) == SCALAR:
                continue
            last = self.last_part(value) or ""
            if last in ("batch_size", "num_graphs", "num_nodes", "num_edges") or last.startswith("num_"):
                continue
            keys = {last, self.module.code_for_node(value)}
            if isinstance(value, cst.Name):
                binding = self._feed_binding(value.value, value)
                if binding is not None and binding.how == "assign":
                    keys.add(self.last_part(binding.value) or "")
            if self.kind(value) == BATCH and marked:
                continue  # the whole batch: trust the marks on its fields
            if not keys & marked:
                out.append(self.module.code_for_node(value))
        return out

    def pipeline_padded(self) -> bool:
        """The file pads its batches to fixed sizes with PyG's ``Pad`` / ``ToDense``."""
        cached = getattr(self, "_feed_padded", None)
        if cached is None:
            cached = False
            for call in self._all_calls():
                resolved = self.resolve(call.func) or ""
                if resolved.startswith("torch_geometric.transforms") and resolved.split(".")[-1] in ("Pad", "ToDense"):
                    cached = True
                    break
            self._feed_padded = cached
        return cached

    def _pads_in_loop(self, loop: cst.CSTNode, tainted: set[str], func: Optional[FuncInfo]) -> bool:
        for call in self._all_calls():
            if not self.in_loop_body(call, loop) or self.enclosing_function(call) is not func:
                continue
            name = (self.last_part(call.func) or "").lower()
            if "pad" in name and self._call_mentions(call, tainted):
                return True
        return False

    def _batch_source(self, call: cst.Call, depth: int = 0) -> Optional["LoaderFeed"]:
        """The variable-size loader whose batches reach ``call``'s arguments."""
        func = self.enclosing_function(call)
        child: cst.CSTNode = call
        for anc in self.ancestors(call):
            if isinstance(anc, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                break
            comp_fors = []
            if isinstance(anc, cst.For) and child is anc.body:
                comp_fors = [(anc, anc.target, anc.iter)]
            elif isinstance(anc, (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)):
                comp = anc.for_in
                while comp is not None:
                    comp_fors.append((comp, comp.target, comp.iter))
                    comp = comp.inner_for_in
            for loop, target, iterable in comp_fors:
                loader = self.variable_size_loader(iterable, loop)
                if not loader:
                    continue
                tainted = self._tainted(func, self.names_in(target))
                if not self._call_mentions(call, tainted):
                    continue
                padded = self.pipeline_padded() or (isinstance(loop, cst.For)
                                                    and self._pads_in_loop(loop, tainted, func))
                text = self.module.code_for_node(iterable)
                if len(text) > 40 or "\n" in text:
                    text = f"{loader}(...)"
                marks = self._loop_mark_keys(loop, func) if isinstance(loop, cst.For) else self.mark_dynamic_keys()
                return LoaderFeed(loader, call, f"`for ... in {text}`", padded,
                                  tuple(self._unmarked_args(call, marks)), bool(marks))
            child = anc
        feed = self._next_batch_source(call, func)
        if feed is not None:
            return feed
        if func is None or depth >= 3:
            return None
        params = set(func.params) - {"self", "cls"}
        tainted = self._tainted(func, params)
        if not self._call_mentions(call, tainted):
            return None
        for caller in self._callers_of(func):
            feed = self._batch_source(caller, depth + 1)
            if feed is not None:
                return LoaderFeed(feed.loader, call, feed.via, feed.padded, tuple(self._unmarked_args(call)),
                                  feed.marked_any)
        if func.cls is not None and func in self._lightning_reachable(func.cls):
            loader = self._lightning_loader(func.cls)
            if loader:
                return LoaderFeed(loader[0], call, loader[1], self.pipeline_padded(),
                                  tuple(self._unmarked_args(call)), bool(self.mark_dynamic_keys()))
        return None

    def _next_batch_source(self, call: cst.Call, func: Optional[FuncInfo]) -> Optional["LoaderFeed"]:
        """``batch = next(it)`` (``it = iter(loader)``) inside a loop, feeding ``call``."""
        if not any(isinstance(a, (cst.For, cst.While)) for a in self._ancestors_in(call, func)):
            return None
        seeds = set()
        for targets, value in self._assignments_in(func):
            if isinstance(value, cst.Call) and self.resolve(value.func) in ("next", "builtins.next") \
                    and value.args and self.variable_size_loader(value.args[0].value, value):
                seeds |= targets
                loader = self.variable_size_loader(value.args[0].value, value)
        if not seeds:
            return None
        tainted = self._tainted(func, seeds)
        if not self._call_mentions(call, tainted):
            return None
        return LoaderFeed(loader, call, "`next(iter(...))`", self.pipeline_padded(),
                          tuple(self._unmarked_args(call)), bool(self.mark_dynamic_keys()))

    def _ancestors_in(self, node: cst.CSTNode, func: Optional[FuncInfo]) -> Iterator[cst.CSTNode]:
        for anc in self.ancestors(node):
            if isinstance(anc, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                return
            yield anc

    def _lightning_reachable(self, cls: ClassInfo) -> set:
        """Methods of a Lightning-style module that run on every batch: the
        step hooks and what they call on ``self`` (``self(...)`` is forward)."""
        todo = [m for m in (self.method_of(cls, h) for h in LIGHTNING_STEP_HOOKS) if m is not None]
        seen: set = set()
        while todo:
            info = todo.pop()
            if info in seen:
                continue
            seen.add(info)
            for call in info.calls:
                func = call.func
                target = None
                if isinstance(func, cst.Name) and func.value == "self":
                    target = self.method_of(cls, "forward")
                elif isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) \
                        and func.value.value == "self":
                    target = self.method_of(cls, func.attr.value)
                if target is not None and target not in seen:
                    todo.append(target)
        return seen

    def _lightning_loader(self, cls: ClassInfo) -> Optional[tuple[str, str]]:
        """A variable-size loader a Lightning-style module is trained on: its
        own (or a data module's) ``*_dataloader()``, PyG's ``LightningNodeData``
        / ``LightningLinkData`` / ``LightningDataset``, or a loader passed to
        ``trainer.fit/validate/test/predict``."""
        classes = [cls] + [c for c in self.class_info.values() if c is not cls]
        for owner in classes:
            for hook in ("train_dataloader", "val_dataloader", "test_dataloader", "predict_dataloader"):
                method = self.method_of(owner, hook)
                if method is None or (owner is not cls and method.cls is cls):
                    continue
                for ret in method.returns:
                    loader = self.variable_size_loader(ret.value, ret)
                    if loader:
                        return loader, f"`{owner.name}.{hook}()`"
        for call in self._all_calls():
            resolved = self.resolve(call.func) or ""
            last = resolved.split(".")[-1]
            if resolved.startswith("torch_geometric.data") and last in _FEED_LIGHTNING_DATA:
                if self.variable_size_loader(call, call):
                    return last, f"`{last}(...)`"
            if isinstance(call.func, cst.Attribute) and call.func.attr.value in ("fit", "validate", "test",
                                                                                 "predict"):
                for arg in call.args[1:]:
                    loader = self.variable_size_loader(arg.value, call)
                    if loader:
                        return loader, f"`{self.module.code_for_node(call.func)}(...)`"
        return None

    def loader_feeds(self, site_node: cst.CSTNode) -> list["LoaderFeed"]:
        """Variable-size PyG loaders whose batches reach the object compiled at
        ``site_node``: it is called inside ``for batch in <loader>`` (directly,
        through local functions it is passed to, or from the step hooks of a
        Lightning-style module whose dataloaders yield them), or it is passed
        together with such a loader to a function (``train(model, loader)``)."""
        cache = getattr(self, "_feed_cache", None)
        if cache is None:
            cache = self._feed_cache = {}
        if site_node in cache:
            return cache[site_node]
        feeds = self._feeds_from_refs(self.compiled_refs(site_node))
        if not feeds and self.project.fed:
            feeds = self._fed_elsewhere(site_node)
        cache[site_node] = feeds
        return feeds

    def _fed_elsewhere(self, site_node: cst.CSTNode) -> list["LoaderFeed"]:
        """A top-level function returns the compiled object and another file
        feeds its result a loader's batches (ProjectFacts.fed)."""
        func = self.enclosing_function(site_node)
        if func is None or func.cls is not None or func.parent is not None or func.name not in self.project.fed:
            return []
        _holder, parent = self._compile_holder(site_node)
        names = {r[1] for r in self.compiled_refs(site_node) if r[0] == "name"}
        code = self.module.code_for_node(func.node)
        if not (isinstance(parent, cst.Return) or any(re.search(rf"\breturn\s+{re.escape(n)}\b", code) for n in names)):
            return []
        loader, _, via = self.project.fed[func.name].partition(": ")
        return [LoaderFeed(loader, site_node, f"{via}, via `{func.name}()`", False, (), False)]

    def _feeds_from_refs(self, refs: list[tuple]) -> list["LoaderFeed"]:
        feeds: list[LoaderFeed] = []
        todo = [(ref, 0) for ref in refs]
        seen: set = set()
        while todo:
            ref, depth = todo.pop()
            key = ref[:3] if ref[0] == "name" else ref
            if key in seen:
                continue
            seen.add(key)
            for call in self.ref_calls(ref):
                feed = self._batch_source(call)
                if feed is not None:
                    feeds.append(feed)
            if depth >= 3:
                continue
            for how, new, call in self._ref_passes(ref):
                if how == "ref":
                    todo.append((new, depth + 1))
                    continue
                feed = self._batch_source(call)
                if feed is not None:  # train_step(model, batch) inside `for batch in loader`
                    feeds.append(feed)
                    continue
                for arg in call.args:
                    loader = self.variable_size_loader(arg.value, call)
                    if loader:
                        name = self.module.code_for_node(call.func)
                        feeds.append(LoaderFeed(loader, call, f"`{name}(..., {self.module.code_for_node(arg.value)})`",
                                                self.pipeline_padded(), (), bool(self.mark_dynamic_keys())))
                        break
        return feeds

    # -- optimizers -----------------------------------------------------------------
    def optimizer_ctor(self, expr: Optional[cst.CSTNode], at: Optional[cst.CSTNode] = None,
                       depth: int = 0) -> Optional[cst.Call]:
        """The ``torch.optim.X(...)`` call an expression refers to."""
        if expr is None or depth > 5:
            return None
        if isinstance(expr, cst.Call):
            resolved = self.resolve(expr.func) or ""
            parts = resolved.split(".")
            if len(parts) == 3 and parts[:2] == ["torch", "optim"] and parts[2][:1].isupper() \
                    and parts[2] != "Optimizer":
                return expr
            return None
        if isinstance(expr, cst.Name):
            binding = self._feed_binding(expr.value, at or expr)
            if binding is not None and binding.how == "assign":
                return self.optimizer_ctor(binding.value, binding.value, depth + 1)
            if binding is not None and binding.how == "param" and binding.node is not None:
                func = self.enclosing_function(binding.node)
                found_ctors = set()
                for caller in self._callers_of(func) if func is not None else ():
                    value = self._arg_for_param(func, caller, expr.value)
                    found_ctors.add(self.optimizer_ctor(value, caller, depth + 1) if value is not None else None)
                if len(found_ctors) == 1:
                    return found_ctors.pop()  # every caller passes the same optimizer
            return None
        if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self":
            cls = self.enclosing_class(at or expr)
            if cls is not None:
                for value in self._class_attr_values(cls, expr.attr.value):
                    found = self.optimizer_ctor(value, value, depth + 1)
                    if found is not None:
                        return found
        return None

    def lr_changers(self, ctor: cst.Call) -> list[cst.CSTNode]:
        """LR schedulers built on the optimizer ``ctor`` creates, and manual
        writes to its ``param_groups[...]['lr']``."""
        out: list[cst.CSTNode] = []
        for call in self._all_calls():
            resolved = self.resolve(call.func) or ""
            last = resolved.split(".")[-1]
            is_sched = resolved.startswith("torch.optim.lr_scheduler.") or (
                resolved.startswith(("transformers", "timm", "torch_geometric.nn.resolver"))
                and ("schedule" in last.lower() or last.endswith("LR")))
            if not is_sched or last in ("LRScheduler", "_LRScheduler"):
                continue
            opt_arg = None
            for arg in call.args:
                if arg.keyword is not None and arg.keyword.value == "optimizer":
                    opt_arg = arg.value
            if opt_arg is None and call.args and call.args[0].keyword is None:
                opt_arg = call.args[0].value
            if opt_arg is not None and self.optimizer_ctor(opt_arg, call) is ctor:
                out.append(call)
        for node in self.preorder:
            if isinstance(node, (cst.Assign, cst.AugAssign)):
                targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
                for target in targets:
                    if self._lr_slot_of(target, node) is ctor:
                        out.append(node)
        return out

    def _lr_slot_of(self, target: cst.CSTNode, at: cst.CSTNode) -> Optional[cst.Call]:
        if not (isinstance(target, cst.Subscript) and len(target.slice) == 1
                and isinstance(target.slice[0].slice, cst.Index)
                and self.literal_value(target.slice[0].slice.value) == "lr"):
            return None
        group = target.value
        if isinstance(group, cst.Subscript):
            group = group.value  # opt.param_groups[0]['lr']
        elif isinstance(group, cst.Name):  # for g in opt.param_groups: g['lr'] = ...
            binding = self._feed_binding(group.value, at)
            if binding is None or binding.how != "iter":
                return None
            group = binding.value
        if isinstance(group, cst.Attribute) and group.attr.value == "param_groups":
            return self.optimizer_ctor(group.value, at)
        return None

    def compiled_steps(self, ctor: cst.Call) -> list[tuple[cst.CSTNode, object]]:
        """Where the step of the optimizer ``ctor`` creates runs compiled, with
        the ``dynamic=`` of that compile: ``torch.compile(opt.step)``, or
        ``opt.step()`` inside a compiled function."""
        out: list[tuple[cst.CSTNode, object]] = []
        for site_node, site in self.compile_sites:
            call = site_node if isinstance(site_node, cst.Call) else None
            if call is None or self.resolve(call.func) not in COMPILE_FUNCS or not call.args:
                continue
            target = call.args[0].value
            if isinstance(target, cst.Attribute) and target.attr.value == "step" \
                    and self.optimizer_ctor(target.value, call) is ctor:
                out.append((site_node, self.compile_dynamic(site_node)))
        for call in self._all_calls():
            func = call.func
            if not (isinstance(func, cst.Attribute) and func.attr.value == "step"):
                continue
            if not self.compiled_region(call) or self.optimizer_ctor(func.value, call) is not ctor:
                continue
            out.append((call, self._dynamic_of_region(call)))
        return out

    def _dynamic_of_region(self, node: cst.CSTNode) -> object:
        """``dynamic=`` of the compile that makes ``node``'s function compiled."""
        func = self.enclosing_function(node)
        while func is not None:
            for deco in func.node.decorators:
                site = self.compile_site(deco)
                if site is not None:
                    return self.compile_dynamic(deco)
            for site_node, site in self.compile_sites:
                if isinstance(site_node, cst.Call) and site.target == func.name:
                    return self.compile_dynamic(site_node)
            func = func.parent
        return None

    # -- lazily initialised models ----------------------------------------------
    @staticmethod
    def _is_lazy_literal(expr: Optional[cst.CSTNode]) -> bool:
        if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus) \
                and isinstance(expr.expression, cst.Integer) and expr.expression.value == "1":
            return True
        if isinstance(expr, cst.Tuple):
            return any(FileContext._is_lazy_literal(e.value) for e in expr.elements)
        if isinstance(expr, cst.List) and expr.elements:
            return FileContext._is_lazy_literal(expr.elements[0].value)
        return False

    def lazy_reason(self, expr: Optional[cst.CSTNode], at: Optional[cst.CSTNode] = None,
                    depth: int = 0) -> Optional[str]:
        """Why the module ``expr`` builds or names has lazily initialised
        parameters (a PyG layer with ``-1`` in_channels, ``torch.nn.Lazy*``,
        ``to_hetero`` over such a model), or None."""
        if expr is None or depth > 6:
            return None
        at = at or expr
        if isinstance(expr, cst.Call):
            func = expr.func
            if isinstance(func, cst.Attribute) and func.attr.value in _MODEL_METHODS_SELF:
                return self.lazy_reason(func.value, at, depth + 1)
            resolved = self.resolve(func) or ""
            last = resolved.split(".")[-1]
            if resolved.startswith("torch.nn.") and last.startswith("Lazy"):
                return f"`{last}`"
            if resolved.startswith("torch_geometric") and last in ("to_hetero", "to_hetero_with_bases") \
                    or resolved in COMPILE_FUNCS:
                return self.lazy_reason(expr.args[0].value, at, depth + 1) if expr.args else None
            if resolved.startswith("torch_geometric.nn") and last[:1].isupper():
                for arg in expr.args:
                    if (arg.keyword is None and arg is expr.args[0]) or (
                            arg.keyword is not None and arg.keyword.value in ("in_channels", "channel_list")):
                        if self._is_lazy_literal(arg.value):
                            return f"`{last}({self.module.code_for_node(arg.value)}, ...)`"
                return self._lazy_in_args(expr, depth)
            if resolved.startswith("torch.nn.") and last in ("Sequential", "ModuleList", "ModuleDict"):
                return self._lazy_in_args(expr, depth)
            local = self._local_callee(expr)
            if isinstance(local, FuncInfo):
                for ret in local.returns:
                    if isinstance(ret.value, cst.Name) and any(
                            self._runs_forward(c, ("name", ret.value.value)) for c in local.calls):
                        continue  # the factory runs a forward before returning the model
                    reason = self.lazy_reason(ret.value, ret, depth + 1)
                    if reason:
                        return reason
                return None
            if isinstance(local, ClassInfo):
                reason = self.class_lazy_reason(local)
                if reason is None and any(self._is_lazy_literal(a.value) for a in expr.args) \
                        and self._class_builds_pyg(local):
                    reason = f"`{local.name}` built with -1 channels"
                return reason
            return None
        if isinstance(expr, cst.Name):
            binding = self._feed_binding(expr.value, at)
            if binding is not None and binding.how == "assign":
                return self.lazy_reason(binding.value, binding.value, depth + 1)
            return None
        if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self":
            cls = self.enclosing_class(at)
            if cls is not None:
                for value in self._class_attr_values(cls, expr.attr.value):
                    reason = self.lazy_reason(value, value, depth + 1)
                    if reason:
                        return reason
        return None

    def _lazy_in_args(self, call: cst.Call, depth: int) -> Optional[str]:
        todo = [a.value for a in call.args]
        while todo:
            node = todo.pop()
            if isinstance(node, cst.Call):
                reason = self.lazy_reason(node, node, depth + 1)
                if reason:
                    return reason
                continue
            if isinstance(node, (cst.Lambda, cst.FunctionDef)):
                continue
            todo.extend(node.children)
        return None

    def _class_builds_pyg(self, cls: ClassInfo) -> bool:
        for info in cls.methods.values():
            for call in info.calls:
                resolved = self.resolve(call.func) or ""
                if resolved.startswith("torch_geometric.nn") and resolved.split(".")[-1][:1].isupper():
                    return True
        return False

    def class_lazy_reason(self, cls: ClassInfo, _seen: Optional[set] = None) -> Optional[str]:
        """Why instances of a local class have lazy parameters: a lazy layer
        built in one of its methods (not ``forward``), or a lazy base class."""
        cache = getattr(self, "_feed_lazy_cls", None)
        if cache is None:
            cache = self._feed_lazy_cls = {}
        if cls.name in cache:
            return cache[cls.name]
        seen = _seen or set()
        if cls.name in seen:
            return None
        seen.add(cls.name)
        cache[cls.name] = None  # recursion guard
        reason = None
        for name, info in cls.methods.items():
            if name == "forward" or name in MESSAGE_PASSING_METHODS:
                continue
            for call in info.calls:
                local = self._local_callee(call)
                if isinstance(local, ClassInfo):
                    reason = self.class_lazy_reason(local, seen)
                else:
                    resolved = self.resolve(call.func) or ""
                    if resolved.startswith(("torch.nn.", "torch_geometric")):
                        reason = self.lazy_reason(call, call, 5)
                if reason:
                    break
            if reason:
                break
        if reason is None:
            for base in cls.bases:
                local = self.classes.get(base.split(".")[-1])
                if local is not None and local is not cls:
                    reason = self.class_lazy_reason(local, seen)
                    if reason:
                        break
        cache[cls.name] = reason
        return reason

    def _runs_forward(self, call: cst.Call, root: tuple, depth: int = 0) -> bool:
        """Whether ``call`` runs (part of) the model ``root`` eagerly — a call
        of it or of a submodule, ``load_state_dict``, ``summary(model, ...)``,
        or a local function that does one of these."""
        def is_root(expr) -> bool:
            if root[0] == "name":
                return isinstance(expr, cst.Name) and expr.value == root[1]
            return isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) \
                and expr.value.value == "self" and expr.attr.value == root[1]

        func = call.func
        if is_root(func):
            return True
        chain = func
        methods = []
        while isinstance(chain, cst.Attribute) and not is_root(chain):
            methods.append(chain.attr.value)
            chain = chain.value
        if is_root(chain) and methods:
            method = methods[0]
            if method == "load_state_dict":
                return True
            return method not in _MODEL_METHODS_SELF and method not in _MODEL_METHODS_NON_TENSOR and \
                method not in ("compile", "register_forward_pre_hook", "register_forward_hook",
                               "register_full_backward_hook", "named_parameters", "get_submodule")
        if depth >= 2:
            return False
        passes = [i for i, a in enumerate(call.args) if is_root(a.value)]
        local = self._local_callee(call)
        if isinstance(local, FuncInfo):
            for index in passes:
                param = self._param_for(local, call, index, call.args[index],
                                        local.cls is not None and isinstance(call.func, cst.Attribute))
                if param is not None and any(self._runs_forward(c, ("name", param), depth + 1)
                                             for c in local.calls):
                    return True
            if root[0] == "name" and root[1] not in local.bindings:  # reads the global model
                if any(self._runs_forward(c, root, depth + 1) for c in local.calls):
                    return True
            return False
        if passes:
            name = (self.last_part(func) or "").lower()
            resolved = self.resolve(func) or ""
            return resolved.endswith("nn.summary") or name == "summary" or \
                any(w in name for w in ("init", "warm", "dummy", "materiali", "lazy"))
        return False

    def eager_forward_before(self, site_node: cst.CSTNode, target: cst.CSTNode) -> bool:
        """Whether the model ``target`` (a name or ``self.attr``) runs one eager
        forward before the compile at ``site_node`` takes effect."""
        while isinstance(target, cst.Call) and isinstance(target.func, cst.Attribute) \
                and target.func.attr.value in _MODEL_METHODS_SELF:
            target = target.func.value
        if isinstance(target, cst.Name):
            root = ("name", target.value)
        elif isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) \
                and target.value.value == "self":
            root = ("self", target.attr.value)
        else:
            return False
        stmt = self.statement_of(site_node)
        limit = self.order.get(stmt, 0)
        scope = self.enclosing_function(site_node)
        refs = self.compiled_refs(site_node) if isinstance(site_node, cst.Call) else []
        renamed = root[0] == "name" and refs and all(r[0] == "name" and r[1] != root[1] for r in refs)
        if renamed:
            # `model = torch.compile(net)`: an eager `net(...)` counts until the
            # compiled object is first used (called, or handed to a function)
            names = {r[1] for r in refs}
            uses = [self.order.get(call, 0) for call in self._all_calls()
                    if self.enclosing_function(call) is scope and self.order.get(call, 0) > limit
                    and (isinstance(call.func, cst.Name) and call.func.value in names
                         or any(isinstance(a.value, cst.Name) and a.value.value in names for a in call.args)
                         and self.resolve(call.func) not in ("print", "len", "str", "repr", "type", "id",
                                                             "isinstance", "hasattr", "getattr"))]
            if uses:
                limit, renamed = min(uses), False
        for call in self._all_calls():
            if self.enclosing_function(call) is not scope:
                continue
            if (self.order.get(call, 0) < limit or renamed) and self._runs_forward(call, root):
                return True
        return False


# ---- loader feeding / compile sites (GNN002, GNN006, GNN007, GNN012) ----
# Module-level helpers for the FileContext methods of the same name above.

class _NoValue:
    def __repr__(self) -> str:
        return "<no value>"


_NO_VALUE = _NoValue()

# torch.nn.utils functions that return a tensor (the total gradient norm...).
_TORCH_UTILS_RETURNING_TENSORS = {
    "torch.nn.utils.clip_grad_norm_", "torch.nn.utils.clip_grad.clip_grad_norm_",
    "torch.nn.utils.get_total_norm", "torch.nn.utils.parameters_to_vector",
}

# PyG loaders whose batches change size from one batch to the next. Not
# DenseDataLoader (graphs padded to one size by ToDense) nor TemporalDataLoader
# (fixed-size event windows).
_FEED_LOADERS = {
    "NeighborLoader", "LinkNeighborLoader", "HGTLoader", "ClusterLoader", "ShaDowKHopSampler",
    "DataLoader", "DataListLoader", "GraphSAINTNodeSampler", "GraphSAINTEdgeSampler",
    "GraphSAINTRandomWalkSampler", "GraphSAINTSampler", "NeighborSampler", "RandomNodeLoader",
    "ZipLoader", "LinkLoader", "NodeLoader", "IBMBBatchLoader", "IBMBNodeLoader",
}
# PyG wrappers around a loader, and iteration helpers around any iterable.
_FEED_LOADER_WRAPPERS = {"PrefetchLoader", "CachedLoader"}
# Wrappers whose result runs the module they are given.
_FEED_MODEL_WRAPPERS = {"DistributedDataParallel", "DataParallel", "DDP", "FullyShardedDataParallel", "FSDP"}
# PyG's Lightning data modules (NeighborLoader / DataLoader inside, unless loader="full").
_FEED_LIGHTNING_DATA = {"LightningNodeData", "LightningLinkData", "LightningDataset"}
_FEED_ITER_WRAPPERS = {"enumerate", "tqdm", "iter", "zip", "islice", "chain", "trange_wrap", "track"}


@dataclass(frozen=True)
class LoaderFeed:
    """A variable-size loader whose batches reach a compiled object."""

    loader: str  # the loader class, e.g. "NeighborLoader"
    call: cst.Call = field(repr=False)  # the call that hands a batch to the compiled object
    via: str  # how, for messages: "`for ... in train_loader`"
    padded: bool  # batches are padded to fixed sizes (PyG Pad / ToDense / a pad call)
    unmarked: tuple[str, ...]  # arguments whose dims mark_dynamic does not cover
    marked_any: bool  # the file calls torch._dynamo.mark_dynamic at all
