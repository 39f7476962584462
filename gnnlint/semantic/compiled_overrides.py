"""What a base class's overridable method returns, compiled: "which classes does
``self.get_model(...)`` build, when subclasses -- here or in other files -- override it?"

A base trainer compiles what a template method of its own returns, and the
subclasses, often one per file, say what that is::

    # trainers/base.py
    class SgdTrainer:
        def wrap_model(self, model):
            trainer_model = self.get_trainer_model(model)      # abstract here
            return torch.compile(DistributedDataParallel(trainer_model))
        def get_trainer_model(self, model):
            raise NotImplementedError

    # trainers/cfd_trainer.py
    class CfdTrainer(SgdTrainer):
        def get_trainer_model(self, model):
            return self.Model(model=model, trainer=self)     # its forward is compiled
        class Model(nn.Module): ...

``override_choices`` answers, for such a ``self.m(...)`` call met while asking
``model_choices`` (choices.py), with the classes the overrides of local
subclasses return, plus a marker reference (module ``OVERRIDES``) the
compile-site analysis turns into a ``compiled_overrides`` fact
(``"SgdTrainer.get_trainer_model"``), told to the files naming the class in an
import line. ``mark_compiled_overrides`` reads it there: every class deriving
from that base which overrides the method has what its override returns
compiled (and tells its own subclasses' files in turn). Gate: a ``self.m(...)``
call resolving to a method, asked only while resolving a compile target.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import libcst as cst

from gnnlint.facts import ImportRef
from gnnlint.semantic import compiled_calls
from gnnlint.semantic.literals import _NO_VALUE

if TYPE_CHECKING:
    from gnnlint.context import FileContext
    from gnnlint.semantic.model import ClassInfo, FuncInfo

OVERRIDES = "<overrides>"  # the module of the marker reference: not a module of the project


def override_choices(ctx: "FileContext", call: cst.Call, method: "FuncInfo") -> list:
    """``self.m(...)`` running ``method`` (found on the caller's class): the
    local classes overriding ``m`` below the method's class (their ``return``
    values, for ``model_choices`` to resolve) and, for a top-level class, the
    marker telling other files' subclasses. ``[(expr | ImportRef), ...]``."""
    func = call.func
    owner = method.cls
    if owner is None or method.parent is not None or not isinstance(func, cst.Attribute) \
            or not isinstance(func.value, cst.Name) or func.value.value != "self":
        return []
    out: list = []
    for cls in ctx.classes.values():
        if cls is owner or owner not in list(ctx.local_lineage(cls))[1:]:
            continue
        override = cls.methods.get(method.name)
        out += [ret.value for ret in (override.returns if override is not None else ()) if ret.value is not None]
    if ctx.classes.get(owner.name) is owner and owner.name[:1].isupper() \
            and not any(ret.value is not None for ret in method.returns):  # a template: `raise NotImplementedError`
        out.append(ImportRef(OVERRIDES, f"{owner.name}.{method.name}()"))
    return out


def with_passed(ctx: "FileContext", site: cst.Call, why: str) -> str:
    """``why`` prefixed with what the calls running the compiled object give
    (``[0|0,reduction] why``; ``*``: unknown; compiled_calls.py answers it): the
    subclass's file reads which ``forward`` parameters keep their defaults."""
    return f"[{compiled_calls.ref_calls_passed(ctx, site)}] {why}"


def _split_passed(value: str) -> tuple[str, str]:
    if value.startswith("[") and "] " in value:
        spec, _, why = value[1:].partition("] ")
        return spec, why
    return "*", value


def mark_compiled_overrides(ctx: "FileContext") -> None:
    """The classes here deriving from a base another file compiles the result
    of ``Base.m`` for (a ``compiled_overrides`` fact): what their overrides of
    ``m`` return is compiled; their subclasses' files are told in turn."""
    told = ctx.project.compiled_overrides
    if not told:
        return
    for key, value in told.items():
        spec, why = _split_passed(value)
        base, _, name = key.partition(".")
        returns, name = name.endswith("()"), name.removesuffix("()")
        for cls in list(ctx.classes.values()):
            if not _derives_from(ctx, cls, base):
                continue
            if not returns:  # `Base.forward`: a compiled base whose forward its subclasses give
                ctx._mark_class(cls, f"compiled forward of `{cls.name}` (a subclass of `{base}`)")
                continue
            override = _own_override(ctx, cls, name)
            if override is None:
                continue
            text = f"{why.split(', from ')[0]} (`{cls.name}.{name}` overrides `{key}`)"
            for value in _alternatives([ret.value for ret in override.returns if ret.value is not None]):
                nested = _nested_class(ctx, cls, value)
                if nested is not None:  # `return self.Model(model=model)`: a class defined in the class's body
                    ctx._mark_choice(nested, None, text)
                    ctx._memo.setdefault(("override_passed",), {})[nested.name] = spec
                    continue
                for choice, when in ctx.model_choices(value, value):
                    ctx._mark_choice(choice, when, text)
            if cls.name[:1].isupper():
                ctx.exported.compiled_overrides.append((ImportRef("", f"{cls.name}.{name}()"), value))


