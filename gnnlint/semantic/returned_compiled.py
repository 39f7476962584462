"""Compiled models a builder function returns: ``model, ema = build_model(cfg)``.

Training code often compiles the model in a builder (``def
build_model_and_ema(config): ... if config["use_compile"]: model =
torch.compile(model); return model, ema_model``) and the caller -- in this
file or another -- runs what it gets back: ``model, ema = build_model_and_ema(
config)`` then ``train_epoch(model, loader, ...)`` or ``model(batch)`` in a
loop. Whatever name takes that element of the result holds the compiled model.

``tuple_return_refs`` answers for a local builder (compile_sites.py asks it
next to ``return model``: the tuple form). ``export_compiled_returns`` tells
the files importing a top-level builder which element of its result is
compiled (``ExportedFacts.compiled_returns``: ``"build:0"``, ``"build:"`` for
the whole result, also of a factory returning the compile call itself:
``return torch.compile(loss_wrapper, mode=...)``, a compiled callable the
caller hands to a loop function); ``returned_compiled_refs`` turns the calls of such an
imported builder here into refs (``("name", ...)``, as compile_sites.py makes
them), which the per-step analysis (steps.py) and the hand-offs to other
files (handoffs.py) follow like the refs of a compile site of this file.
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from gnnlint.facts import ImportRef
from gnnlint.semantic.model import FuncInfo, assigned_targets


_NO_FUNC = object()  # a compile call outside any function


class ReturnedCompiled:
    """Compiled results of builder functions. Mixed into FileContext; reads the SemanticModel."""

    def _returned_positions(self, func: FuncInfo, names: set) -> list[str]:
        """Where ``func``'s ``return`` statements put one of ``names``: "" (the whole
        result: ``return model``) or the tuple position ("0": ``return model, ema``)."""
        out: list[str] = []
        for ret in func.returns:
            value = ret.value
            if isinstance(value, cst.Name) and value.value in names:
                out.append("")
            elif isinstance(value, cst.Tuple):
                for index, element in enumerate(value.elements):
                    if isinstance(element, cst.StarredElement):
                        break
                    if isinstance(element.value, cst.Name) and element.value.value in names:
                        out.append(str(index))
            elif isinstance(value, cst.Call) and (self.last_part(value.func) or "")[:1].isupper():
                # `return RunData(model=model, loader=loader)`: a record (dataclass, NamedTuple) of the run
                out += [f".{arg.keyword.value}" for arg in value.args if arg.keyword is not None
                        and isinstance(arg.value, cst.Name) and arg.value.value in names]
        return list(dict.fromkeys(out))

    def _position_refs(self, call: cst.Call, position: str) -> list[tuple]:
        """The refs of the names taking element ``position`` of ``call``'s result
        (``model, ema = build(...)``; ``model = build(...)`` for the whole result)."""
        if position == "":
            return [ref for ref in self._refs_of_value(call, 0) if ref[0] != "arg"]
        if position.startswith("."):
            return self._field_refs(call, position[1:])
        parent = self.parent.get(call)
        if not isinstance(parent, (cst.Assign, cst.AnnAssign)) or parent.value is not call:
            return []
        refs = []
        for target in assigned_targets(parent):
            if isinstance(target, (cst.Tuple, cst.List)) and int(position) < len(target.elements) \
                    and not any(isinstance(e, cst.StarredElement) for e in target.elements[:int(position) + 1]):
                ref = self._ref_for_target(target.elements[int(position)].value, call)
                if ref is not None:
                    refs.append(ref)
        return refs

    def _field_refs(self, call: cst.Call, field: str) -> list[tuple]:
        """``run_data = build(spec)`` then ``model = run_data.model``: the names taking
        that field of the record ``call`` returns, in the same function."""
        holders = {ref[1]: ref for ref in self._refs_of_value(call, 0) if ref[0] == "name"}
        refs = []
        for node in self.attribute_nodes(field) if holders else ():
            holder = holders.get(node.value.value) if isinstance(node.value, cst.Name) else None
            assign = self.parent.get(node)
            if holder is None or not isinstance(assign, cst.Assign) or assign.value is not node \
                    or not self.is_ref_expr(node.value, holder, node):
                continue
            for target in assigned_targets(assign):
                ref = self._ref_for_target(target, node)
                if ref is not None:
                    refs.append(ref)
        return refs

    def tuple_return_refs(self, site_node: cst.CSTNode, targets: list, depth: int) -> list[tuple]:
        """``def build(cfg): model = torch.compile(model); return model, ema``: the names
        this file's callers unpack that element into (``model, ema = build(cfg)``)."""
        names = {t.value for t in targets if isinstance(t, cst.Name)}
        func = self.enclosing_function(site_node) if names and depth < 3 else None
        if func is None:
            return []
        refs: list[tuple] = []
        for position in self._returned_positions(func, names):
            if position:
                for caller in self.callers_of(func):
                    refs.extend(self._position_refs(caller, position))
        return refs

    def export_compiled_returns(self) -> None:
        """This file's top-level functions returning what a compile site here
        produced: told to the files importing them (which element is compiled)."""
        seen: set = set()
        for site_node, site in self.compile_sites:
            if isinstance(self._compile_holder(site_node)[1], cst.Return):
                # `return torch.compile(loss_wrapper, mode=...)`: a factory of a compiled callable
                name = self._builder_name(self.enclosing_function(site_node) or _NO_FUNC)
                if name is not None and (name, "") not in seen:
                    seen.add((name, ""))
                    self.exported.compiled_returns.append(
                        (ImportRef("", f"{name}:"), f"compiled `{site.target}` returned by `{name}`"))
            for ref in self.compiled_refs(site_node):
                func = ref[2] if ref[0] == "name" else None
                name = self._builder_name(func) if func is not None else None
                if name is None:
                    continue
                for position in self._returned_positions(func, {ref[1]}):
                    if (name, position) not in seen:
                        seen.add((name, position))
                        self.exported.compiled_returns.append(
                            (ImportRef("", f"{name}:{position}"),
                             f"compiled `{site.target}` returned by `{name}`"))

    def _builder_name(self, func) -> Optional[str]:
        """How another file calls this builder: ``build`` (a top-level function) or
        ``Builder.build`` (a ``@staticmethod`` / ``@classmethod`` of a top-level
        class, called on the class: ``Builder.build_model(cfg)``)."""
        if func is _NO_FUNC or func.parent is not None:
            return None
        if func.cls is None:
            return func.name if self.functions.get(func.name) is func else None
        if self.classes.get(func.cls.name) is not func.cls or func.cls.methods.get(func.name) is not func:
            return None
        kinds = {self.last_part(d.decorator) for d in func.node.decorators}
        return f"{func.cls.name}.{func.name}" if kinds & {"staticmethod", "classmethod"} else None

    def returned_compiled_refs(self) -> list[tuple[tuple, str]]:
        """``[(ref, what it runs), ...]``: the names here holding the compiled result
        of a builder imported from another file (its ``compiled_returns`` facts)."""
        return [(ref, what) for ref, what, _builder in self.returned_compiled_builders()]

    def returned_compiled_builders(self) -> list[tuple[tuple, str, ImportRef]]:
        """``returned_compiled_refs`` with the imported builder each ref's value came from."""
        if not self.project.compiled_returns:
            return []
        key = ("returned_compiled_refs",)

        def compute():
            out = []
            for call in self.all_calls():
                target = self._imported_function(call) or self._imported_class_method(call)
                if target is None:
                    continue
                stem = (target.module or "").split(".")[-1]
                for fact, why in self.project.compiled_returns.items():
                    head, _, position = fact.rpartition(":")
                    if head == f"{stem}.{target.name}":
                        source = why.split(", from ")[1] if ", from " in why else None
                        field = position[1:] if position.startswith(".") else ""
                        what = f"compiled `{self.module.code_for_node(call.func)}(...){'.' + field if field else ''}`" \
                            + ("" if field else " result") + (f" (compiled in {source})" if source else "")
                        out += [(ref, what, target) for ref in self._position_refs(call, position)]
            return out
        return self._memoised(key, compute, [])

    def _imported_class_method(self, call: cst.Call) -> Optional[ImportRef]:
        """``Builder.build_model(cfg)`` with ``from .builder import Builder`` (a
        project class, not rebound here): ``ImportRef(module, "Builder.build_model")``."""
        func = call.func
        if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)):
            return None
        owner = func.value.value
        ref = self.imports.get(owner)
        if ref is None or not ref.name[:1].isupper() or "." in ref.name:
            return None
        binding, _scope = self.lookup(owner, call)
        if binding is not None and binding.how != "import":
            return None
        return ImportRef(ref.module, f"{ref.name}.{func.attr.value}", ref.level)
