"""Which imported helper copies the tensor it is handed to the host?

A project helper wraps the copy::

    # tools/torch_tools.py
    def to_numpy(t: torch.Tensor) -> np.ndarray:
        return t.cpu().detach().numpy()

    # calculators/calc.py (ASE calls calculate() once per MD step)
    energy = to_numpy(output["energy"])

Every call of ``to_numpy`` copies its argument: a call in per-step code is a
per-step sync at the call site (the helper's body says so only once, for all
callers). ``export_synced_params`` tells the files importing a top-level
function which of its parameters it copies (``"to_numpy:0"``, the sync method
in the why); ``synced_param_call`` answers for a call here: the why, or None.
Only the exact form: ``<param>[.detach()/.clone()/.contiguous()]*.cpu()`` /
``.item()`` / ``.tolist()`` on a parameter the function never rebinds, in
what the function returns (a converter: every call is the copy).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import libcst as cst

from gnnlint.facts import ImportRef

if TYPE_CHECKING:
    from gnnlint.context import FileContext

_COPIES = {"cpu", "item", "tolist"}
_KEEPS = {"detach", "clone", "contiguous"}


def _copied_param(call: cst.Call, params: dict) -> Optional[tuple[str, str]]:
    """``t.detach().cpu()``: ("t", "cpu") when ``t`` is one of ``params``."""
    func = call.func
    if not (isinstance(func, cst.Attribute) and func.attr.value in _COPIES) or call.args:
        return None
    receiver = func.value
    while isinstance(receiver, cst.Call) and isinstance(receiver.func, cst.Attribute) and not receiver.args \
            and receiver.func.attr.value in _KEEPS:
        receiver = receiver.func.value
    if isinstance(receiver, cst.Name) and receiver.value in params:
        return receiver.value, func.attr.value
    return None


def export_synced_params(ctx: "FileContext") -> None:
    for name, func in ctx.functions.items():
        if func.cls is not None or func.parent is not None or func.is_async or not func.params:
            continue
        params = {p.name.value: index for index, p in enumerate(func.node.params.params)}
        found: dict[str, str] = {}
        for call in func.calls:
            hit = _copied_param(call, params)
            if hit is not None and _returned(ctx, call) \
                    and all(b.how == "param" for b in func.bindings.get(hit[0], ())):
                found.setdefault(hit[0], hit[1])  # (a rebound parameter may copy something else)
        for param, method in found.items():
            ctx.exported.synced_params.append(
                (ImportRef("", f"{name}:{params[param]}"),
                 f"`{name}` copies its `{param}` to the host with `.{method}()`"))


def _returned(ctx: "FileContext", call: cst.Call) -> bool:
    """The copy is what the helper returns (``return t.cpu().numpy()``): a converter,
    whose every call is the copy. A helper that copies on the side (a graph builder
    reading positions on the host) has its sync reported in its body only."""
    node = ctx.parent.get(call)
    while isinstance(node, (cst.Call, cst.Attribute, cst.Arg, cst.Subscript, cst.SubscriptElement, cst.Index,
                            cst.Tuple, cst.Element, cst.Dict, cst.DictElement)):
        node = ctx.parent.get(node)
    return isinstance(node, cst.Return)


def synced_param_call(ctx: "FileContext", call: cst.Call) -> Optional[tuple[int, str]]:
    """``(position, why)`` when ``call`` (of a helper imported from another file)
    copies the argument at that position to the host, or None."""
    facts = ctx.project.synced_params
    if not facts:
        return None
    function = ctx.imported_function_key(call)
    if function is None:
        return None
    for key, why in facts.items():
        head, _, position = key.rpartition(":")
        if head == function and position.isdigit():
            args = [a for a in call.args if a.keyword is None and not a.star]
            if int(position) < len(args) and len(args) == len(call.args):
                return int(position), why
    return None

