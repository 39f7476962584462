from __future__ import annotations

from typing import Optional

import libcst as cst

from gnnlint.rules.base import FixSpec, Invalid, NodeEdit, Rule, Valid


class CompiledStateDict(Rule):
    """
    ## What it does
    Flags `compiled.state_dict()` — the state dict of the wrapper that
    `torch.compile(model)` returns — when it is saved (`torch.save(...)`,
    also through a variable or a dict such as `{"model": ...}`) or loaded
    into another module (`other.load_state_dict(compiled.state_dict())`).

    `model.compile()` compiles in place and keeps plain keys: not flagged,
    nor the state dict of the original `model`, nor
    `compiled.load_state_dict(compiled.state_dict())`.

    ## Why is this bad?
    The wrapper (`OptimizedModule`) holds the model as `_orig_mod`, so every
    key gets an `_orig_mod.` prefix. A checkpoint saved that way does not
    load into the plain model — measured on torch 2.13.0 + torch_geometric
    2.8.1: `RuntimeError: Error(s) in loading state_dict for Net: Missing
    key(s) ... "c1.lin_l.weight" ... Unexpected key(s) "_orig_mod.c1.lin_l.weight"`
    (`shared/evidence/torch-2.13-pyg-2.8.1/e11g_state_dict.py`). The error
    comes at load time, often days later in another script (evaluation,
    deployment), and the run that produced the checkpoint cannot be
    repeated cheaply. `model.state_dict()` or `compiled._orig_mod.state_dict()`
    load fine. The prefix exists in every torch version with
    `torch.compile` (2.0+).

    ## Example
    ```python
    compiled = torch.compile(model)
    ...
    torch.save(compiled.state_dict(), "best.pt")
    ```

    ## Use instead
    ```python
    torch.save(compiled._orig_mod.state_dict(), "best.pt")   # or model.state_dict()
    ```

    ## Fix safety
    Safe: `compiled._orig_mod` is the module that was compiled, the same
    parameters under their own names. It is offered when the name holds a
    `torch.compile(...)` result on every path that reaches the call. When it
    is compiled on some paths only (`if args.compile: model =
    torch.compile(model)`) or is an attribute, the fix is
    `getattr(model, "_orig_mod", model).state_dict()`, which is the plain
    model's `state_dict()` on the other paths.

    ## References
    - [torch.compile: saving and loading](https://pytorch.org/docs/stable/torch.compiler_faq.html)
    - Evidence: `shared/evidence/torch-2.13-pyg-2.8.1/report.md` (section C)
    """

    code = "GNN018"
    name = "compiled-state-dict"
    summary = "`state_dict()` of a `torch.compile` wrapper saved or loaded elsewhere (`_orig_mod.` keys)"
    region = "compiled"
    severity = "error"  # the checkpoint does not load into the plain model
    fix_applicability = "safe"
    torch_versions = ">=2.0"
    triggers = (b"state_dict",)

    VALID = (
        Valid("""
import torch
compiled = torch.compile(model)
torch.save(model.state_dict(), "a.pt")
torch.save(compiled._orig_mod.state_dict(), "b.pt")
compiled.load_state_dict(compiled.state_dict())
model.compile()
torch.save(model.state_dict(), "c.pt")
"""),
    )
    INVALID = (
        Invalid("""
import torch
compiled = torch.compile(model, dynamic=True)
torch.save(compiled.state_dict(), "best.pt")
""", lines=(4,), expected_fix="""
import torch
compiled = torch.compile(model, dynamic=True)
torch.save(compiled._orig_mod.state_dict(), "best.pt")
"""),
        Invalid("""
import copy
import torch
def train(model, loader):
    model = torch.compile(model)
    best = copy.deepcopy(model.state_dict())
    torch.save({"model": best, "epoch": 3}, "ckpt.pt")
    plain = build_model()
    plain.load_state_dict(model.state_dict())
""", lines=(6, 9)),
        # compiled on one path only: `._orig_mod` would break the other one (a new user's trial)
        Invalid("""
import torch
model = Net()
if args.compile:
    model = torch.compile(model)
torch.save(model.state_dict(), "ckpt.pt")
""", lines=(6,), expected_fix="""
import torch
model = Net()
if args.compile:
    model = torch.compile(model)
torch.save(getattr(model, "_orig_mod", model).state_dict(), "ckpt.pt")
"""),
        # the code already unwraps: the else path holds the plain model, `._orig_mod` would break it
        Invalid("""
import torch
def save(model):
    model = torch.compile(model)
    if hasattr(model, "_orig_mod"):
        save_model = model._orig_mod
    else:
        save_model = model
    torch.save(save_model.state_dict(), "m.pt")
""", lines=()),
        Invalid("""
import torch
def save(model):
    model = torch.compile(model)
    sd = model._orig_mod.state_dict() if hasattr(model, "_orig_mod") else model.state_dict()
    torch.save(sd, "m.pt")
""", lines=()),
        Invalid("""
import torch
def save(model):
    model = torch.compile(model)
    plain = getattr(model, "_orig_mod", model)
    torch.save(plain.state_dict(), "m.pt")
""", lines=()),
    )

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "state_dict") or node.args:
            return
        ctx = self.context
        receiver = func.value
        if not self._wrapper(receiver, node):
            return
        use = self._escapes(node, receiver)
        if use is None:
            return
        text = ctx.module.code_for_node(receiver)
        fails = "the saved checkpoint will not load into the plain model" if use == "the saved checkpoint" \
            else f"{use} fails"
        if self._compiled_on_every_path(receiver, node):
            what, plain = "a `torch.compile` wrapper", f"{text}._orig_mod"
        else:  # `if args.compile: model = torch.compile(model)`: `._orig_mod` would break the other path
            what, plain = f"`{text}` when it is compiled", f'getattr({text}, "_orig_mod", {text})'
        fix = FixSpec("safe", f"Use `{plain}.state_dict()`", (NodeEdit(receiver, plain),))
        self.report(node, f"`{text}.state_dict()` of {what}: {fails} "
                          f"(`RuntimeError: Missing key(s)`). Its keys start with `_orig_mod.`; use "
                          f"`{plain}.state_dict()` or the original model's.", fix)

    def _compiled_on_every_path(self, expr: cst.BaseExpression, at: cst.CSTNode) -> bool:
        """Every binding of the name that may reach ``at`` is a ``torch.compile(...)``
        result (an attribute's bindings are not followed: not known)."""
        ctx = self.context
        if not isinstance(expr, cst.Name):
            return False
        reaching = ctx.reaching(expr.value, at)
        return bool(reaching) and all(
            isinstance(getattr(b, "value", None), cst.Call)
            and (ctx.resolve(b.value.func) or "") in ("torch.compile", "torch_geometric.compile")
            for b, _scope in reaching)

    def _wrapper(self, expr: cst.BaseExpression, at: cst.CSTNode) -> bool:
        ctx = self.context
        if not isinstance(expr, (cst.Name, cst.Attribute)):
            return False
        found = ctx.compiled_value(expr, at)
        if found is None or "function" in found:
            return False
        text = ctx.module.code_for_node(expr)
        if any(site.api == "Module.compile" and site.target == text for _n, site in ctx.compile_sites):
            return False
        return not self._unwrapped(expr, at)

    def _unwrapped(self, expr: cst.BaseExpression, at: cst.CSTNode) -> bool:
        """The code already tells the wrapper from the model (``if hasattr(model, "_orig_mod"):
        save_model = model._orig_mod else: save_model = model``; ``getattr(m, "_orig_mod", m)``):
        ``expr`` is then not a wrapper on every path, and adding ``._orig_mod`` would break the
        uncompiled one."""
        ctx = self.context
        if isinstance(expr, cst.Name):
            for binding, _scope in ctx.reaching(expr.value, at):
                value = getattr(binding, "value", None)
                if value is not None and "_orig_mod" in ctx.module.code_for_node(value):
                    return True
        for anc in ctx.ancestors(at):
            test = anc.test if isinstance(anc, (cst.If, cst.IfExp, cst.While)) else None
            if test is not None and "_orig_mod" in ctx.module.code_for_node(test):
                return True
        return False

    def _escapes(self, node: cst.Call, receiver: cst.BaseExpression) -> Optional[str]:
        """How the state dict leaves the wrapper: "the saved checkpoint" or
        "`x.load_state_dict(...)`"; None when it stays (or is unknown)."""
        ctx = self.context
        found = self._use_of(node, receiver)
        if found is not None:
            return found
        # best = copy.deepcopy(model.state_dict()) ... torch.save(best, ...)
        stmt = ctx.statement_of(node)
        if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 \
                and isinstance(stmt.body[0], cst.Assign) and len(stmt.body[0].targets) == 1 \
                and isinstance(stmt.body[0].targets[0].target, cst.Name):
            name = stmt.body[0].targets[0].target.value
            func = ctx.enclosing_function(node)
            for use in ctx.name_uses(name):
                if ctx.enclosing_function(use) is func and ctx.order.get(use, 0) > ctx.order.get(node, 0):
                    found = self._use_of(use, receiver)
                    if found is not None:
                        return found
        return None

    def _use_of(self, node: cst.CSTNode, receiver: cst.BaseExpression) -> Optional[str]:
        ctx = self.context
        for anc in ctx.ancestors(node):
            if isinstance(anc, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
                return None
            if isinstance(anc, cst.Call):
                resolved = ctx.resolve(anc.func) or ""
                if resolved in ("torch.save", "torch.jit.save") or resolved.endswith(".save_checkpoint"):
                    return "the saved checkpoint"
                if isinstance(anc.func, cst.Attribute) and anc.func.attr.value == "load_state_dict":
                    owner = ctx.module.code_for_node(anc.func.value)
                    if owner != ctx.module.code_for_node(receiver):
                        return f"`{owner}.load_state_dict(...)`"
                    return None
        return None
