"""Functions picked at run time: "which imported functions may ``train(model, ...)`` run?"

A training script often chooses its train / evaluate functions in a helper
and gets them back with the model: ``model, train, evaluate =
model_setup(args)`` with ``def model_setup(args): ... if args.regression:
from pkg.tools import train_regression as train ... else: from pkg.tools
import train_classification as train ... return model, train, evaluate``.
The call ``train(model, ...)`` names no imported function, so a compiled
model handed to it (handoffs.py) reached nothing. ``called_imports(call)``
answers with every project function the callee name may hold: the
function-level imports binding that name in the helper whose returned tuple
element (or whole return value) the name was bound from, or -- with no
assignment of it in the calling function -- in the calling function itself
(``if c: from pkg.a import f as run`` / ``else: from pkg.b import g as
run``; the module-level import dict keeps only the last of them), or the
imported functions a conditional expression picks (``train = train_hetero
if hetero else train_homo``). Only imports are followed: a helper returning
a local def or a value it computes tells nothing here.
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from gnnlint.facts import ImportRef
from gnnlint.semantic.callables import LOCAL_MARK
from gnnlint.semantic.model import FuncInfo, iter_children

_LIBRARIES = ("torch", "torch_geometric", "numpy", "tqdm", "lightning", "pytorch_lightning")


class ReturnedFunctions:
    """Imported functions a local callee name holds. Mixed into FileContext."""

    def called_imports(self, call: cst.Call) -> list[ImportRef]:
        """The project functions ``call`` (a call of a plain name) may run when
        the name holds a function a local helper returns, or one of several
        function-level imports of the calling function; [] when unknown."""
        func = call.func
        if not isinstance(func, cst.Name):
            return []
        name = func.value
        reaching = self.reaching(name, call)
        out: list[ImportRef] = []
        if not reaching:
            scope = self.enclosing_function(call)
            if scope is not None:
                out = self._function_imports(scope, name)
            return out if len(out) > 1 else []  # one import: self.imports already answers
        for binding, _scope in reaching:
            if binding.how == "assign" and isinstance(binding.value, (cst.Name, cst.IfExp)):
                # train = train_hetero if hetero else train_homo (both imported)
                out += [ref for ref in self._imported_alternatives(binding.value, binding.node) if ref not in out]
                continue
            if binding.how not in ("assign", "unpack") or not isinstance(binding.value, cst.Call):
                continue
            helper = self.local_callee(binding.value)
            if helper is None and binding.how == "assign":
                out += [ref for ref in self._told_picks(binding.value) if ref not in out]
                continue
            if not isinstance(helper, FuncInfo) or helper.is_async:
                continue
            for ret in helper.returns:
                value = ret.value if binding.how == "assign" else self._returned_element(ret.value, binding.index)
                if isinstance(value, cst.Name):
                    out += [ref for ref in self._function_imports(helper, value.value) if ref not in out]
        return out

    def _told_picks(self, call: cst.Call) -> list[ImportRef]:
        """``train_fn = get_train_fn(regime)`` with ``get_train_fn`` imported from another project
        file that returns one of that file's functions (its ``returns`` fact, callables.py): each of them."""
        factory = self._imported_function(call)
        if factory is None:
            return []
        told = self.project.returns.get(f"{(factory.module or '').split('.')[-1]}.{factory.name}") or ""
        return [ImportRef(factory.module, entry[len(LOCAL_MARK):], factory.level)
                for entry in told.split(",") if entry.startswith(LOCAL_MARK)]

    def _imported_alternatives(self, value: cst.BaseExpression, at: Optional[cst.CSTNode]) -> list[ImportRef]:
        """The project functions imported at module level that ``a if c else b``
        (or a plain name) may be."""
        if isinstance(value, cst.IfExp):
            return self._imported_alternatives(value.body, at) + self._imported_alternatives(value.orelse, at)
        if not isinstance(value, cst.Name) or value.value not in self.imports or self.reaching(value.value, at or value):
            return []
        ref = self.imports[value.value]
        if not ref.name[:1].islower() or "." in ref.name \
                or (not ref.level and (ref.module or "").split(".")[0] in _LIBRARIES):
            return []
        return [ref]

    @staticmethod
    def _returned_element(value: Optional[cst.BaseExpression], index: int) -> Optional[cst.BaseExpression]:
        if index >= 0 and isinstance(value, (cst.Tuple, cst.List)) and index < len(value.elements) \
                and not any(isinstance(e, cst.StarredElement) for e in value.elements[:index + 1]):
            return value.elements[index].value
        return None

    def _function_imports(self, func: FuncInfo, name: str) -> list[ImportRef]:
        """``from pkg.tools import train_x as <name>`` statements in ``func``'s
        own body (not in nested defs): the project functions they bind."""
        out: list[ImportRef] = []
        for node in self._function_import_nodes(func):
            ref = self._import_binding(node, name)
            if ref is not None and ref not in out:
                out.append(ref)
        return out

    def _function_import_nodes(self, func: FuncInfo) -> list[cst.ImportFrom]:
        """The ``from ... import`` statements of ``func``'s own body, in source order:
        found once per function (asked for every plain-name call a compiled model is
        handed to; walking the body each time made one 1,600-line file take 90 s)."""
        memo = self.__dict__.setdefault("_function_import_memo", {})
        found = memo.get(func.node)
        if found is None:
            found = []
            todo: list[cst.CSTNode] = list(func.node.body.body) if isinstance(func.node.body, cst.IndentedBlock) else []
            todo.reverse()
            while todo:
                node = todo.pop()
                if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                    continue
                if isinstance(node, cst.ImportFrom):
                    if not isinstance(node.names, cst.ImportStar):
                        found.append(node)
                    continue
                if isinstance(node, (cst.BaseExpression, cst.BaseSmallStatement)) and not isinstance(node, cst.ImportFrom):
                    continue  # an import is a statement: expressions and other small statements hold none
                todo.extend(reversed(iter_children(node)))
            memo[func.node] = found
        return found

    def _import_binding(self, node: cst.ImportFrom, name: str) -> Optional[ImportRef]:
        module = (self.dotted(node.module) or "") if node.module is not None else ""
        level = len(node.relative)
        for alias in node.names:
            imported = self.dotted(alias.name) or ""
            local = alias.asname.name.value if alias.asname is not None and isinstance(alias.asname.name, cst.Name) \
                else imported
            if local != name:
                continue
            if not imported[:1].islower() or (not level and module.split(".")[0] in _LIBRARIES):
                return None
            return ImportRef(module, imported, level)
        return None
