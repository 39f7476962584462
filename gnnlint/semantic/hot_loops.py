"""Where code runs once per step: the hot loops and hot functions.

``_analyse_hot`` (called by ``Regions._analyse_regions`` after the compiled
regions) finds the loops that step an optimizer, call ``.backward()`` or run
a model (``_is_step_trigger``), keeps the innermost one, adds validation
passes (``eval_loops.py``), Lightning step hooks and the methods a framework
calls once per step (``frameworks.py``), and marks what their bodies call.
``hot_region(node)`` (regions.py) reads the result: ``hot_loops`` and
``hot_funcs``.
"""
from __future__ import annotations

from typing import Iterator, Optional

import libcst as cst

from gnnlint.facts import ImportRef
from gnnlint.semantic import batch_loops, dispatch
from gnnlint.semantic.callback_hooks import abstract_overrides, self_overrides
from gnnlint.semantic.compiled_holders import HANDED_HOLDER, held_compiled_attrs
from gnnlint.semantic.compiled_overrides import _abstract
from gnnlint.semantic.default_off_flags import never_built
from gnnlint.semantic.eval_loops import evaluation_loops
from gnnlint.semantic.returned_callables import factory_name
from gnnlint.semantic.hook_dispatch import dispatched_hook, hook_methods
from gnnlint.semantic.instance_calls import CALL_KEY, call_methods, metric_methods
from gnnlint.semantic.inherited import inherited_compiled_calls
from gnnlint.semantic.kinds import MODEL, SCHEDULER, UNKNOWN
from gnnlint.semantic.library_steps import super_method
from gnnlint.semantic.model import ClassInfo, FuncInfo
from gnnlint.semantic.once_loops import runs_once
from gnnlint.semantic.sampler_loops import sampler_batch_loops
from gnnlint.semantic.step_handoffs import hands_compiled_to_step
from gnnlint.semantic.vocab import LIGHTNING_STEP_HOOKS, MESSAGE_PASSING_METHODS
from gnnlint.semantic.stepped_overrides import stepped_items
from gnnlint.semantic.stepped_payload import origin_file
from gnnlint.semantic.typed_items import annotated_local_class


# a nested loop or def ends a direct trigger's reach (exact types: libcst's node classes are leaves,
# so a set lookup answers isinstance without an ABCMeta check per class)
_BARRIERS = frozenset((cst.For, cst.While, cst.FunctionDef, cst.ClassDef, cst.Lambda))


