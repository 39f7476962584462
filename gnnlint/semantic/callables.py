"""Library functions held in a value: "which function does ``self.readout(x, batch)`` call?"
(and ``factory_module_classes``: which library module classes a factory may have built into ``self.norm``)

A model picks its readout by name through a factory (``self.readout =
get_aggregation(cfg.readout)`` with ``def get_aggregation(name): if name ==
"max": return global_max_pool ...``), so the call site names no function.
``callable_targets(func, at)`` answers with the dotted library names the
callee may be: through ``self.<attr>`` values stored by the class, a local
factory's ``return`` statements, or -- for a factory imported from another
project file -- the ``returns`` facts that file tells its importers
(``export_returned_functions``: a top-level function whose every ``return``
names a torch / PyG function).

A value may also hold an *instance* of a library class (``self.pool =
POOLS[name]`` with ``POOLS = {"mean": MeanAggregation(), ...}`` at module
level, ``self.pool = AGGRS[name]()`` with a table of classes): such a target
is the class's dotted name followed by ``INSTANCE_MARK`` (calling it runs
the class's ``__call__``; GNN009 looks it up as a module).
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from gnnlint.facts import ImportRef
from gnnlint.semantic.model import FuncInfo

_LIBRARY_ROOTS = ("torch", "torch_geometric", "torch_scatter", "torch_cluster", "torch_sparse")
_EXPORTED_ROOTS = ("torch_geometric", "torch_scatter")  # told across files: PyG's pools and scatters
_MAX_DEPTH = 3
LOCAL_MARK = "="  # a `returns` entry naming a top-level function of the told file, not a library one
INSTANCE_MARK = "()"  # a target that is an instance of the library class it names


class Callables:
    """The library functions a callable value may be. Mixed into FileContext."""

    def callable_targets(self, func: cst.BaseExpression, at: cst.CSTNode) -> list[str]:
        """Dotted library names ``func`` (a callee) may stand for; [] when unknown.
        An instance of a library class is its class's name followed by ``()``."""
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self":
            cls = self.enclosing_class(at)
            if cls is None:
                return []
            out: list[str] = []
            for value in self.class_attr_values(cls, func.attr.value):
                out += self._function_values(value, 0)
            return out
        return []

    def factory_module_classes(self, func: cst.BaseExpression, at: cst.CSTNode) -> list[str]:
        """Dotted library classes ``self.<attr>`` may hold when the class stores there what a local factory
        builds (``self.norm = build_norm(kind, dim)`` returning ``GraphNorm(dim)`` or ``nn.LayerNorm(dim)``):
        every class ``model_choices`` names for it; [] for anything else (cheap gate first)."""
        if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self"):
            return []
        cls = self.enclosing_class(at)
        values = cls.attrs.get(func.attr.value, ()) if cls is not None else ()
        if not any(isinstance(v, cst.Call) and isinstance(self.local_callee(v), FuncInfo) for v in values):
            return []
        return sorted({f"{c.module}.{c.name}" for c, _when in self.model_choices(func, at)
                       if isinstance(c, ImportRef) and c.level == 0 and c.module.split(".")[0] in _LIBRARY_ROOTS})

    def _function_values(self, value: Optional[cst.BaseExpression], depth: int) -> list[str]:
        if value is None or depth > _MAX_DEPTH:
            return []
        if isinstance(value, (cst.Name, cst.Attribute)):
            dotted = self.resolve(value) or ""
            return [dotted] if dotted.split(".")[0] in _LIBRARY_ROOTS else []
        if isinstance(value, cst.IfExp):
            return self._function_values(value.body, depth + 1) + self._function_values(value.orelse, depth + 1)
        if isinstance(value, cst.Subscript):  # POOLS[name]: any value of a table literal
            return [d for item in self._table_values(value) for d in self._function_values(item, depth + 1)]
        if not isinstance(value, cst.Call):
            return []
        if isinstance(value.func, cst.Subscript):  # AGGRS[name](): an instance of any class of the table
            return [d + INSTANCE_MARK for item in self._table_values(value.func)
                    for d in self._function_values(item, depth + 1) if not d.endswith(INSTANCE_MARK)]
        dotted = self.resolve(value.func) or ""
        if dotted.split(".")[0] in _LIBRARY_ROOTS and dotted.split(".")[-1][:1].isupper():
            return [dotted + INSTANCE_MARK]  # MeanAggregation(): a library class's instance
        local = self.local_callee(value)
        if isinstance(local, FuncInfo):
            return [d for ret in local.returns for d in self._function_values(ret.value, depth + 1)]
        if isinstance(value.func, cst.Name) and value.func.value in self.imports:
            ref: ImportRef = self.imports[value.func.value]
            stem = (ref.module or "").split(".")[-1]
            told = self.project.returns.get(f"{stem}.{ref.name}")
            # (`=train_a`: a project function of the factory's file, returned_functions.py)
            return [d for d in told.split(",") if not d.startswith(LOCAL_MARK)] if told else []
        return []

    def _table_values(self, expr: cst.Subscript) -> list[cst.BaseExpression]:
        """The values of the dict / list / tuple literal ``expr`` indexes, when
        its container is a name bound once, at module level, to that literal
        (a table the index picks from by a run-time key); [] otherwise."""
        if not isinstance(expr.value, cst.Name):
            return []
        binding = self.feed_binding(expr.value.value, expr)
        bindings = self.module_bindings.get(expr.value.value) or []
        if binding is None or bindings != [binding] or binding.how != "assign":
            return []  # a local name, or a table re-bound or filled elsewhere
        table = binding.value
        if isinstance(table, cst.Dict):
            return [e.value for e in table.elements if isinstance(e, cst.DictElement)]
        if isinstance(table, (cst.List, cst.Tuple)):
            return [e.value for e in table.elements if isinstance(e, cst.Element)]
        return []

    def export_returned_functions(self) -> None:
        """This file's top-level functions whose every ``return`` names a
        torch / PyG function: told to the files importing them."""
        for name, func in self.functions.items():
            if not func.returns or func.parent is not None:
                continue
            dotted = []
            for ret in func.returns:
                value = ret.value
                found = self._function_values(value, _MAX_DEPTH) if isinstance(value, (cst.Name, cst.Attribute)) \
                    else []
                if not found:
                    dotted = []
                    break
                dotted += found
            if dotted and all(d.split(".")[0] in _EXPORTED_ROOTS for d in dotted):
                self.exported.returns.append((ImportRef("", name), ",".join(sorted(set(dotted)))))
                continue
            local = self._returned_local_functions(func)
            if local:
                self.exported.returns.append((ImportRef("", name), ",".join(LOCAL_MARK + n for n in local)))

    def _returned_local_functions(self, func: FuncInfo) -> list[str]:
        """The top-level functions of this file a top-level ``func`` picks and returns
        (``def get_train_fn(regime): if regime == "full": return train_full ... return train_mini``,
        ``return train_a if x else train_b``): every ``return`` names one, [] otherwise.
        The importer calling what it got runs one of them (returned_functions.py)."""
        out: list[str] = []
        for ret in func.returns:
            values = [ret.value]
            while values:
                value = values.pop()
                if isinstance(value, cst.IfExp):
                    values += [value.body, value.orelse]
                    continue
                if not isinstance(value, cst.Name) or value.value == func.name:
                    return []
                binding, _scope = self.lookup(value.value, ret)
                target = self.functions.get(value.value)
                if target is None or target.parent is not None or binding is not None and binding.how != "def":
                    return []
                if value.value not in out:
                    out.append(value.value)
        return out
