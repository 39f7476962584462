"""Names, scopes and the tree: "what does this name stand for, and where was it
bound?"

``resolve``/``resolve_dotted`` (through import aliases), ``lookup`` (the
binding of a name visible at a node, with its scope), ``reaching`` (every
binding that may reach a use -- the one place reaching definitions are
computed; kinds, choices, compile options and flow ask it), ``ancestors``,
``enclosing_function``/``enclosing_class``, ``statement_of``,
``in_error_path``, ``in_loop_body``; callers of a local function
(``callers_of`` -- the one place, with or without aliases) and the argument
bound to a parameter (``arg_for_param``); ``names_in`` and the taint of names
through a function's assignments.
"""
from __future__ import annotations

from typing import Iterator, Optional

import libcst as cst

from gnnlint.semantic.model import Binding, ClassInfo, FuncInfo
from gnnlint.semantic.vocab import COMPILE_FUNCS, MODULE_BASE_SUFFIXES


_UNSEEN = object()
_FUNCTION_DEF, _CLASS_DEF, _NAME, _ATTRIBUTE = cst.FunctionDef, cst.ClassDef, cst.Name, cst.Attribute
_ASSIGNING = frozenset((cst.Assign, cst.AnnAssign, cst.AugAssign, cst.For, cst.CompFor, cst.NamedExpr, cst.WithItem))
# exact node types (libcst's are leaf classes): a set lookup instead of one ABCMeta check per class
_SCOPE_TYPES = frozenset((cst.FunctionDef, cst.ClassDef, cst.Module))
_BLOCK_TYPES = frozenset((cst.If, cst.Else, cst.For, cst.While, cst.Try, cst.ExceptHandler, cst.TryStar,
                          cst.ExceptStarHandler, cst.Finally))


