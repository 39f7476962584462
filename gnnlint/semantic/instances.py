"""Compiled models the file did not compile: "is this value an instance of a
model that compiles itself?"

A class may compile its own forward (``if self.compile: self.forward =
torch.compile(self.forward)`` in its ``__init__``; regions.py marks its
forward compiled). Every instance of it is then a compiled model, also where
real code never names the class: ``self.model =
registry.get_model_class(name)(**cfg)`` picks it from a registry its
``@registry.register_model("name")`` decorator fills, and a trainer subclass
in a third file calls ``self.model(batch)`` that its base class built.
``compiled_instance(expr, at)`` answers for such a value (what flow.py's
``compiled_value`` and the per-step analysis ask); the facts travel between
files as ``compiled_instances`` (facts.py), pulled by the files whose import
lines name the class, the registry or the base class (fact_joins.py):

- ``"Net"``: instances of ``Net`` are compiled models;
- ``"@registry.register_model"``: a class registered through that decorator
  compiles itself, so ``registry.get_model_class(name)(...)`` (a getter of
  the same registry whose noun matches: ``get_model_class`` /
  ``register_model``, ``build`` / ``register_module``) may build one;
- ``"Trainer.model"``: ``self.model`` of ``Trainer`` and its subclasses may
  hold one.
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from gnnlint.facts import ImportRef
from gnnlint.semantic.compiled_holders import holder_why
from gnnlint.semantic.kinds import _MODEL_METHODS_SELF
from gnnlint.semantic.model import ClassInfo
from gnnlint.semantic.nested_compiled import nested_why, switch_off
from gnnlint.semantic.vocab import SELF_COMPILED_MARK

_WRAPPERS = ("DataParallel", "DistributedDataParallel")
_GETTER_PREFIXES = ("get_", "build_", "make_", "create_", "get", "build")
_GENERIC_NOUNS = ("", "module", "class", "cls", "obj", "object")
_MAX_DEPTH = 4


def _noun(method: str, prefixes: tuple) -> str:
    for prefix in prefixes:
        if method.startswith(prefix):
            method = method[len(prefix):]
            break
    for suffix in ("_class", "_cls", "_fn"):
        method = method.removesuffix(suffix)
    return method.strip("_")


def registry_matches(getter: str, register: str) -> bool:
    """``get_model_class`` reads what ``register_model`` fills; a per-kind
    registry (``MODELS.build`` / ``MODELS.register_module``) has one noun."""
    if not register.startswith("register") or not getter.startswith(_GETTER_PREFIXES):
        return False
    want, have = _noun(register, ("register",)), _noun(getter, _GETTER_PREFIXES)
    return want == have or want in _GENERIC_NOUNS or have in _GENERIC_NOUNS


class Instances:
    """``compiled_instance`` and the ``compiled_instances`` facts. Mixed into FileContext."""

    def self_compiled_why(self, cls: ClassInfo) -> Optional[str]:
        """Why instances of a local class are compiled models: it compiles its own forward."""
        why = self.compiled_classes.get(cls.name)
        if why is None or SELF_COMPILED_MARK not in why:
            # compiles a submodule its methods run (compiled_holders.py), or holds compiled code below
            # it: a submodule with an `@torch.compile` forward, at any depth (nested_compiled.py)
            return holder_why(self, cls) or nested_why(self, cls)
        flags = self.self_compile_flags(cls)
        return f"`{cls.name}`, which compiles its own forward" + \
            (f" when `self.{sorted(flags)[0]}` is set" if flags else "")

    def compiled_instance(self, expr: cst.BaseExpression, at: cst.CSTNode, depth: int = 0) -> Optional[str]:
        """Whether ``expr`` may hold an instance of a model that compiles
        itself (here or in another file); a description or None."""
        if depth > _MAX_DEPTH or not (self.project.compiled_instances or self._has_self_compiled()):
            return None
        if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self":
            cls = self.enclosing_class(at)
            if cls is None:
                return None
            inherited = self._inherited_attr(cls, expr.attr.value)
            if inherited is not None:
                return inherited
            values = self.class_attr_values(cls, expr.attr.value)
        elif isinstance(expr, cst.Name):
            values = [b.value for b, _f in self.reaching(expr.value, at) if b.how == "assign" and b.value is not None]
        else:
            values = [expr]
        for value in values:
            found = self._instance_value(value, expr, depth)
            if found is not None:
                return found
        return None

    def _has_self_compiled(self) -> bool:
        return any(SELF_COMPILED_MARK in why for why in self.compiled_classes.values()) \
            or self._memoised(("holders",), lambda: any(holder_why(self, cls) is not None
                                                        or nested_why(self, cls) is not None
                                                        for cls in self.classes.values()), False)

    def _inherited_attr(self, cls: ClassInfo, attr: str) -> Optional[str]:
        for c in self.local_lineage(cls):
            for base in c.bases:
                why = self.project.compiled_instances.get(f"{base.split('.')[-1]}.{attr}")
                if why is not None:
                    return why
        return None

    def _instance_value(self, value: cst.BaseExpression, holder: cst.BaseExpression, depth: int) -> Optional[str]:
        while isinstance(value, cst.Call):
            func = value.func
            if isinstance(func, cst.Attribute) and func.attr.value in _MODEL_METHODS_SELF:
                value = func.value  # build(...).to(device)
            elif (self.last_part(func) or "").endswith(_WRAPPERS) and value.args:
                inner = value.args[0].value  # DistributedDataParallel(self.model)
                if self.module.code_for_node(inner) == self.module.code_for_node(holder):
                    return None  # re-wraps what the name already holds
                value = inner
            else:
                break
        if isinstance(value, (cst.Name, cst.Attribute)) and value is not holder:
            return self.compiled_instance(value, value, depth + 1)
        if not isinstance(value, cst.Call):
            return None
        registered = self._registry_instance(value.func)
        if registered is not None:
            return registered
        for cls, when in self.model_choices(value, value):
            why = self.self_compiled_why(cls) if isinstance(cls, ClassInfo) else \
                self.project.compiled_instances.get(cls.name) if isinstance(cls, ImportRef) else None
            if why is not None and not switch_off(why, value):  # `Net(compiled=False)` (nested_compiled.py)
                return why + (f" (when {when})" if when else "")
        return None

    def _registry_instance(self, func: cst.BaseExpression) -> Optional[str]:
        """``registry.get_model_class(name)(...)`` / ``MODELS.build(cfg)``:
        a registry another file's self-compiling class registers itself in."""
        if isinstance(func, cst.Call):
            func = func.func  # get_model_class(name)(...): the getter
        if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)):
            return None
        owner, getter = func.value.value, func.attr.value
        for key, why in self.project.compiled_instances.items():
            if not key.startswith("@"):
                continue
            registry, _, register = key[1:].rpartition(".")
            if registry == owner and registry_matches(getter, register):
                return why
        return None

    # -- what this file tells the others ----------------------------------------------
    def _export_compiled_instances(self) -> None:
        for cls in self.classes.values():
            why = self.self_compiled_why(cls)
            if why is None:
                continue
            self.exported.compiled_instances.append((ImportRef("", cls.name), why))
            for deco in cls.node.decorators:
                target = deco.decorator.func if isinstance(deco.decorator, cst.Call) else deco.decorator
                if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) \
                        and target.value.value in self.imports and target.attr.value.startswith("register"):
                    name = self.literal_value(deco.decorator.args[0].value) \
                        if isinstance(deco.decorator, cst.Call) and deco.decorator.args else None
                    shown = f" (registered as {name!r})" if isinstance(name, str) else ""
                    self.exported.compiled_instances.append(
                        (ImportRef("", f"@{target.value.value}.{target.attr.value}"), why + shown))
        if not self.project.compiled_instances:
            return
        for cls in self.classes.values():  # self.model of a class here holds such an instance
            for attr in cls.attrs:
                at = cls.attrs[attr][0]
                found = self.compiled_instance(cst.Attribute(cst.Name("self"), cst.Name(attr)), at)
                if found is not None:
                    self.exported.compiled_instances.append((ImportRef("", f"{cls.name}.{attr}"), found))
