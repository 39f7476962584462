"""Constructor arguments: "what does this file pass for ``__init__``'s parameter?"

A model class often takes its submodules as constructor arguments
(``self.representation_model = representation_model`` in ``__init__``) and a
factory decides which class each one is (``TorchMD_Net(TorchMD_ET(...),
head)``, ``Wrapper(model=Encoder(...))``). ``constructor_args(init, param)``
answers with the expressions this file's constructions of the class pass for
that parameter (keyword or positional, ``self`` not counted), so that
``model_choices`` (choices.py) can name the classes a stored submodule may be.
Constructions in other files are told through the ``compiled_params`` facts
(handoffs.py, ``_compiled_submodule_params``).
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from gnnlint.semantic.model import ClassInfo, FuncInfo

_MAX_SITES = 20


class ConstructorArgs:
    """What constructions of a local class pass to its ``__init__``. Mixed into FileContext."""

    def constructions(self, cls: ClassInfo) -> list[cst.Call]:
        """The calls in this file that construct ``cls`` itself (``Net(...)``), in source order."""
        by_callee, _by_attr, _order = self._callers_index()
        return list(by_callee.get(cls, ()))

    def constructor_args(self, init: FuncInfo, param: cst.Param) -> list[cst.BaseExpression]:
        """The expressions this file's constructions of ``init``'s class pass
        for ``param`` (the first 20 constructions; a construction passing
        ``*args`` / ``**kwargs`` or leaving the default gives nothing)."""
        cls = init.cls
        if cls is None or init.name != "__init__" or init.parent is not None:
            return []
        params = list(init.node.params.params)
        position = next((i for i, p in enumerate(params) if p is param), -1) - 1  # self is not passed
        if position < -1 or param in init.node.params.kwonly_params:
            position = -1
        out = []
        for call in self.constructions(cls)[:_MAX_SITES]:
            arg = self._constructor_arg(call, position, param.name.value)
            if arg is not None:
                out.append(arg)
        return out

    @staticmethod
    def _constructor_arg(call: cst.Call, position: int, name: str) -> Optional[cst.BaseExpression]:
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value == name:
                return arg.value
        positional = [a for a in call.args if a.keyword is None]
        if position < 0 or any(a.star for a in positional[:position + 1]) or position >= len(positional):
            return None
        return positional[position].value
