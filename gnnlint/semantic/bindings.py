"""Scopes and bindings: "where was this name bound, and which definitions
reach this use?"

``lookup`` (the binding of a name visible at a node, with its scope),
``reaching`` (every binding that may reach a use -- the one place reaching
definitions are computed; kinds, choices, compile options and flow ask it),
``sole_binding`` (the one binding that reaches a use, of a kind),
``feed_binding`` (``lookup`` with a late module global). Mixed into
``Names`` (names.py); reads the SemanticModel and asks the tree questions
(``ancestors``, ``enclosing_function``) through ``self``.
"""
from __future__ import annotations

from typing import Iterator, Optional

import libcst as cst

from gnnlint.semantic.model import Binding, FuncInfo

# exact node types (libcst's are leaf classes): a set lookup instead of one ABCMeta check per class
_SCOPE_TYPES = frozenset((cst.FunctionDef, cst.ClassDef, cst.Module))
_BLOCK_TYPES = frozenset((cst.If, cst.Else, cst.For, cst.While, cst.Try, cst.ExceptHandler, cst.TryStar,
                          cst.ExceptStarHandler, cst.Finally))


class Bindings:
    """Which binding a name has at a node, and which reach it. Mixed into Names."""

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

    def sole_binding(self, name: str, at: cst.CSTNode, how: Optional[str] = None) -> Optional[Binding]:
        """The one binding of ``name`` that reaches ``at`` (``reaching``, may
        reading), when exactly one does and, with ``how``, it is that kind
        (``"assign"``, ``"param"``); else None. The question "what is this
        name surely bound to here?" -- a value followed back one step."""
        reaching = self.reaching(name, at)
        if len(reaching) != 1:
            return None
        binding = reaching[0][0]
        return binding if how is None or binding.how == how else None

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

    def _binds_locally(self, func: Optional[FuncInfo], name: str) -> bool:
        while func is not None:
            if name in func.bindings:
                return True
            func = func.parent
        return False


def _owns(comprehension: cst.CSTNode, comp_for: cst.CompFor) -> bool:
    """``comp_for`` is one of the ``for`` clauses of ``comprehension``."""
    clause = getattr(comprehension, "for_in", None)
    while clause is not None:
        if clause is comp_for:
            return True
        clause = clause.inner_for_in
    return False