def _alternatives(values: list) -> list:
    """The values, with ``a if c else b`` split into both."""
    out = []
    while values:
        value = values.pop()
        if isinstance(value, cst.IfExp):
            values += [value.body, value.orelse]
        else:
            out.append(value)
    return out


def _nested_class(ctx: "FileContext", cls: "ClassInfo", value) -> Optional["ClassInfo"]:
    """``self.Model(...)`` / ``Trainer.Model(...)``: a class defined in the body of ``cls`` or a local base."""
    if not isinstance(value, cst.Call) or not isinstance(value.func, cst.Attribute) \
            or not isinstance(value.func.value, cst.Name):
        return None
    name = value.func.attr.value
    for current in ctx.local_lineage(cls):
        if value.func.value.value not in ("self", "cls", current.name):
            continue
        for stmt in current.node.body.body:
            if isinstance(stmt, cst.ClassDef) and stmt.name.value == name:
                return ctx.class_info.get(stmt)
    return None


def _derives_from(ctx: "FileContext", cls: "ClassInfo", base: str) -> bool:
    """``cls`` (or a local base of it) names ``base`` among its bases, imported."""
    for current in ctx.local_lineage(cls):
        for dotted in current.bases:
            if dotted.split(".")[-1] == base and base not in ctx.classes and dotted.split(".")[0] in ctx.imports:
                return True
    return False


def _own_override(ctx: "FileContext", cls: "ClassInfo", name: str) -> Optional["FuncInfo"]:
    method = ctx.method_of(cls, name)
    return method if method is not None and method.cls is not None and method.parent is None else None


def default_branch_unreached(ctx: "FileContext", node: cst.CSTNode) -> bool:
    """``node`` is in the ``forward`` of a class compiled through a told override
    and runs only when a parameter no told compiled call gives differs from its
    literal default (``def forward(self, batch, reduction="mean")`` with ``elif
    reduction == "mean_per_sample":``, the calls giving ``ddp_model(batch)``)."""
    passed = ctx._memo.get(("override_passed",))
    func = ctx.enclosing_function(node) if passed else None
    if func is None or func.name != "forward" or func.cls is None or func.cls.name not in passed:
        return False
    spec = passed[func.cls.name]
    names = list(func.params)[1:]
    if "*" in spec.split("|"):
        return False
    given = set()
    for one in spec.split("|"):
        for item in one.split(","):
            key = item.rstrip("!")
            if key.isdigit():
                if int(key) >= len(names):
                    return False  # *args
                key = names[int(key)]
            given.add(key)
    for test, holds in ctx._conditions(node, func):
        if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and isinstance(test.left, cst.Name)):
            continue
        name, target = test.left.value, test.comparisons[0]
        param = func.params.get(name)
        if name in given or not isinstance(param, cst.Param) or param.default is None \
                or not all(b.how == "param" for b, _f in ctx.reaching(name, test)):
            continue
        default, other = ctx.literal_value(param.default), ctx.literal_value(target.comparator)
        if default is _NO_VALUE or other is _NO_VALUE:
            continue
        equal = isinstance(target.operator, cst.Equal)
        if (isinstance(target.operator, cst.NotEqual) or equal) and (default == other) != (holds == equal):
            return True
    return False


def export_abstract_forward(ctx: "FileContext", cls: "ClassInfo", why: str) -> None:
    """A compiled class with no ``forward`` of its own body (none here, or ``raise
    NotImplementedError``): an instance of it is one of its subclasses (a
    trainer's ``model: ModelBase`` parameter), so the local subclasses are
    compiled and the files naming it in an import line are told (``Base.forward``)."""
    forward = ctx.method_of(cls, "forward")
    if forward is not None and not _abstract(forward):
        return
    for other in list(ctx.classes.values()):
        if other is not cls and cls in list(ctx.local_lineage(other))[1:]:
            ctx._mark_class(other, f"compiled forward of `{other.name}` (a subclass of `{cls.name}`)")
    if ctx.classes.get(cls.name) is cls and cls.name[:1].isupper():
        ctx.exported.compiled_overrides.append((ImportRef("", f"{cls.name}.forward"), why))


def _abstract(func: "FuncInfo") -> bool:
    """The body is only a docstring, ``pass``, ``...`` or ``raise NotImplementedError``."""
    for stmt in func.node.body.body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            return False
        for small in stmt.body:
            if isinstance(small, cst.Pass) or isinstance(small, cst.Expr) and isinstance(
                    small.value, (cst.SimpleString, cst.ConcatenatedString, cst.Ellipsis)):
                continue
            if isinstance(small, cst.Raise) and small.exc is not None and "NotImplementedError" in (
                    ctx_free_text(small.exc)):
                continue
            return False
    return True


def ctx_free_text(node) -> str:
    if isinstance(node, cst.Call):
        node = node.func
    return node.value if isinstance(node, cst.Name) else ""
