"""Names, scopes and the tree: "what does this name stand for, and where was it
bound?"

``resolve``/``resolve_dotted`` (through import aliases), ``compile_api``,
``ancestors``, ``enclosing_function``/``enclosing_class``, ``statement_of``,
``in_error_path``, ``in_loop_body``; ``names_in`` and the taint of names
through a function's assignments. ``Names`` also mixes in the scopes and
bindings (``lookup``, ``reaching``: bindings.py) and the calls of local
functions (``callers_of``, ``local_callee``, ``arg_for_param``: callers.py),
so ``ctx`` asks them all as before.
"""
from __future__ import annotations

from typing import Iterator, Optional

import libcst as cst

from gnnlint.semantic.bindings import Bindings
from gnnlint.semantic.callers import Callers
from gnnlint.semantic.model import ClassInfo, FuncInfo
from gnnlint.semantic.vocab import COMPILE_FUNCS


_UNSEEN = object()
_FUNCTION_DEF, _CLASS_DEF, _NAME, _ATTRIBUTE = cst.FunctionDef, cst.ClassDef, cst.Name, cst.Attribute
_ASSIGNING = frozenset((cst.Assign, cst.AnnAssign, cst.AugAssign, cst.For, cst.CompFor, cst.NamedExpr, cst.WithItem))


class Names(Bindings, Callers):
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

    def _memoised(self, key: tuple, compute, guard):
        """``compute()`` once per key; ``guard`` answers a recursive question."""
        if key not in self._memo:
            self._memo[key] = guard
            self._memo[key] = compute()
        return self._memo[key]

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
