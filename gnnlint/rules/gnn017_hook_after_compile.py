from __future__ import annotations

from typing import Optional

import libcst as cst

from gnnlint.rules.base import Invalid, Rule, Valid
from gnnlint.versions import measured

_HOOKS = {"register_forward_hook", "register_forward_pre_hook"}


class HookAfterCompile(Rule):
    """
    ## What it does
    Flags `register_forward_hook` / `register_forward_pre_hook` on a
    **submodule** of a compiled model (`model.conv1`, `model.convs[2]`,
    `compiled._orig_mod.encoder`) that comes lexically after a call of the
    compiled model and before another one, in the same function or script —
    typically embedding extraction or explainability after training.

    A hook on the top-level model, a hook registered before the first call,
    a hook used only by eager calls of the original module afterwards, and a
    file that sets `torch._dynamo.config.skip_nnmodule_hook_guards =
    False` are not flagged.

    ## Why is this bad?
    Dynamo does not guard on the hooks of submodules
    (`skip_nnmodule_hook_guards=True` is the default), so the compiled code
    keeps running the graph traced before the hook existed: **the hook
    silently never runs** — measured on torch 2.13.0 + torch_geometric 2.8.1,
    0 of 3 calls (`shared/evidence/torch-2.13-pyg-2.8.1/e10b_hooks.py`).
    The features you meant to collect are never written, or a stale list is
    used. (A call in a new grad or train/eval mode recompiles and picks the
    hook up; a mode already compiled — evaluation under `no_grad` every
    epoch, then extraction under `no_grad` — does not: the
    `compiled_checkpoint` fixture collects 0 embeddings.) Registering before the first compiled call, registering on the
    top-level module, or `skip_nnmodule_hook_guards = False`: 3 of 3. Only
    torch 2.13 was measured; the default dates from torch 2.1.

    ## Example
    ```python
    model = torch.compile(GNN())
    train(model)
    feats = []
    model.conv2.register_forward_hook(lambda m, i, o: feats.append(o))
    model(data.x, data.edge_index)      # the hook does not run
    ```

    ## Use instead
    ```python
    model = torch.compile(GNN())
    feats = []
    model.conv2.register_forward_hook(lambda m, i, o: feats.append(o))  # before the first call
    train(model)
    ```
    or run the extraction on the eager module (`model._orig_mod`) or set
    `torch._dynamo.config.skip_nnmodule_hook_guards = False`.

    ## Fix safety
    No automatic fix: moving the registration changes when the hook runs.

    ## References
    - [torch.compile and nn.Module hooks](https://pytorch.org/docs/stable/torch.compiler_nn_module.html)
    - Evidence: `shared/evidence/torch-2.13-pyg-2.8.1/report.md` (10g)
    """

    code = "GNN017"
    name = "hook-after-compile"
    summary = "Forward hook registered on a submodule after the compiled model's first call (it never runs)"
    region = "compiled"
    severity = "error"  # the hook silently never runs
    torch_versions = ">=2.1"
    triggers = (b"register_forward",)

    VALID = (
        Valid("""
import torch
model = torch.compile(Net())
feats = []
model.conv2.register_forward_hook(lambda m, i, o: feats.append(o))
model.register_forward_hook(lambda m, i, o: feats.append(o))
for data in loader:
    model(data.x, data.edge_index)
model.register_forward_hook(lambda m, i, o: feats.append(o))
"""),
        Valid("""
import torch
torch._dynamo.config.skip_nnmodule_hook_guards = False
model = torch.compile(Net())
model(x, edge_index)
model.conv2.register_forward_hook(hook)
"""),
    )
    INVALID = (
        Invalid("""
import torch
net = Net()
model = torch.compile(net)
for data in loader:
    loss = model(data.x, data.edge_index).sum()
feats = []
model.convs[1].register_forward_hook(lambda m, i, o: feats.append(o))
net.conv2.register_forward_pre_hook(lambda m, i: None)
model(data.x, data.edge_index)
""", lines=(8, 9)),
    )

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not (isinstance(func, cst.Attribute) and func.attr.value in _HOOKS):
            return
        root = _root(func.value)
        if root is None or root is func.value:
            return  # a hook on the model itself is honoured
        ctx = self.context
        if ctx.attribute_nodes("skip_nnmodule_hook_guards"):
            return
        compiled = self._compiled_callable(root, node)
        if compiled is None:
            return
        if self._call_of(compiled, node, before=True) is None or self._call_of(compiled, node, before=False) is None:
            return  # not called before (the hook is traced), or never again (nothing is lost)
        sub = ctx.module.code_for_node(func.value)
        options = ctx.options
        numbers = " (measured: 0 of 3 calls, torch 2.13 + PyG 2.8.1)" if measured(
            options.torch_version, options.pyg_version) else ""
        self.report(node, f"`{sub}.{func.attr.value}(...)` after `{compiled}(...)` already ran compiled: this hook "
                          f"never runs in the compiled model. Dynamo does not guard submodule hooks{numbers}; "
                          f"register it before the first call, on the top-level module, or set "
                          f"`torch._dynamo.config.skip_nnmodule_hook_guards = False`.")

    def _compiled_callable(self, root: cst.Name, at: cst.CSTNode) -> Optional[str]:
        """The name of the compiled callable that shares ``root``'s submodules."""
        ctx = self.context
        if ctx.compiled_value(root, at) is not None:
            return root.value
        # net = Net(); model = torch.compile(net): net's submodules are model's
        for site_node, site in ctx.compile_sites:
            if site.target == root.value and isinstance(site_node, cst.Call):
                parent = ctx.parent.get(site_node)
                if isinstance(parent, cst.Assign) and len(parent.targets) == 1 \
                        and isinstance(parent.targets[0].target, cst.Name):
                    return parent.targets[0].target.value
        return None

    def _call_of(self, name: str, node: cst.CSTNode, before: bool) -> Optional[cst.Call]:
        """A call of ``name`` in the same function before (or after) ``node``."""
        ctx = self.context
        func = ctx.enclosing_function(node)
        order = ctx.order.get(node, 0)
        for use in ctx.name_uses(name):
            call = ctx.parent.get(use)
            if isinstance(call, cst.Call) and call.func is use and ctx.enclosing_function(use) is func \
                    and (ctx.order.get(use, 0) < order) == before:
                return call
        return None


def _root(expr: cst.BaseExpression) -> Optional[cst.Name]:
    """``model`` of ``model.convs[1]`` / ``model._orig_mod.conv``."""
    while isinstance(expr, (cst.Attribute, cst.Subscript)):
        expr = expr.value
    return expr if isinstance(expr, cst.Name) else None