class Names:
    """Name, scope and tree questions over the SemanticModel. Mixed into FileContext; reads the SemanticModel."""

    @staticmethod
    def dotted(node: Optional[cst.CSTNode]) -> Optional[str]:
        t = type(node)
        if t is _NAME:
            return node.value  # type: ignore[union-attr]
        if t is _ATTRIBUTE:
            head = Names.dotted(node.value)  # type: ignore[union-attr]
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

    def compile_api(self, func: Optional[cst.CSTNode]) -> Optional[str]:
        """The compile API a call's callee stands for: ``torch.compile`` for
        ``torch.compile(model)`` and for the decorator-factory form applied to
        its target, ``torch.compile(fullgraph=True, options=...)(self.forward)``
        (the options sit on the inner call); None for anything else."""
        if isinstance(func, cst.Call) and not any(a.keyword is None and not a.star for a in func.args):
            func = func.func
        resolved = self.resolve(func)
        return resolved if resolved in COMPILE_FUNCS else None

    def calls_compile_api(self) -> bool:
        """Some call of the file has a compile API for its callee (``compile_api``),
        whether its result is kept, dropped or disabled -- without one, no
        expression here is a compile call. Memoised; the callee's last part
        (``compile``, or a name bound to a compile API) is checked before it is resolved."""
        if "_calls_compile_api" not in self.__dict__:
            aliased = {name for name, full in self.aliases.items() if full in COMPILE_FUNCS}
            found = False
            for call in self.calls_any_order():
                func = call.func.func if isinstance(call.func, cst.Call) else call.func
                last = func.attr.value if isinstance(func, cst.Attribute) else \
                    func.value if isinstance(func, cst.Name) else None
                if (last == "compile" or last in aliased) and self.compile_api(call.func) is not None:
                    found = True
                    break
            self._calls_compile_api = found
        return self._calls_compile_api

    def last_part(self, node: Optional[cst.CSTNode]) -> Optional[str]:
        if isinstance(node, cst.Name):
            return node.value
        if isinstance(node, cst.Attribute):
            return node.attr.value
        return None

    def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        node = self.parent.get(node)
        while node is not None:
            yield node
            node = self.parent.get(node)

    def enclosing_function(self, node: cst.CSTNode) -> Optional[FuncInfo]:
        memo = self._enclosing_memo  # asked for every name lookup: remembered per node once collected
        if memo is not None:
            found = memo.get(node, _UNSEEN)
            if found is not _UNSEEN:
                return found
        found = None
        for anc in self.ancestors(node):
            if type(anc) is _FUNCTION_DEF:  # (libcst node classes are leaves: `type is` is isinstance, minus ABCMeta)
                found = self.func_info.get(anc)
                break
        if memo is not None:
            memo[node] = found
        return found

    def enclosing_class(self, node: cst.CSTNode) -> Optional[ClassInfo]:
        for anc in self.ancestors(node):
            if type(anc) is _CLASS_DEF:
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
            if func is not None and not (func.node in self.ancestors(at) or func.node is at):
                return bindings[-1], func  # an enclosing scope seen from a closure: all of it
            if func is None and self.enclosing_function(at) is not None:
                # a global read inside a function runs after the module body
                # (`def train(): ... train_loader` with train_loader below)
                return bindings[-1], func
            # the last binding before the use (searched from the end: the tests below walk ancestors)
            for b in reversed(bindings):
                if (b.order < use or self._comprehension_target(b, at)) and not self._binds_around(b, at):
                    return b, func
            # Bound later in the same scope only (loop-carried): unknown.
            return None, func
        return None, None

    def _comprehension_target(self, binding: Binding, at: cst.CSTNode) -> bool:
        """``[v.item() for v in xs]``: the element, written before the ``for``, reads its target."""
        stmt = binding.node
        if not isinstance(stmt, cst.CompFor):
            return False
        ancestors = list(self.ancestors(at))
        return at is not stmt.iter and not any(anc is stmt.iter for anc in ancestors) and any(
            isinstance(anc, (cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)) and _owns(anc, stmt)
            for anc in ancestors)

    def _binds_around(self, binding: Binding, at: cst.CSTNode) -> bool:
        """``x = f(x)``: the use of ``x`` inside the value sees the old ``x``."""
        stmt = binding.node
        if stmt is None or binding.how in ("param", "def", "class"):
            return False
        if isinstance(stmt, (cst.For, cst.CompFor)):
            # the loop target is bound for the body, not for the iterable
            return any(anc is stmt.iter for anc in self.ancestors(at)) or at is stmt.iter
        return any(anc is stmt for anc in self.ancestors(at))

    def reaching(self, name: str, at: cst.CSTNode,
                 exclusive_only: bool = False) -> list[tuple[Binding, Optional[FuncInfo]]]:
        """The bindings of ``name`` whose value may be the one read at ``at``,
        each with its scope; [] when no binding is visible (see ``lookup``).
        The one answer to "which definitions reach this use?".

        Always the binding ``lookup`` finds first, then earlier bindings of the
        same scope, while:

        - default (what a value may be -- kinds, model choices, compile
          options): every later binding was made only conditionally, inside an
          if/for/while/try block that does not hold ``at``:
          ``x = a; if c: x = b; f(x)`` -> ``x = b`` and ``x = a``;
        - ``exclusive_only=True`` (where a value surely goes -- flow follows a
          value forward with it, conservatively): every later binding before
          ``at`` sits in the other branch of an ``if`` that holds it:
          ``if c: x = a`` / ``else: x = b`` -> both; ``x = a; if c: x = b`` ->
          only ``x = b``.
        """
        last, func = self.lookup(name, at)
        if last is None:
            return []
        bindings = (func.bindings if func is not None else self.module_bindings).get(name, [])
        out = [last]
        if exclusive_only:
            use = self.order.get(at, 1 << 60)
            before = [b for b in bindings if b.order < use]
            for i, b in enumerate(before):
                if b is not last and all(self._exclusive(later.node, b.node) for later in before[i + 1:]):
                    out.append(b)
        else:
            earlier = [b for b in bindings if b.order < last.order]
            current = last
            while self._conditional(current, at) and earlier:
                current = earlier.pop()
                if not self._killed(current, out):
                    out.append(current)
        return [(b, func) for b in out]

    def _killed(self, binding: Binding, later: list) -> bool:
        """A later binding in the same block rebinds the name whatever runs between
        (``energy = scatter(...)`` then ``energy, forces = (energy.cpu(), ...)`` in one branch)."""
        if binding.node is None or binding.how in ("param", "def", "class", "import"):
            return False
        suite = self._suite_of(binding.node)
        return suite is not None and any(
            b.node is not None and b.how in ("assign", "unpack") and self._suite_of(b.node) is suite for b in later)

    def _suite_of(self, node: cst.CSTNode) -> Optional[cst.CSTNode]:
        for anc in self.ancestors(node):
            if type(anc) in (cst.IndentedBlock, cst.Module):
                return anc
            if type(anc) in _SCOPE_TYPES or type(anc) in (cst.CompFor, cst.Lambda):
                return None
        return None

    def _conditional(self, binding: Binding, at: cst.CSTNode) -> bool:
        stmt = binding.node
        if stmt is None or binding.how in ("param", "def", "class"):
            return False
        for anc in self.ancestors(stmt):
            t = type(anc)
            if t in _SCOPE_TYPES:
                return False
            if t in _BLOCK_TYPES:
                # the use's ancestors are walked only for a binding inside a block (most are not)
                return not any(use is anc for use in self.ancestors(at))
        return False

    def _exclusive(self, a: Optional[cst.CSTNode], b: Optional[cst.CSTNode]) -> bool:
        """``a`` and ``b`` are in different branches of the same ``if``."""
        if a is None or b is None:
            return False
        chain_b = {}
        child: cst.CSTNode = b
        for anc in self.ancestors(b):
            chain_b[anc] = child
            child = anc
        child = a
        for anc in self.ancestors(a):
            if anc in chain_b:
                if isinstance(anc, cst.If):
                    other = chain_b[anc]
                    return other is not child and {id(other), id(child)} == {id(anc.body), id(anc.orelse)}
                return False
            child = anc
        return False

    def _previous_binding(self, name: str, binding: Binding, func: Optional[FuncInfo]) -> Optional[Binding]:
        bindings = (func.bindings if func is not None else self.module_bindings).get(name, [])
        earlier = [b for b in bindings if b.order < binding.order]
        return earlier[-1] if earlier else None

    def _memoised(self, key: tuple, compute, guard):
        """``compute()`` once per key; ``guard`` answers a recursive question."""
        if key not in self._memo:
            self._memo[key] = guard
            self._memo[key] = compute()
        return self._memo[key]

    def feed_binding(self, name: str, at: cst.CSTNode) -> Optional[Binding]:
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

    # -- which names hold the compiled object ------------------------------------
    def class_attr_values(self, cls: ClassInfo, attr: str) -> list[cst.BaseExpression]:
        """The values assigned to ``self.<attr>`` in ``cls``, or else in the nearest local base class that assigns it."""
        return next((c.attrs[attr] for c in self.local_lineage(cls) if attr in c.attrs), [])

    def local_callee(self, call: cst.Call):
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
            return self._compiled_local_function(binding)
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self":
            cls = self.enclosing_class(call)
            if cls is not None:
                return self.method_of(cls, func.attr.value)
        return None

    def self_forward(self, call: cst.Call) -> Optional[FuncInfo]:
        """The ``forward`` a ``self(...)`` call runs in a method of a local
        module class (``nn.Module.__call__``: ``loss, aux = self(batch)`` in a
        LightningModule's ``training_step``), through its local bases."""
        if not (isinstance(call.func, cst.Name) and call.func.value == "self"):
            return None
        cls = self.enclosing_class(call)
        if cls is None or not self.is_module_class(cls):
            return None
        return self.method_of(cls, "forward")

    def method_callee(self, call: cst.Call):
        """``local_callee``, and for ``obj.method(...)`` on an instance of a
        local class the method it resolves (``trainer.train(graph)`` runs
        ``Trainer.train``): the callee direction of ``callers_of``."""
        callee = self.local_callee(call)
        if callee is not None:
            return callee
        func = call.func
        if isinstance(func, cst.Attribute) and isinstance(func.value, (cst.Name, cst.Attribute)):
            owner = self.class_of(func.value, call)  # type: ignore[attr-defined]
            if isinstance(owner, ClassInfo):
                return self.method_of(owner, func.attr.value)
        return None

    def _compiled_local_function(self, binding) -> Optional[FuncInfo]:
        """``step = torch.compile(train_step)``: calling ``step`` runs the local
        function ``train_step`` (compiled), so its parameters get what ``step``'s
        callers pass."""
        value = binding.value
        if binding.how != "assign" or not isinstance(value, cst.Call) or not value.args \
                or value.args[0].keyword is not None or not isinstance(value.args[0].value, cst.Name) \
                or self.compile_api(value.func) is None:
            return None
        target, _scope = self.lookup(value.args[0].value.value, value)
        if target is None:
            return self.functions.get(value.args[0].value.value)
        return self.func_info.get(target.node) if target.how == "def" else None  # type: ignore[arg-type]

    def local_lineage(self, cls: ClassInfo) -> Iterator[ClassInfo]:
        """``cls``, then its bases defined in this file, nearest first (each once):
        where a method lookup searches before leaving the file."""
        seen: set[str] = set()
        todo = [cls]
        while todo:
            current = todo.pop(0)
            if current.name in seen:
                continue
            seen.add(current.name)
            yield current
            for base in current.bases:
                local = self.classes.get(base.split(".")[-1])
                if local is not None:
                    todo.append(local)

    def method_of(self, cls: ClassInfo, name: str) -> Optional[FuncInfo]:
        return next((c.methods[name] for c in self.local_lineage(cls) if name in c.methods), None)

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

    def _binds_locally(self, func: Optional[FuncInfo], name: str) -> bool:
        while func is not None:
            if name in func.bindings:
                return True
            func = func.parent
        return False

    def calls_any_order(self) -> Iterator[cst.Call]:
        """Every call in the file, from the collector's lists (module level and class bodies,
        then each function's own): for a scan that needs no order, without ``all_calls``' walk."""
        yield from self.module_calls
        for info in self.func_info.values():
            yield from info.calls

    def all_calls(self) -> list[cst.Call]:
        """Every call in the file, in source order."""
        cached = getattr(self, "_feed_all_calls", None)
        if cached is None:
            call = cst.Call  # `type is`: isinstance on a libcst class runs ABCMeta's check for every node
            cached = [n for n in self.preorder if type(n) is call]
            self._feed_all_calls = cached
        return cached

    def _callers_index(self) -> tuple[dict, dict, dict]:
        """Every call once: by the local function it resolves to, and the
        attribute calls (``obj.method(...)``) by method name."""
        index = getattr(self, "_callers_idx", None)
        if index is None:
            by_callee: dict = {}
            by_attr: dict = {}
            for c in self.all_calls():
                callee = self.local_callee(c)
                if callee is not None:
                    by_callee.setdefault(callee, []).append(c)
                if isinstance(c.func, cst.Attribute) and not isinstance(c.func.value, cst.Call):
                    by_attr.setdefault(c.func.attr.value, []).append(c)
            order = {id(c): i for i, c in enumerate(self.all_calls())}
            index = self._callers_idx = (by_callee, by_attr, order)
        return index

    def _alias_calls(self) -> dict:
        """``f(...)`` where ``f = a if x else b`` (or ``f = a``), by every name ``f`` may stand for."""
        index = getattr(self, "_alias_idx", None)
        if index is None:
            index = self._alias_idx = {}
            for c in self.all_calls():
                if not isinstance(c.func, cst.Name):
                    continue
                binding, _ = self.lookup(c.func.value, c)
                if binding is None or binding.how != "assign":
                    continue
                for name in {v.value for v in _alternatives(binding.value) if isinstance(v, cst.Name)}:
                    if name != c.func.value:
                        index.setdefault(name, []).append(c)
        return index

    def callers_of(self, func: FuncInfo, through_aliases: bool = False) -> list[cst.Call]:
        """The calls in this file that run the local function (or method)
        ``func``, in source order. The one answer to "who calls this function?".

        Always the calls name resolution sends to it (``local_callee``:
        ``func(...)``, ``self.func(...)``) and, for a method, ``obj.func(...)``
        on an instance of a local class. The two readings differ:

        - default (what a parameter receives -- kinds, feeds, compile options,
          optimizers): also ``step(...)`` after ``step = torch.compile(func)``;
          ``obj.func(...)`` only when ``obj`` is an instance of ``func``'s own class;
        - ``through_aliases=True`` (where a value goes -- flow, sweeps,
          GNN020): also ``f(...)`` after ``f = func`` or ``f = a if x else b``
          (by name); ``obj.func(...)`` when ``func`` is the method ``obj``'s
          class resolves (subclasses too); only calls spelled with the
          function's own name or such an alias.
        """
        def compute():
            by_callee, by_attr, order = self._callers_index()
            calls = list(by_callee.get(func, ()))
            if through_aliases:
                calls = [c for c in calls if self.last_part(c.func) == func.name]
                calls += self._alias_calls().get(func.name, [])
            if func.cls is not None:
                for c in by_attr.get(func.name, ()):
                    if c in calls:
                        continue
                    owner = self.class_of(c.func.value, c)
                    if (isinstance(owner, ClassInfo) and self.method_of(owner, func.name) is func
                            if through_aliases else owner is func.cls):
                        calls.append(c)
            return sorted(calls, key=lambda c: order.get(id(c), 0))
        return self._memoised((func, "callers", through_aliases), compute, [])

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

    def _param_for(self, func: FuncInfo, call: cst.Call, index: int, arg: cst.Arg,
                   skip_self: bool) -> Optional[str]:
        if arg.keyword is not None:
            return arg.keyword.value if arg.keyword.value in func.params else None
        params = [p.name.value for p in list(func.node.params.posonly_params) + list(func.node.params.params)]
        if skip_self and params and params[0] in ("self", "cls"):
            params = params[1:]
        positional = sum(1 for a in call.args[:index] if a.keyword is None)
        return params[positional] if positional < len(params) else None

    def arg_for_param(self, func: FuncInfo, call: cst.Call, name: str) -> Optional[cst.BaseExpression]:
        """The expression ``call`` passes for ``func``'s parameter ``name`` (positional or keyword)."""
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
                t = type(node)  # exact types (leaf classes): no ABCMeta check per class per node
                if t not in _ASSIGNING:
                    continue
                pairs = []
                if t is cst.Assign:
                    pairs = [(self.names_in(tg.target), node.value) for tg in node.targets]
                elif t is cst.AnnAssign or t is cst.AugAssign:
                    if node.value is not None:
                        pairs = [(self.names_in(node.target), node.value)]
                elif t is cst.For or t is cst.CompFor:
                    pairs = [(self.names_in(node.target), node.iter)]
                elif t is cst.NamedExpr:
                    pairs = [(self.names_in(node.target), node.value)]
                elif node.asname is not None:  # WithItem
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

    def _ancestors_in(self, node: cst.CSTNode, func: Optional[FuncInfo]) -> Iterator[cst.CSTNode]:
        for anc in self.ancestors(node):
            if isinstance(anc, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                return
            yield anc


def _alternatives(expr: Optional[cst.BaseExpression]) -> list[cst.BaseExpression]:
    """The values a conditional or boolean expression may take (``a if x else b``, ``a or b``)."""
    if isinstance(expr, cst.IfExp):
        return _alternatives(expr.body) + _alternatives(expr.orelse)
    if isinstance(expr, cst.BooleanOperation):
        return _alternatives(expr.left) + _alternatives(expr.right)
    return [expr] if expr is not None else []


def _owns(comprehension: cst.CSTNode, comp_for: cst.CompFor) -> bool:
    """``comp_for`` is one of the ``for`` clauses of ``comprehension``."""
    clause = getattr(comprehension, "for_in", None)
    while clause is not None:
        if clause is comp_for:
            return True
        clause = clause.inner_for_in
    return False