class HotLoops:
    """Hot-loop questions. Mixed into FileContext (through Regions); reads the SemanticModel."""

    def _holder_calls(self) -> set:
        """Calls of a running method of an object another file hands over,
        whose class compiles its submodules (compiled_holders.py)."""
        return self._memoised(("holder_calls",), lambda: {
            key for key, what in self._handed_calls().items() if HANDED_HOLDER in what}, set())

    def _handed_calls(self) -> dict:
        """{id(call): what} of the calls running compiled code (asked only when another file hands one here)."""
        def compute():
            from gnnlint.semantic.steps import StepAnalysis  # a throwaway analysis: hot regions are not known yet

            return StepAnalysis(self)._compiled_calls()
        return self._memoised(("handed_calls",), compute, {})

    def _runs_handed(self, call: cst.Call) -> bool:
        """``self.student(x)`` with ``self.student = models[0]`` of a list another file
        hands ``__init__``: the call runs the compiled model (whatever the name's kind). Only
        ``self.<attr>(...)``: a handed parameter's own calls (``model.step(p)`` in a rollout
        helper) are the caller's per-step work (the ``stepped`` fact says so, with its origin)."""
        return " (passed in " in self._handed_calls().get(id(call), "")

    def _is_step_trigger(self, call: cst.Call) -> bool:
        func = call.func
        if isinstance(func, cst.Attribute):
            attr = func.attr.value
            if attr == "backward":
                return True
            if attr == "step":
                if self.kind(func.value) == SCHEDULER:
                    return False
                if self.steps_optimizer(call):  # `opt.step()`, `scaler.step(opt)` (optim.py)
                    return True
        if self._inside_forward_pass(call) and not self._runs_held_compiled(call):
            # A layer calling its submodules in a loop is a forward pass, not
            # a training or inference loop.
            return False
        kind = self.kind(func) if isinstance(func, (cst.Name, cst.Attribute)) else UNKNOWN
        if kind == MODEL:
            return True
        if isinstance(func, cst.Name) and kind == UNKNOWN \
                and (self.compiled_value(func, call) or "").startswith("compiled `"):
            return True  # `eval_model = ema.module if ema is not None else model`: may be the compiled model
        if isinstance(func, cst.Subscript) and self.compiled_value(func, call):
            return True  # `models["gnn"](x)` with `models = {"gnn": torch.compile(gnn)}` (flow.py)
        if isinstance(func, cst.Name) and kind == UNKNOWN and self._element_call(func, call):
            return True  # `[m(x) for m in models]` after `models.append(torch.compile(net))` (containers.py)
        if isinstance(func, (cst.Name, cst.Attribute)) and self.compiled_instance(func, call):
            return True  # a model that compiles itself, built from a registry / by a base class
        if isinstance(func, cst.Attribute) and id(call) in inherited_compiled_calls(self):
            return True  # `trainer.train(x, y)`: inherited from an imported base, runs the compiled self.model
        if hands_compiled_to_step(self, call):
            return True  # `model.train_step(model, opt, it)`: another file's step function runs it
        if batch_loops.hands_model(self, call):
            return True  # `relax(batch=batch, model=self)`: another file's function runs it on the batch
        if isinstance(func, cst.Attribute) and self.project.compiled_args and id(call) in self._holder_calls():
            return True  # `agent.get_action(obs)`: a handed object's method runs the submodules it compiled
        if self.project.compiled_args and isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) \
                and func.value.value == "self" and self._runs_handed(call):
            return True  # `self.student(x)`: an item of a list of compiled models another file hands over
        if isinstance(func, cst.Attribute) and self.kind(func.value) == MODEL and func.attr.value in (
                "forward", "encode", "decode", "inference", "predict", "embed"):
            return True
        return False

    def _element_call(self, func: cst.Name, call: cst.Call) -> bool:
        """``model(x)`` with ``model`` a loop name over a list holding compiled objects:
        the per-step analysis (a throwaway one: hot regions are not known yet) counts it."""
        if not (self.compile_sites or self.project.compiled_args or self.project.compiled_returns):
            return False  # exact: every compiled list starts at one of these
        binding, _scope = self.lookup(func.value, call)
        if binding is None or binding.how != "iter":
            return False

        def compute():
            from gnnlint.semantic.steps import StepAnalysis

            return set(StepAnalysis(self)._compiled_calls())
        return id(call) in self._memoised(("element_calls",), compute, set())

    def _abstract_step(self, info: FuncInfo) -> bool:
        """``self.timestep(data, forces)`` with ``def timestep(self): raise NotImplementedError``
        in a class that compiles its own model (``self.model = torch.compile(self.model)``): the
        subclasses' overrides (here or in other files, stepped_overrides.py) take the step with the
        compiled model, so a loop calling it once per iteration runs a step every iteration."""
        cls = info.cls
        return cls is not None and info.parent is None and not info.name.startswith("__") \
            and bool(self.compile_calls) and _abstract(info) and bool(self.compiled_self_attrs(cls))

    def compiled_self_attrs(self, cls: ClassInfo) -> list:
        """``self.model = torch.compile(self.model)`` / ``self.policy = torch.compile(policy)`` in a
        method of ``cls``: the attributes its methods run compiled."""
        def compute():
            out = list(held_compiled_attrs(self, cls))
            for call in self.compile_calls:
                stmt, func = self.parent.get(call), self.enclosing_function(call)
                if func is None or func.cls is not cls or not isinstance(stmt, cst.Assign):
                    continue
                out += [t.target.attr.value for t in stmt.targets if isinstance(t.target, cst.Attribute)
                        and isinstance(t.target.value, cst.Name) and t.target.value.value == "self"
                        and t.target.attr.value not in out]
            return out
        return self._memoised(("compiled_self_attrs", id(cls.node)), compute, [])

    def _runs_held_compiled(self, call: cst.Call) -> bool:
        """``self.gnn(batch)`` where a method of the class re-binds ``self.gnn`` to its
        compiled self (compiled_holders.py): a forward that runs it chunk by chunk is an
        inference loop over compiled calls, not a layer running its submodules."""
        func = call.func
        if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self"
                and self.compile_calls):
            return False
        info = self.enclosing_function(call)
        return info is not None and info.cls is not None and func.attr.value in held_compiled_attrs(self, info.cls)

    _FORWARD_METHODS = ("forward", "__call__", "_forward", "inference", "encode", "decode", "embed",
                        "reset_parameters", "__init__") + MESSAGE_PASSING_METHODS

    def _inside_forward_pass(self, node: cst.CSTNode) -> bool:
        """In a module's forward (or the like): loops there run layers, not
        steps. Other methods of a module (``fit``, ``attack``, ``explain``)
        can hold real training loops."""
        func = self.enclosing_function(node)
        if func is None or func.cls is None or not self.is_module_class(func.cls):
            return False
        if any(base.split(".")[-1].startswith("Lightning") for base in func.cls.bases):
            return False
        while func.parent is not None:
            func = func.parent
        return func.name in self._FORWARD_METHODS or func.name.startswith(("_forward", "forward_"))

    def _direct_triggers(self, stmts_root: cst.CSTNode, func: Optional[FuncInfo]) -> Iterator[cst.Call]:
        """Calls under ``stmts_root`` that are not inside a nested loop or def."""
        calls = func.calls if func is not None else self.module_calls
        for call in calls:
            ok = False
            for anc in self.ancestors(call):
                if anc is stmts_root:
                    ok = True
                    break
                if type(anc) in _BARRIERS:
                    break
            if ok:
                yield call

    def _analyse_hot(self) -> None:
        # Functions that run a step (not inside their own loop) when called.
        steps_when_called: dict[FuncInfo, bool] = {}

        def runs_step(info: FuncInfo, stack: frozenset = frozenset()) -> bool:
            if info in steps_when_called:
                return steps_when_called[info]
            if info in stack:
                return False
            result = self._abstract_step(info)
            for call in () if result else self._direct_triggers(info.node.body, info):
                if self._is_step_trigger(call):
                    result = True
                    break
                callee = self.method_callee(call)
                if isinstance(callee, FuncInfo) and runs_step(callee, stack | {info}):
                    result = True
                    break
            steps_when_called[info] = result
            return result

        only_via_calls = []
        for loop in self.loops:
            if runs_once(self, loop):
                continue  # `for batch in loader: ...; break`: one batch, not a step loop (once_loops.py)
            func = self.enclosing_function(loop)
            calls = list(self._direct_triggers(loop.body, func))  # type: ignore[attr-defined]
            if any(self._is_step_trigger(call) for call in calls):
                self.hot_loops[loop] = self._loop_why(loop)
            elif any(isinstance(callee, FuncInfo) and runs_step(callee)
                     for callee in (self.method_callee(call) for call in calls)):
                self.hot_loops[loop] = self._loop_why(loop)
                only_via_calls.append((loop, calls))
        # The innermost loop is the hot one: an epoch loop that calls a
        # function holding its own batch loop is not (so an evaluation it also
        # calls once per epoch is not per step either). A function whose own
        # loop steps the optimizer and that also steps after it
        # (`if num_batches % acc_steps: optimizer.step()`) flushes accumulated
        # gradients: that is no full-batch training step (a loop of micro-batch
        # `backward()`s followed by the one `optimizer.step()` is: one step per call).
        with_hot_loop = {self.enclosing_function(loop) for loop in self.hot_loops} - {None}
        stepping_loop = {self.enclosing_function(loop) for loop in self.hot_loops if self._steps_optimizer(loop)}
        for loop, calls in only_via_calls:
            callees = [c for c in (self.method_callee(call) for call in calls) if isinstance(c, FuncInfo)]
            if any(c in with_hot_loop for c in callees) \
                    and not any(self._updates_when_called(c) for c in callees if c not in stepping_loop) \
                    and not batch_loops.hands_batch_to_step(self, loop, calls, runs_step, with_hot_loop):
                del self.hot_loops[loop]
        for loop in sampler_batch_loops(self, self.hot_loops, self._direct_triggers):  # sampler_loops.py
            self.hot_loops[loop] = self._loop_why(loop)
        for loop in evaluation_loops(self, self.hot_loops):  # a validation pass running the model (eval_loops.py)
            self.hot_loops[loop] = "inside the evaluation loop over batches"
        # Lightning-style step hooks run once per batch.
        for cls in self.class_info.values():
            for hook in LIGHTNING_STEP_HOOKS:
                method = cls.methods.get(hook)
                if method is not None:
                    self._mark_hot_func(method, f"`{cls.name}.{hook}` runs every batch")
        # methods a framework calls once per step (ASE `calculate`, Lightning batch hooks: frameworks.py)
        for method, entry in self.framework_step_entries().items():
            self._mark_hot_func(method, entry.why)
        for name, why in self.project.hot.items():
            if name in self.classes:
                cls = self.classes[name]
                forward = self.method_of(cls, "forward")
                if forward is not None:
                    self._mark_hot_func(forward, why)
        # Functions another file calls on every step of a loop that drives compiled code.
        for key, why in stepped_items(self).items():  # with the overrides of per-step base methods
            for func in self.stepped_functions(key):
                if not batch_loops.iterates_batches(self, func):  # `validate()`: its own loop
                    self._mark_hot_func(func, f"called every step from {origin_file(why)}")
        # Functions called from hot loops are hot.
        for loop, why in list(self.hot_loops.items()):
            func = self.enclosing_function(loop)
            calls = func.calls if func is not None else self.module_calls
            for call in calls:
                if self.in_loop_body(call, loop) and not self.step_unreached(call):
                    self._mark_hot_call(call, why)

    def stepped_functions(self, key: str) -> list[FuncInfo]:
        """``stepped_function``, or for ``"build()"`` (what a local factory returns, called
        every step in another file) the methods that call runs (returned_callables.py)."""
        factory = factory_name(key)
        if factory is not None:
            return self.returned_callables(factory)
        func = self.stepped_function(key)
        if func is None and key.endswith(f".{CALL_KEY}") and key.partition(".")[0] in self.classes:
            return call_methods(self, self.classes[key.partition(".")[0]])  # `metric(out, y)`: its update, compute
        return [func] if func is not None else []

    def stepped_function(self, key: str) -> Optional[FuncInfo]:
        """The top-level function ``key`` or the method ``Class.method`` of this
        file (the keys of ``ProjectFacts.stepped``)."""
        head, _, method = key.partition(".")
        if not method:
            return self.functions.get(head)
        cls = self.classes.get(head)
        return self.method_of(cls, method) if cls is not None else None

    def _steps_optimizer(self, loop: cst.CSTNode) -> bool:
        """The loop's own body (not a nested loop or def) steps an optimizer."""
        func = self.enclosing_function(loop)
        return any(isinstance(call.func, cst.Attribute) and call.func.attr.value == "step"
                   and self._is_step_trigger(call)
                   for call in self._direct_triggers(loop.body, func))  # type: ignore[attr-defined]

    def _updates_when_called(self, info: FuncInfo, depth: int = 0) -> bool:
        """Runs ``.backward()`` or an optimizer step outside its own loops
        (full-batch training), directly or through local functions."""
        for call in self._direct_triggers(info.node.body, info):
            func = call.func
            if isinstance(func, cst.Attribute) and (func.attr.value == "backward" or (
                    func.attr.value == "step" and self._is_step_trigger(call))):
                return True
            callee = self.method_callee(call)
            if isinstance(callee, FuncInfo) and depth < 3 and callee is not info \
                    and self._updates_when_called(callee, depth + 1):
                return True
        return False

    def _loop_why(self, loop: cst.CSTNode) -> str:
        if isinstance(loop, cst.For) and self.looks_like_loader(loop.iter):
            return "inside the loop over batches"
        return "inside the training loop"

    def _mark_hot_call(self, call: cst.Call, why: str) -> None:
        for target in dispatch.dispatched(self, call):  # `eval(fn)(pred, target)`: a function named in a table
            self._mark_hot_func(target, why)
        hook = dispatched_hook(self, call)  # `self._call_hooks("on_train_batch_end", ...)` (hook_dispatch.py)
        for method in hook_methods(self, *hook) if hook is not None else ():
            self._mark_hot_func(method, why)
        # `super().refill(batch)` in an override: the base's body runs every step too (library_steps.py)
        callee = self.local_callee(call) or super_method(self, call)
        if isinstance(callee, FuncInfo):
            if not batch_loops.iterates_batches(self, callee):  # `self.validate()`: its own loop decides
                self._mark_hot_func(callee, why)
            for override in self_overrides(self, call) + abstract_overrides(self, callee):
                self._mark_hot_func(override, why)  # `self.get_figure()`, `self.loss_fn.compute(...)`: a subclass's
            return
        func = call.func
        if isinstance(func, cst.Name) and func.value == "self":  # `out = self(batch)` in a step hook: the forward
            forward = self.self_forward(call)
            if forward is not None:
                self._mark_hot_func(forward, why)
            return
        if never_built(self, func, call):
            return  # `if magnitude_zscore: self.mag = Mag()`, a switch nothing turns on
        if isinstance(func, (cst.Name, cst.Attribute)) and (self.kind(func) == MODEL or isinstance(
                self.class_of(func, call), (ClassInfo, ImportRef))):
            cls = self.class_of(func, call)
            if isinstance(cls, ClassInfo):
                forward = self.method_of(cls, "forward")
                if forward is not None:
                    self._mark_hot_func(forward, f"forward of `{cls.name}` runs every step")
                for method in metric_methods(self, cls):  # a torchmetrics Metric: its update and compute
                    self._mark_hot_func(method, f"`{cls.name}.{method.name}` runs every step")
            elif isinstance(cls, ImportRef):
                self.exported.hot.append((cls, f"forward of `{cls.name}` runs every step"))
        if isinstance(func, cst.Attribute) and not isinstance(func.value, cst.Call):
            owner = self.class_of(func.value, call) or annotated_local_class(self, func.value, call)
            if isinstance(owner, ClassInfo):
                method = self.method_of(owner, func.attr.value)
                if method is not None:
                    self._mark_hot_func(method, why)
                    for override in abstract_overrides(self, method):  # an abstract base's: the subclasses'
                        self._mark_hot_func(override, why)

    def _mark_hot_func(self, info: FuncInfo, why: str) -> None:
        if info in self.hot_funcs:
            return
        self.hot_funcs[info] = why
        for wrapper in dispatch.decorator_wrappers(self, info):  # `@metrics_dict`: its wrapper runs too
            self._mark_hot_func(wrapper, why)
        for call in info.calls:
            if self.enclosing_function(call) is info and not self.step_unreached(call):
                self._mark_hot_call(call, why)
