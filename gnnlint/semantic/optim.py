"""Optimizers and learning rates: "which optimizer is this, who changes its lr,
and is its step compiled?"

``steps_optimizer(call)`` says whether a ``.step(...)`` call steps an
optimizer: ``opt.step()``, or ``scaler.step(opt)`` -- AMP's ``GradScaler``
(and wrappers like it) step the optimizer they are handed, so the loop
holding that call takes an optimizer step every iteration.
``optimizer_ctor(expr)`` finds the constructor call of an optimizer value,
``lr_changers(ctor)`` the schedulers / ``param_groups[...]["lr"]`` writes
that change its learning rate, ``compiled_steps(ctor)`` the compiled
functions that step it (with their ``dynamic`` setting).
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from gnnlint.semantic.kind_tables import OPTIMIZER, SCHEDULER
from gnnlint.semantic.model import assigned_targets
from gnnlint.semantic.vocab import COMPILE_FUNCS


class Optim:
    """Optimizer / learning-rate questions. Mixed into FileContext; reads the SemanticModel."""

    # -- optimizers -----------------------------------------------------------------
    def steps_optimizer(self, call: cst.Call) -> bool:
        """``call`` is ``<optimizer>.step()`` or ``<anything>.step(<optimizer>)`` (``scaler.step(opt)``);
        a scheduler's step is neither."""
        func = call.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "step"):
            return False
        if self._optimizer_like(func.value):
            return True
        first = call.args[0] if call.args else None
        return first is not None and first.keyword is None and not first.star \
            and self.kind(func.value) != SCHEDULER and self._optimizer_like(first.value)

    def _optimizer_like(self, expr: cst.BaseExpression) -> bool:
        kind = self.kind(expr)
        if kind == SCHEDULER:
            return False
        name = (self.last_part(expr) or "").lower()
        return kind == OPTIMIZER or ("opt" in name and "sched" not in name)

    def optimizer_ctor(self, expr: Optional[cst.CSTNode], at: Optional[cst.CSTNode] = None,
                       depth: int = 0) -> Optional[cst.Call]:
        """The ``torch.optim.X(...)`` call an expression refers to."""
        if expr is None or depth > 5:
            return None
        if isinstance(expr, cst.Call):
            resolved = self.resolve(expr.func) or ""
            parts = resolved.split(".")
            if len(parts) == 3 and parts[:2] == ["torch", "optim"] and parts[2][:1].isupper() \
                    and parts[2] != "Optimizer":
                return expr
            return None
        if isinstance(expr, cst.Name):
            binding = self.feed_binding(expr.value, at or expr)
            if binding is not None and binding.how == "assign":
                return self.optimizer_ctor(binding.value, binding.value, depth + 1)
            if binding is not None and binding.how == "param" and binding.node is not None:
                func = self.enclosing_function(binding.node)
                found_ctors = set()
                for caller in self.callers_of(func) if func is not None else ():
                    value = self.arg_for_param(func, caller, expr.value)
                    found_ctors.add(self.optimizer_ctor(value, caller, depth + 1) if value is not None else None)
                if len(found_ctors) == 1:
                    return found_ctors.pop()  # every caller passes the same optimizer
            return None
        if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self":
            cls = self.enclosing_class(at or expr)
            if cls is not None:
                for value in self.class_attr_values(cls, expr.attr.value):
                    found = self.optimizer_ctor(value, value, depth + 1)
                    if found is not None:
                        return found
        return None

    def lr_changers(self, ctor: cst.Call) -> list[cst.CSTNode]:
        """LR schedulers built on the optimizer ``ctor`` creates, and manual
        writes to its ``param_groups[...]['lr']``."""
        out: list[cst.CSTNode] = []
        for call in self.all_calls():
            resolved = self.resolve(call.func) or ""
            last = resolved.split(".")[-1]
            is_sched = resolved.startswith("torch.optim.lr_scheduler.") or (
                resolved.startswith(("transformers", "timm", "torch_geometric.nn.resolver"))
                and ("schedule" in last.lower() or last.endswith("LR")))
            if not is_sched or last in ("LRScheduler", "_LRScheduler"):
                continue
            opt_arg = None
            for arg in call.args:
                if arg.keyword is not None and arg.keyword.value == "optimizer":
                    opt_arg = arg.value
            if opt_arg is None and call.args and call.args[0].keyword is None:
                opt_arg = call.args[0].value
            if opt_arg is not None and self.optimizer_ctor(opt_arg, call) is ctor:
                out.append(call)
        for node in self.preorder:
            if isinstance(node, (cst.Assign, cst.AugAssign)):
                targets = assigned_targets(node)
                for target in targets:
                    if self._lr_slot_of(target, node) is ctor:
                        out.append(node)
        return out

    def _lr_slot_of(self, target: cst.CSTNode, at: cst.CSTNode) -> Optional[cst.Call]:
        if not (isinstance(target, cst.Subscript) and len(target.slice) == 1
                and isinstance(target.slice[0].slice, cst.Index)
                and self.literal_value(target.slice[0].slice.value) == "lr"):
            return None
        group = target.value
        if isinstance(group, cst.Subscript):
            group = group.value  # opt.param_groups[0]['lr']
        elif isinstance(group, cst.Name):  # for g in opt.param_groups: g['lr'] = ...
            binding = self.feed_binding(group.value, at)
            if binding is None or binding.how != "iter":
                return None
            group = binding.value
        if isinstance(group, cst.Attribute) and group.attr.value == "param_groups":
            return self.optimizer_ctor(group.value, at)
        return None

    def compiled_steps(self, ctor: cst.Call) -> list[tuple[cst.CSTNode, object]]:
        """Where the step of the optimizer ``ctor`` creates runs compiled, with
        the ``dynamic=`` of that compile: ``torch.compile(opt.step)``, or
        ``opt.step()`` inside a compiled function."""
        out: list[tuple[cst.CSTNode, object]] = []
        for site_node, site in self.compile_sites:
            call = site_node if isinstance(site_node, cst.Call) else None
            if call is None or self.resolve(call.func) not in COMPILE_FUNCS or not call.args:
                continue
            target = call.args[0].value
            if isinstance(target, cst.Attribute) and target.attr.value == "step" \
                    and self.optimizer_ctor(target.value, call) is ctor:
                out.append((site_node, self.compile_dynamic(site_node)))
        for call in self.all_calls():
            func = call.func
            if not (isinstance(func, cst.Attribute) and func.attr.value == "step"):
                continue
            if not self.compiled_region(call) or self.optimizer_ctor(func.value, call) is not ctor:
                continue
            out.append((call, self._dynamic_of_region(call)))
        return out

    def _dynamic_of_region(self, node: cst.CSTNode) -> object:
        """``dynamic=`` of the compile that makes ``node``'s function compiled."""
        func = self.enclosing_function(node)
        while func is not None:
            for deco in func.node.decorators:
                site = self.compile_site(deco)
                if site is not None:
                    return self.compile_dynamic(deco)
            for site_node, site in self.compile_sites:
                if isinstance(site_node, cst.Call) and site.target == func.name:
                    return self.compile_dynamic(site_node)
            func = func.parent
        return None
