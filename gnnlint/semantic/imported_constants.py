"""What is this imported name when the program runs with the project's settings?

Projects keep their switches in a settings module and import them::

    # config.py
    torch_compile_mode = "reduce-overhead"
    use_dynamic: bool = False

    # train.py                       (or `import config` / `config.torch_compile_mode`,
    from config import torch_compile_mode   `from .settings import *`)
    model = torch.compile(model, mode=torch_compile_mode)

Within one file a name bound by an import has no value. ``imported_constant``
asks for it: the file records which imported constant it reads (an
``imported_constants`` request), the engine reads the defining module's
top-level binding (gnnlint/module_constants.py: one literal, not re-bound at
run time) and tells it back, and the name then reads like a local literal
(compile_options.py asks for compile options). An unknown or unresolved
constant stays unreadable (``_NO_VALUE``): the rules say nothing.
"""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Optional

import libcst as cst

from gnnlint.facts import ImportRef

if TYPE_CHECKING:
    from gnnlint.context import FileContext

_LIBRARIES = ("torch", "torch_geometric", "numpy", "np", "os", "sys", "math", "lightning", "pytorch_lightning",
              "dgl", "jax", "typing", "dataclasses", "argparse")


def imported_constant(ctx: "FileContext", expr: cst.BaseExpression) -> Optional[tuple[object, str]]:
    """(value, where it is set) of a project module's constant ``expr`` names, or None (unknown so far)."""
    ref = _constant_ref(ctx, expr)
    if ref is None:
        return None
    requests = ctx.exported.imported_constants
    if not any(r == ref for r, _why in requests):
        requests.append((ref, ""))
    told = ctx.project.imported_constants.get(f"{ref.module}.{ref.name}")
    if told is None:
        return None
    try:
        value = ast.literal_eval(told)
    except (ValueError, SyntaxError):
        return None
    shown = f'"{value}"' if isinstance(value, str) else repr(value)
    return value, f"`{ref.name}` is {shown} in `{ref.module.split('.')[-1]}`"


def _constant_ref(ctx: "FileContext", expr: cst.BaseExpression) -> Optional[ImportRef]:
    if isinstance(expr, cst.Name):
        binding, _scope = ctx.lookup(expr.value, expr)
        ref = ctx.imports.get(expr.value)
        if ref is not None:  # from config import compile_mode
            if binding is not None and binding.how != "import" or not ref.module or _library(ref.module):
                return None
            return ImportRef(ref.module, ref.name, ref.level)
        if binding is None and len(ctx.star_imports) == 1 and expr.value not in ctx.aliases:
            star = ctx.star_imports[0]  # from .settings import *: the one module that may define it
            return None if _library(star.module) else ImportRef(star.module, expr.value, star.level)
        return None
    if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name):
        owner = expr.value.value
        binding, _scope = ctx.lookup(owner, expr)
        if binding is not None and binding.how != "import":
            return None
        ref = ctx.imports.get(owner)
        if ref is not None:  # from . import config / from pkg import config
            module, level = (f"{ref.module}.{ref.name}" if ref.module else ref.name), ref.level
        elif owner in ctx.aliases:  # import config
            module, level = ctx.aliases[owner], 0
        else:
            return None
        if _library(module) or _assigned_here(ctx, owner, expr.attr.value):
            return None
        return ImportRef(module, expr.attr.value, level)
    return None


def _library(module: str) -> bool:
    return module.split(".")[0] in _LIBRARIES


def _assigned_here(ctx: "FileContext", owner: str, attr: str) -> bool:
    """``config.compile_mode = args.mode`` somewhere in this file: the module's value is overridden."""
    return any(isinstance(node.value, cst.Name) and node.value.value == owner and not ctx.is_read(node)
               for node in ctx.attribute_nodes(attr))
