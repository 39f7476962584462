"""Classes a compile reaches through a registry object of another file.

Real code picks the model by a config name from a registry that a decorator
fills where each model is defined: ``@registry.register_model("painn")`` on
the class in ``models/painn.py``, and in the trainer ``self.model =
registry.get_model_class(cfg["name"])(**cfg)`` then ``torch.compile(
self.model)``. Other spellings of the same thing: ``MODELS.build(cfg)`` /
``MODELS.get(name)(...)`` / ``MODELS[name](...)`` with
``@MODELS.register_module()`` (an mmengine-style ``Registry``).

The compiling file cannot see which classes register there; it answers
``registry_choice(call)`` with ``ImportRef("", "@<registry>.<getter>")``,
which regions.py exports as a ``compiled_params`` fact
(``"<registry>.<getter>:@/"``) pulled by the files whose import lines name the
registry. There ``mark_registered_classes`` marks each class decorated with
``@<registry>.register*`` whose noun matches the getter (``get_model_class``
reads ``register_model``, not ``register_dataset``: instances.registry_matches)
-- every class the project could pass there, never every class.
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from gnnlint.facts import ImportRef

# getters that return a class (called again to build it) or, for `build`, an instance
_CLASS_GETTERS = ("get",)
_INSTANCE_GETTERS = ("build",)
SUBSCRIPT_GETTER = "get"  # `MODELS[name]`: a lookup of any kind


def registry_choice(ctx, func: cst.BaseExpression, instance: bool) -> Optional[ImportRef]:
    """``registry.get_model_class(name)`` (``instance`` False: the class, the
    caller builds it) or ``MODELS.build(cfg)`` (``instance`` True), or
    ``MODELS[name]``: the registry ref when ``registry`` / ``MODELS`` is a
    name imported by ``from ... import`` and the lookup's name is not a literal
    string (a literal picks one class, which the registry's file alone knows)."""
    if isinstance(func, cst.Subscript):
        if instance or not isinstance(func.value, cst.Name) or len(func.slice) != 1 \
                or not isinstance(func.slice[0].slice, cst.Index):
            return None
        owner, getter, key = func.value.value, SUBSCRIPT_GETTER, func.slice[0].slice.value
    elif isinstance(func, cst.Call) and isinstance(func.func, cst.Attribute) \
            and isinstance(func.func.value, cst.Name):
        owner, getter = func.func.value.value, func.func.attr.value
        if not getter.startswith(_INSTANCE_GETTERS if instance else _CLASS_GETTERS):
            return None
        key = func.args[0].value if func.args else None
    else:
        return None
    if key is None or isinstance(ctx.literal_value(key), str):
        return None
    if owner[:1] == "_":
        return None
    binding = ctx.lookup(owner, func)[0]
    if owner in ctx.imports:
        if binding is not None and binding.how != "import":
            return None
    elif not _module_registry(ctx, owner, binding):
        return None
    return ImportRef("", f"@{owner}.{getter}")


def _module_registry(ctx, owner: str, binding) -> bool:
    """``MODELS = Registry("models")`` / ``class ModelRegistry:`` bound once at module level here: a
    registry the files importing it fill (``def build_model(cfg): return MODELS.build(cfg)`` in the
    registry's own module)."""
    bindings = ctx.module_bindings.get(owner, ())
    if len(bindings) != 1 or (binding is not None and binding is not bindings[0]):
        return False
    one = bindings[0]
    return one.how == "class" or (one.how == "assign" and isinstance(one.value, cst.Call))


def imported_module(ctx, owner: cst.BaseExpression, at: cst.CSTNode) -> Optional[str]:
    """``mod = importlib.import_module("src.models")`` (one assignment of a
    literal dotted path reaches ``owner``): the project module it names, so
    ``getattr(mod, cfg.name)`` is a class of that module chosen by name."""
    if not isinstance(owner, cst.Name):
        return None
    binding = ctx.sole_binding(owner.value, at, "assign")
    if binding is None:
        return None
    value = binding.value
    if not isinstance(value, cst.Call) or not value.args \
            or ctx.resolve(value.func) not in ("importlib.import_module", "__import__"):
        return None
    path = ctx.literal_value(value.args[0].value)
    if not isinstance(path, str) or not path or path.startswith(".") \
            or (ctx.resolve(value.func) == "__import__" and "." in path):
        return None  # (`__import__("a.b")` gives the package `a`)
    return path


def registry_key(where: str, spec: str) -> Optional[tuple]:
    """A pulled ``compiled_params`` key ``"<stem>.<registry>.<getter>"`` with
    spec ``"@/"`` + the registered names the project's configs pick
    (registry_picks.py; empty: any): ``(registry, getter, names | None)``;
    None for the other keys."""
    parts = where.split(".")
    if not spec.startswith("@/") or len(parts) != 3:
        return None
    return parts[1], parts[2], (frozenset(spec[2:].split(",")) if spec[2:] else None)


def mark_registered_classes(ctx, registries: list) -> None:
    """``@registry.register_model("equiformer_v3") class EquiformerV3``: a
    registry another file builds its compiled model from (``registries``:
    ``(registry, getter, picked names | None, why)``) -- the class is compiled
    when the config picks its name: one of the picked names, or any when the
    project's configs name none (``@MODELS.register_module()``: the class's name)."""
    from gnnlint.semantic.instances import registry_matches  # instances imports choices, which imports this
    for cls in ctx.classes.values():
        for deco in cls.node.decorators:
            target = deco.decorator.func if isinstance(deco.decorator, cst.Call) else deco.decorator
            if not (isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name)
                    and target.attr.value.startswith("register")):
                continue
            owner, register = target.value.value, target.attr.value
            for registry, getter, picks, why in registries:
                if owner != registry or not (registry_matches(getter, register) or getter == SUBSCRIPT_GETTER):
                    continue
                name = _registered_name(ctx, deco.decorator)
                if picks is not None and (name if isinstance(name, str) else cls.name) not in picks:
                    continue
                picked = f"when the config picks {name!r}" if isinstance(name, str) else f"registered with `{owner}.{register}`"
                source = why.split(", from ")[1] if ", from " in why else why
                ctx._mark_class(cls, f"compiled forward of `{cls.name}` ({picked}, built from `{owner}.{getter}(...)` "
                                     f"and compiled in {source})")
                break


def _registered_name(ctx, decorator: cst.BaseExpression):
    """The literal name ``@registry.register_model("painn")`` / ``(name="painn")`` registers, else None."""
    if not isinstance(decorator, cst.Call):
        return None
    for arg in decorator.args:
        if arg.keyword is None or arg.keyword.value == "name":
            return ctx.literal_value(arg.value)
    return None
