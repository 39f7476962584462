"""Compiled models handed to functions of other files (issue 10 item 7).

``model = torch.compile(model)`` then ``train(model, loader)`` with ``train``
imported from another file: that function's calls of its parameter run the
compiled model. The calling file tells the project (``ExportedFacts
.compiled_args``: ``ImportRef(module, "train:0")`` -- the function and the
parameter, by position or keyword); the defining file receives it as
``ProjectFacts.compiled_args["train:0"]`` and ``handed_compiled_refs()`` turns
it into a ref of that parameter (``("name", param, FuncInfo, -1, None)``),
which the per-step analysis (steps.py) follows like a local hand-off.
"""
from __future__ import annotations

from typing import Iterator, Optional

import libcst as cst

from gnnlint.facts import ImportRef

_MAX_DEPTH = 3
_LIBRARIES = ("torch", "torch_geometric", "numpy", "tqdm", "lightning", "pytorch_lightning")


class Handoffs:
    """Compiled objects passed across files. Mixed into FileContext; reads the SemanticModel."""

    def _export_compiled_args(self) -> None:
        """Calls of imported functions that pass a compiled object: what this file tells their files."""
        seen: set = set()
        for site_node, site in self.compile_sites:
            for ref in self._handoff_refs(site_node):
                for call in self.all_calls():
                    target = self._imported_function(call)
                    if target is None:
                        continue
                    for spec in self._specs_passing(call, ref):
                        key = (target, spec)
                        if key in seen:
                            continue
                        seen.add(key)
                        self.exported.compiled_args.append(
                            (ImportRef(target.module, f"{target.name}:{spec}", target.level),
                             f"compiled `{site.target}`"))
        # re-exports: `from .utils import test` in a package's __init__.py
        for key, why in self.project.compiled_args.items():
            name, _, spec = key.partition(":")
            ref = self.imports.get(name)
            if name not in self.functions and ref is not None and ref.name[:1].islower():
                self.exported.compiled_args.append((ImportRef(ref.module, f"{ref.name}:{spec}", ref.level), why))

    def _handoff_refs(self, site_node: cst.CSTNode) -> list[tuple]:
        """The refs holding a compile site's result, through local hand-offs."""
        todo = [(ref, 0) for ref in self.compiled_refs(site_node) if ref[0] in ("name", "self")]
        out: list[tuple] = []
        while todo:
            ref, depth = todo.pop()
            if ref in out:
                continue
            out.append(ref)
            if depth < _MAX_DEPTH:
                todo += [(new, depth + 1) for how, new, _call in self._ref_passes(ref) if how == "ref"]
        return out

    def _specs_passing(self, call: cst.Call, ref: tuple) -> Iterator[str]:
        """The parameters (position or keyword) a call passes the ref as."""
        position = 0
        for arg in call.args:
            if arg.star:
                if arg.keyword is None and arg.star == "*":
                    return  # positions unknown after *args
                continue
            if arg.keyword is not None:
                if self._is_ref_expr(arg.value, ref, arg.value):
                    yield arg.keyword.value
                continue
            if self._is_ref_expr(arg.value, ref, arg.value):
                yield str(position)
            position += 1

    def _imported_function(self, call: cst.Call) -> Optional[ImportRef]:
        """``train(...)`` with ``from train_eval import train``, or
        ``train_eval.train(...)`` with ``import train_eval`` / ``from . import
        train_eval``: the function, as the import names it."""
        func = call.func
        if isinstance(func, cst.Name):
            ref = self.imports.get(func.value)
            if ref is None or not ref.name[:1].islower() or self._top(ref.module) in _LIBRARIES:
                return None
            binding, _scope = self.lookup(func.value, call)
            if binding is not None and binding.how != "import":
                return None
            return ref
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) \
                and func.attr.value[:1].islower():
            owner = func.value.value
            ref = self.imports.get(owner)
            if ref is not None and ref.name[:1].islower():  # from . import train_eval
                module = f"{ref.module}.{ref.name}" if ref.module else ref.name
                if self._top(module) not in _LIBRARIES:
                    return ImportRef(module, func.attr.value, ref.level)
                return None
            module = self.aliases.get(owner)
            if ref is None and module and self._top(module) not in _LIBRARIES \
                    and self.lookup(owner, call)[0] is None:
                return ImportRef(module, func.attr.value)
        return None

    @staticmethod
    def _top(module: str) -> str:
        return module.split(".")[0] if module else ""

    def handed_compiled_refs(self) -> list[tuple[tuple, str]]:
        """Parameters of this file's functions that another file passes a
        compiled object to: ``[(ref, what it runs, for messages), ...]``."""
        out = []
        for key, why in self.project.compiled_args.items():
            name, _, spec = key.partition(":")
            info = self.functions.get(name)
            if info is None:
                continue
            params = list(info.params)
            param = params[int(spec)] if spec.isdigit() and int(spec) < len(params) else \
                (spec if spec in info.params else None)
            if param is None:
                continue
            source = why.split(", from ")[1] if ", from " in why else None
            what = f"compiled `{param}`" + (f" (passed in {source})" if source else "")
            out.append((("name", param, info, -1, None), what))
        return out
