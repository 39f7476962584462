"""What ``torch._dynamo.mark_dynamic`` marks, and which arguments of a fed call it leaves static.

``mark_dynamic_keys()`` (the file's marks, by the last part of the marked
expression), ``_loop_mark_keys(loop)`` (the marks that apply to one loop's
batches: its own, through the local helpers it calls), ``_unmarked_args(call)``
(the tensor arguments no mark covers: GNN007 still reports those).
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from gnnlint.semantic.kinds import BATCH, SCALAR
from gnnlint.semantic.model import FuncInfo


class DynamicMarks:
    """mark_dynamic questions. Mixed into FileContext (through Feeds); reads the SemanticModel."""

    def _mark_dynamic_calls(self) -> dict[cst.Call, set[str]]:
        """Each ``torch._dynamo.mark_dynamic(...)`` call and what it marks, by
        the last part of its first argument (``batch.x`` -> ``x``)."""
        cached = getattr(self, "_feed_mark_calls", None)
        if cached is None:
            cached = {}
            for call in self.all_calls():
                resolved = self.resolve(call.func) or ""
                if resolved.startswith("torch") and resolved.split(".")[-1] in ("mark_dynamic", "maybe_mark_dynamic") \
                        and call.args:
                    first = call.args[0].value
                    keys = {self.last_part(first) or self.module.code_for_node(first)}
                    if isinstance(first, cst.Subscript):
                        keys.add(self.last_part(first.value) or "")
                    cached[call] = keys
            self._feed_mark_calls = cached
        return cached

    def mark_dynamic_keys(self) -> set[str]:
        """What ``torch._dynamo.mark_dynamic(...)`` marks anywhere in this file."""
        return set().union(*self._mark_dynamic_calls().values())

    def _marks_in_loop(self, loop: cst.CSTNode, func: Optional[FuncInfo]) -> set[str]:
        """What the body of ``loop`` marks dynamic: directly, or through the
        local functions it calls (``batch = mark_batch_dynamic(batch)``)."""
        marks = self._mark_dynamic_calls()
        keys: set[str] = set()
        todo = [c for c in (func.calls if func is not None else self.module_calls) if self.in_loop_body(c, loop)]
        seen: set = set()
        while todo:
            call = todo.pop()
            if call in marks:
                keys |= marks[call]
                continue
            callee = self.local_callee(call)
            if isinstance(callee, FuncInfo) and callee not in seen and len(seen) < 20:
                seen.add(callee)
                todo += [c for c in callee.calls if self.enclosing_function(c) is callee]
        return keys

    def _loop_mark_keys(self, loop: cst.CSTNode, func: Optional[FuncInfo]) -> set[str]:
        """The marks that apply to the batches of a loop over a loader: its
        own; none when the file's marks all belong to other such loops (a
        per-batch helper the training loop calls does not mark the eval
        loop's batches); else every mark in the file (marked somewhere we
        cannot place: a collate function, the caller)."""
        own = self._marks_in_loop(loop, func)
        if own or not self._mark_dynamic_calls():
            return own
        taken: set[str] = set()
        for other in self.loops:
            if other is loop or not isinstance(other, cst.For) or not self.variable_size_loader(other.iter, other):
                continue
            taken |= self._marks_in_loop(other, self.enclosing_function(other))
        return set() if taken >= self.mark_dynamic_keys() else self.mark_dynamic_keys()

    def _unmarked_args(self, call: cst.Call, marked: Optional[set[str]] = None) -> list[str]:
        """Tensor-like arguments of a call whose dims ``mark_dynamic`` does not cover."""
        marked = self.mark_dynamic_keys() if marked is None else marked
        out = []
        for arg in call.args:
            value = arg.value
            if self.kind(value) == SCALAR:
                continue
            last = self.last_part(value) or ""
            if last in ("batch_size", "num_graphs", "num_nodes", "num_edges") or last.startswith("num_"):
                continue
            keys = {last, self.module.code_for_node(value)}
            if isinstance(value, cst.Name):
                binding = self.feed_binding(value.value, value)
                if binding is not None and binding.how == "assign":
                    keys.add(self.last_part(binding.value) or "")
            if self.kind(value) == BATCH and marked:
                continue  # the whole batch: trust the marks on its fields
            if not keys & marked:
                out.append(self.module.code_for_node(value))
        return out

