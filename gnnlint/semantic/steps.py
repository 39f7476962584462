"""Which per-step code drives compiled code (GNN013's question).

A hot loop (see ``FileContext.hot_region``) drives compiled code when the
model it runs or the step it takes is compiled: a call of what a compile
site produced (``model = torch.compile(model)``, ``model.compile()``, an
``@torch.compile`` function, ``torch.compile(optimizer.step)``) or of an
instance of a compiled class, in the loop's body or in the local functions
it calls; a compiled object handed to a local function (``train(model,
loader)``) makes that function's calls of its parameter compiled calls. A
function that runs every step drives compiled code when it calls it itself,
or when a loop that calls it does. ``assume-compiled = "modules"`` treats
every loop as driving compiled code (a user preparing to compile).

A program that never compiles has no such loop: its per-step syncs are not
a torch.compile hazard.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional

import libcst as cst

from gnnlint.semantic import library_steps, lightning_stages, stepped_payload
from gnnlint.semantic.batch_loops import hands_model, iterates_batches
from gnnlint.semantic.compiled_holders import HANDED_HOLDER, NOT_RUNNING
from gnnlint.semantic.handed_calls import runs_handed
from gnnlint.semantic.inherited import inherited_compiled_calls
from gnnlint.semantic.instance_members import member_calls
from gnnlint.semantic.model import calls_under, wrapped_iterables
from gnnlint.semantic.step_handoffs import hands_compiled_to_step
from gnnlint.semantic.step_targets import imported_target, ref_text
from gnnlint.semantic.stepped_overrides import stepped_items

if TYPE_CHECKING:
    from gnnlint.context import FileContext, FuncInfo

_MAX_DEPTH = 3


@dataclass(frozen=True)
class StepDrive:
    """The answer for one synchronising node."""

    compiled: str  # what compiled code the step runs, for messages ("compiled `model`")
    loop: Optional[cst.CSTNode]  # the per-step loop, when known
    role: str  # "training" | "evaluation"
    per: str  # "batch" (a loop over a loader) | "epoch" (full-batch) | "step"
    where: str = ""  # a loop in another file: "finetune.py, through `metrics.update`"
    entry: str = ""  # a framework calls the step (frameworks.py): "ASE calls `Calc.calculate` once per ..."


class StepAnalysis:
    def __init__(self, ctx: "FileContext") -> None:
        self.ctx = ctx
        self._calls: Optional[dict[int, str]] = None  # id(call) -> what it runs
        self._driving: Optional[dict] = None  # FuncInfo -> what it runs
        self._memo: dict = {}
        self._callers_map: Optional[dict] = None
        self._direct: dict = {}  # functions that run compiled code in their own body

    # -- what runs compiled code -------------------------------------------------
    def _compiled_calls(self) -> dict[int, str]:
        if self._calls is not None:
            return self._calls
        ctx = self.ctx
        calls: dict[int, str] = {}
        seeds = [(site.target, [(ref, 0, None) for ref in ctx.compiled_refs(site_node)])
                 for site_node, site in ctx.compile_sites]
        # parameters another file passes a compiled model to (project index)
        seeds += [("", [(ref, 0, what)]) for ref, what in ctx.handed_compiled_refs()]
        # names holding what an imported builder returns compiled (returned_compiled.py)
        seeds += [("", [(ref, 0, what)]) for ref, what in ctx.returned_compiled_refs()]
        for target, todo in seeds:
            self._seed_calls(target, todo, calls)
        # `self.potential.model.forward = torch.compile(...)`: the holder's calls run it (holders.py)
        for site_node, site in ctx.compile_sites:
            for call in ctx.held_compile_calls(site_node) or ():
                calls.setdefault(id(call), f"compiled `{site.target}`")
            run = ctx.parent.get(site_node)  # `torch.compile(fn, ...)(x)`: compiled and run at once
            if isinstance(run, cst.Call) and run.func is site_node:
                calls.setdefault(id(run), f"compiled `{site.target}`")
        # `trainer.model = torch.compile(trainer.model)`: the class's own self.model(...) calls (instance_members.py)
        for key, what in member_calls(ctx).items():
            calls.setdefault(key, what)
        # instances of classes compiled here or in another file (project index)
        for name, why in ctx.compiled_classes.items():
            if "assume-compiled" in why or "submodule of" in why:
                continue
            cls = ctx.classes.get(name)
            if cls is None:
                continue
            for ref in ctx._instance_refs(cls):
                for call in ctx.ref_calls(ref):
                    calls.setdefault(id(call), f"compiled `{name}`")
        # `models["gnn"](x)`: an entry of a dict literal holding a compiled object (flow.py)
        if ctx.compile_sites:
            for call in ctx.all_calls():
                if type(call.func) is cst.Subscript and id(call) not in calls:
                    what = ctx.compiled_callee(call)
                    if what is not None:
                        calls[id(call)] = what
        # trainer.train(...): a method a local class holding a compiled self.model inherits (inherited.py)
        for key, what in inherited_compiled_calls(ctx).items():
            calls.setdefault(key, what)
        # models that compile themselves, built here from a registry or a base class (instances.py)
        if ctx.project.compiled_instances:
            for call in ctx.all_calls():
                if id(call) not in calls and isinstance(call.func, (cst.Name, cst.Attribute)):
                    what = ctx.compiled_callee(call)
                    if what is not None:
                        calls[id(call)] = what
        # a batch handed to another file's function with the object holding the compiled model
        if ctx.compile_sites or ctx.compiled_classes or ctx.project.compiled_instances \
                or ctx.project.compiled_returns or ctx.project.compiled_args:
            for call in ctx.all_calls():
                if id(call) not in calls:
                    what = hands_model(ctx, call)
                    if what is not None:
                        calls[id(call)] = what
        self._calls = calls
        return calls

    def _seed_calls(self, target: str, todo: list, calls: dict[int, str]) -> None:
        """The calls that run what one compile site (``target``; "" for a compiled object
        another file hands here) compiled, followed through the refs it is passed to."""
        ctx = self.ctx
        seen: list = []
        # `opt.step()` of an optimizer over the compiled model's parameters trains what the
        # compiled wrapper runs: only when something runs the wrapper (a call, `.forward`, a
        # hand-off); a wrapper only reached through its methods (`agent.act(obs)`) runs nothing
        # compiled (bench/evidence/e22_compiled_wrapper_methods.py), nor does its optimizer
        steps: dict[int, str] = {}
        runs = False
        while todo:
            ref, depth, what = todo.pop()
            if ref in seen:
                continue
            seen.append(ref)
            what = what or f"compiled `{ref_text(ref, target)}`"
            for call in ctx.ref_calls(ref):
                calls.setdefault(id(call), what)
                runs = True
            if ref[0] in ("name", "self"):
                # `model.forward(x)` runs the compiled program; `model.encode(x)` on the
                # compiled wrapper runs the original module's method eagerly, and the
                # submodules it calls too (bench/evidence/e22_compiled_wrapper_methods.py)
                for call in ctx.all_calls():
                    func = call.func
                    if isinstance(func, cst.Attribute) and ctx.is_ref_expr(func.value, ref, call):
                        if func.attr.value == "forward":
                            calls.setdefault(id(call), what)
                            runs = True
                        elif func.attr.value == "parameters":
                            self._optimizer_steps(call, what, steps)
                        elif HANDED_HOLDER in what and func.attr.value not in NOT_RUNNING:
                            # `agent.get_action(obs)`: its methods run the submodules it compiled
                            calls.setdefault(id(call), what)
                            runs = True
            if depth < _MAX_DEPTH:
                for how, new, call in ctx.ref_passes(ref):
                    runs = True
                    if how == "ref":
                        todo.append((new, depth + 1, what))
                    elif isinstance(call, cst.Call):
                        if runs_handed(ctx, call):  # `apply_step(net, p, v)` of another file (handed_calls.py)
                            calls.setdefault(id(call), what)
                        # `VGAE(encoder)`: what wraps the compiled module runs it
                        todo += [(wrapped, depth + 1, what) for wrapped in ctx._refs_of_value(call, depth + 1)
                                 if wrapped[0] != "arg" and how == "external"]
            elif any(True for _ in ctx.ref_passes(ref)):
                runs = True
        if runs or not target:  # a parameter / builder result from another file: its wrapper may run there
            for key, what in steps.items():
                calls.setdefault(key, what)

    def _optimizer_steps(self, params: cst.Call, what: str, calls: dict) -> None:
        """``opt = Adam(model.parameters())``: ``opt.step()`` trains the
        compiled model, so a loop that steps it drives compiled code."""
        ctx = self.ctx
        node, ctor = params, None
        for _ in range(4):  # Adam(model.parameters()), Adam(list(model.parameters()) + ...)
            node = ctx.parent.get(node)
            if isinstance(node, cst.Call) and node is not params:
                ctor = node
                if isinstance(ctx.parent.get(node), (cst.Assign, cst.AnnAssign)):
                    break
            elif not isinstance(node, (cst.Arg, cst.BinaryOperation, cst.List, cst.Element, cst.Tuple)):
                break
        if ctor is None:
            return
        for opt in ctx._refs_of_value(ctor, 0):
            if opt[0] == "arg":
                continue
            for call in ctx.all_calls():
                func = call.func
                if isinstance(func, cst.Attribute) and func.attr.value == "step" \
                        and ctx.is_ref_expr(func.value, opt, call):
                    calls.setdefault(id(call), what)

    def _callee(self, call: cst.Call):
        """The local function a call runs: a function or method, or the
        ``forward`` of a local module class (``self(x)``, ``self.body(x)``)."""
        from gnnlint.semantic.model import ClassInfo, FuncInfo

        ctx = self.ctx
        key = ("callee", id(call))
        if key in self._memo:
            return self._memo[key]
        # `super().refill(batch)`: the base's method (library_steps.py), as hot_loops.py marks it
        callee = ctx.method_callee(call) or library_steps.super_method(ctx, call)
        if not isinstance(callee, FuncInfo):
            callee = None
            func = call.func
            if isinstance(func, cst.Name) and func.value == "self":
                cls = ctx.enclosing_class(call)
                callee = ctx.method_of(cls, "forward") if cls is not None else None
            elif isinstance(func, (cst.Name, cst.Attribute)):
                cls = ctx.class_of(func, call)
                if isinstance(cls, ClassInfo):
                    callee = ctx.method_of(cls, "forward")
                elif isinstance(func, cst.Attribute) and isinstance(func.value, cst.Attribute):
                    # `self.potential.forward(x)`: a method of the class `self.potential` holds (holders.py)
                    holder = ctx.holder_class(func.value, call)
                    callee = ctx.method_of(holder, func.attr.value) if holder is not None else None
        self._memo[key] = callee
        return callee

    def _callers(self, func: "FuncInfo") -> list:
        if self._callers_map is None:
            self._callers_map = {}
            for call in self.ctx.all_calls():
                callee = self._callee(call)
                if callee is not None:
                    self._callers_map.setdefault(callee, []).append(call)
        # the context's callers (methods called on instances too) and self(x)
        from gnnlint.semantic.dispatch import extra_callers

        known = self.ctx.callers_of(func) + extra_callers(self.ctx, func)  # `eval(fn)(...)`, a decorator's wrapper
        return known + [c for c in self._callers_map.get(func, []) if not any(c is k for k in known)]

    def _driving_funcs(self) -> dict:
        """Local functions whose body runs compiled code, directly or through
        the local functions they call."""
        if self._driving is not None:
            return self._driving
        ctx = self.ctx
        calls = self._compiled_calls()
        driving: dict = {}
        for node in ctx.all_calls():
            what = calls.get(id(node))
            if what is not None:
                func = ctx.enclosing_function(node)
                if func is not None:
                    driving.setdefault(func, what)
        self._direct = dict(driving)
        todo = list(driving)
        while todo:
            func = todo.pop()
            for caller in self._callers(func):
                outer = ctx.enclosing_function(caller)
                if outer is not None and outer not in driving:
                    driving[outer] = driving[func]
                    todo.append(outer)
        self._driving = driving
        return driving

    def _abstract_step_drives(self, func: "FuncInfo") -> str:
        """What an abstract per-step method's overrides run: what its class's methods run
        (``calculate_potential_and_forces`` calling the compiled ``self.model``), else the
        compiled attribute itself."""
        driving = self._driving_funcs()
        found = next((what for method, what in driving.items() if method.cls is func.cls), None)
        return found or f"compiled `self.{self.ctx.compiled_self_attrs(func.cls)[0]}`"

    def _block_drives(self, block: cst.CSTNode) -> Optional[str]:
        """What compiled code the statements under ``block`` run, if any."""
        key = ("block", id(block))
        if key in self._memo:
            return self._memo[key]
        calls, driving = self._compiled_calls(), self._driving_funcs()
        found = None
        for call in calls_under(block):
            what = calls.get(id(call))
            if what is None:
                callee = self._callee(call)
                what = driving.get(callee) if callee is not None else None
                if what is None and callee is not None and self.ctx._abstract_step(callee):
                    what = self._abstract_step_drives(callee)  # `self.timestep(...)`: the overrides step
            if what is not None:
                found = what
                break
        self._memo[key] = found
        return found

    def _loop_drives(self, loop: cst.CSTNode) -> Optional[str]:
        """The loop runs compiled code, or sits in a function that does
        (``h = encoder(x)`` once, then a per-batch scoring loop)."""
        what = self._block_drives(loop.body)  # type: ignore[attr-defined]
        if what is None:
            self._driving_funcs()
            what = self._direct.get(self.ctx.enclosing_function(loop))
        return what

    # -- the question ------------------------------------------------------------
    def drive(self, node: cst.CSTNode) -> Optional[StepDrive]:
        """Whether the per-step code holding ``node`` drives compiled code."""
        ctx = self.ctx
        root = self._hot_root(node)
        if root is None or ctx.step_unreached(node) or lightning_stages.hook_runs_eager(ctx, node):
            return None  # (`predict_step` of a module compiled in `setup` for "fit" only: lightning_stages.py)
        library = ctx.options.assume_compiled == "modules"
        if not library and not ctx.compile_sites and not ctx.compiled_classes \
                and not ctx.project.compiled_args and not ctx.project.stepped and not ctx.project.compiled_returns \
                and not ctx.project.stepped_overrides \
                and not ctx.project.compiled_instances and not ctx.project.framework_compiled \
                and not ctx.project.step_hooks:
            return None  # a program that never compiles (nor is handed a compiled model)
        if isinstance(root, (cst.For, cst.While)):
            what = self._loop_drives(root)
            if what is None and library:
                what = 'compiled code (assume-compiled = "modules")'
            if what is None:
                return None
            role = self._role_of_block(root.body)
            if role == "evaluation" and self._inside_training_loop(root):
                role = "training"  # a timestep / rollout loop inside the training batch loop or step
            outer = self._stepped_training(ctx.enclosing_function(root)) if role == "evaluation" else None
            return outer or StepDrive(what, root, role, self._per(root))
        return self._drive_function(root, library)

    def _inside_training_loop(self, loop: cst.CSTNode) -> bool:
        """``loop`` sits in the body of a hot loop of the same function that trains (steps an optimizer)."""
        child = loop
        for anc in self.ctx.ancestors(loop):
            if isinstance(anc, (cst.FunctionDef, cst.ClassDef)):
                return False
            if anc in self.ctx.hot_loops and child is getattr(anc, "body", None):
                return self._role_of_block(anc.body) == "training"
            child = anc
        return False

    def _stepped_training(self, func: Optional["FuncInfo"]) -> Optional[StepDrive]:
        """A helper another file's training loop calls every step (a rollout of a
        compiled ``model.step``): its own loop is part of that training step, not an
        evaluation loop."""
        if func is None or func not in self.ctx.hot_funcs or iterates_batches(self.ctx, func):
            return None  # (a pass over a loader of its own, `test_step(model, loader)`: its own loop is the step)
        stepped = self._stepped(func, 0)
        return stepped if stepped is not None and stepped.role == "training" else None

    def _drive_function(self, root: "FuncInfo", library: bool = False) -> Optional[StepDrive]:
        ctx = self.ctx
        found = self._function_drives(root, 0)
        if found is None:
            stepped = self._stepped(root, 0)
            if stepped is not None:
                return stepped
            entry = self._framework_entry(root)
            what = ctx.lightning_compiled() if entry is not None and entry.framework == "lightning" else None
            if what is not None:  # a Callback's hook: the project's Lightning training runs compiled code
                return StepDrive(what, None, entry.role, "step", entry=entry.why)
            if not library:
                return None
            found = ('compiled code (assume-compiled = "modules")', None)
        what, loop = found
        # Lightning's `training_step` returns the loss: the trainer steps it; a
        # loss helper called by a loop that steps the optimizer runs in training
        role = "training" if root.name == "training_step" or ctx._updates_when_called(root) or (
            loop is not None and self._role_of_block(loop.body) == "training") \
            or (loop is None and self._under_training_step(root, 0)) else "evaluation"
        outer = self._stepped_training(root) if role == "evaluation" else None
        if outer is not None:
            return outer
        entry = self._framework_entry(root) if loop is None else None
        if entry is not None:  # no loop of the project's: the framework's step
            return StepDrive(what, None, entry.role, "step", entry=entry.why)
        return StepDrive(what, loop, role, self._per(loop) if loop is not None else "step")

    def _under_training_step(self, func: "FuncInfo", depth: int) -> bool:
        """A helper a Lightning ``training_step`` calls (``self.shared_step(batch)``, also
        called by ``validation_step``): it runs on every training step too."""
        if depth >= _MAX_DEPTH:
            return False
        for caller in self._callers(func):
            outer = self.ctx.enclosing_function(caller)
            if outer is not None and outer is not func and outer in self.ctx.hot_funcs and (
                    outer.name == "training_step" or self._under_training_step(outer, depth + 1)):
                return True
        return False

    def _framework_entry(self, func: "FuncInfo"):
        """The framework per-step entry (frameworks.py) ``func`` is, or runs
        under: its hot reason is the entry's (regions.py passes it on)."""
        entries = self.ctx.framework_step_entries()
        if func in entries:
            return entries[func]
        why = self.ctx.hot_funcs.get(func)
        return next((e for e in entries.values() if e.why == why), None)

    # -- per-step calls across files ---------------------------------------------
    def _stepped(self, func: "FuncInfo", depth: int) -> Optional[StepDrive]:
        """Another file calls ``func`` (or a hot function here that calls it)
        every step of a loop that drives compiled code (``ProjectFacts.stepped``)."""
        ctx = self.ctx
        if not ctx.project.stepped and not ctx.project.stepped_overrides:
            return None
        for key, why in stepped_items(ctx).items():  # with the overrides of per-step base methods
            if func in ctx.stepped_functions(key):
                told = stepped_payload.decode(why)
                if told is not None:
                    role = told.role
                    if role == "?":  # a runner's entry point (entry_points.py): the function tells
                        role = "training" if ctx._updates_when_called(func) else "evaluation"
                    return StepDrive(told.what, None, role, told.per, f"{told.origin_file}, through `{told.callee}`",
                                     told.entry)  # entry: a framework's per-step entry there
        if depth < _MAX_DEPTH:
            for caller in self._callers(func):
                outer = ctx.enclosing_function(caller)
                if outer is not None and outer is not func and outer in ctx.hot_funcs:
                    found = self._stepped(outer, depth + 1)
                    if found is not None:
                        return found
        return None

    def export(self) -> None:
        """Tell the files that define them: the imported functions and methods
        called every step of a loop here that drives compiled code."""
        ctx = self.ctx
        if ctx.options.assume_compiled == "modules" or not (
                ctx.compile_sites or ctx.compiled_classes or ctx.project.compiled_args or ctx.project.stepped
                or ctx.project.stepped_overrides
                or ctx.project.compiled_instances or ctx.project.compiled_returns):
            return
        for loop in ctx.hot_loops:
            what = self._loop_drives(loop)
            if what is not None:
                payload = f"{self._per(loop)}|{self._role_of_block(loop.body)}|{what}"
                self._export_calls(calls_under(loop.body), payload, "", loop=loop)  # type: ignore[attr-defined]
                self._export_abstract_steps(loop, payload)
        for func in ctx.hot_funcs:
            drive = self._drive_function(func)
            if drive is None:
                continue
            self._export_told_hooks(func, drive)
            calls = [c for c in func.calls if ctx.enclosing_function(c) is func]
            entry = f"|{drive.entry}" if drive.entry else ""  # a framework's step: the message names it
            if drive.where:  # passed on: keep the loop's file and the call it makes
                origin, _, callee = drive.where.partition(", through `")
                self._export_calls(calls, f"{drive.per}|{drive.role}|{drive.compiled}",
                                   f"|{callee.rstrip('`')}{entry}, from {origin}")
            else:
                self._export_calls(calls, f"{drive.per}|{drive.role}|{drive.compiled}", "", entry)

    def _export_told_hooks(self, func: "FuncInfo", drive: StepDrive) -> None:
        """A dispatcher another file calls every step with an event name
        (``trainer._call_hooks("on_after_backward", trainer, state)`` in a step object,
        ``stepped_args``): the hooks of that name run per step too (hook_dispatch.py)."""
        from gnnlint.facts import HOOK_METHOD, ImportRef
        from gnnlint.semantic.hook_dispatch import dispatch_param, forwarded_count

        ctx = self.ctx
        if func.cls is None or not ctx.project.stepped_args:
            return
        key = f"{func.cls.name}.{func.name}"
        spec = ctx.project.stepped_args.get(key)
        found = dispatch_param(ctx, func) if spec else None
        if found is None:
            return
        drive = self._stepped(func, _MAX_DEPTH) or drive  # the other file's step, as it told it
        param, runs = found
        names = [p for p in func.params if p not in ("self", "cls")]
        # the file making the dispatching call: the last of the fact's origins
        origin = stepped_items(ctx).get(key, "").rpartition(", from ")[2] or "another file"
        for one in spec.split("|"):
            given = dict(item.partition("=")[::2] for item in one.split(",") if "=" in item)
            text = given.get(param) or given.get(str(names.index(param))) if param in names else None
            name = text[1:-1] if text and text[:1] == text[-1:] and text[:1] in "'\"" else None
            if not name or not name.isidentifier() or "_" not in name.strip("_"):
                continue
            count = forwarded_count(ctx, func, sum(1 for k in given if k.isdigit()), runs)
            ref = ImportRef(f"{HOOK_METHOD}{count}", name)
            ctx.exported.stepped.append(
                (ref, f"{drive.per}|{drive.role}|{drive.compiled}|{func.name}(\"{name}\"), from {origin}"))
            ctx.exported.stepped_args.append((ref, "*"))

    def _export_abstract_steps(self, loop: cst.CSTNode, payload: str) -> None:
        """``self.timestep(data, f)`` of an abstract method, every iteration: the subclasses
        in other files take the step (told as ``stepped_overrides``, stepped_overrides.py)."""
        from gnnlint.facts import ImportRef

        ctx = self.ctx
        for call in calls_under(loop.body):  # type: ignore[attr-defined]
            callee = self._callee(call)
            if callee is not None and ctx._abstract_step(callee) and ctx.classes.get(callee.cls.name) is callee.cls \
                    and not ctx.step_unreached(call):
                ctx.exported.stepped_overrides.append(
                    (ImportRef("", f"{callee.cls.name}.{callee.name}"), f"{payload}|self.{callee.name}"))

    def _export_calls(self, calls, payload: str, tail: str, entry: str = "", loop=None) -> None:
        from gnnlint.facts import HOOK_METHOD, ImportRef
        from gnnlint.semantic.batch_loops import handed_fresh_batch
        from gnnlint.semantic.hook_dispatch import dispatch_text, dispatched_hook

        ctx = self.ctx
        calls = list(calls)
        for call in calls:
            hook = dispatched_hook(ctx, call)  # `self._call_hooks("on_train_batch_end", ...)`: by name
            if hook is not None and not ctx.step_unreached(call):
                ref = ImportRef(f"{HOOK_METHOD}{hook[1]}", hook[0])
                shown = dispatch_text(ctx, call, hook[0])
                ctx.exported.stepped.append((ref, f"{payload}|{shown}{entry}"
                                             if not tail else payload + tail))
                ctx.exported.stepped_args.append((ref, "*"))  # not read
                continue
            ref = imported_target(ctx, call, ImportRef, calls)
            if ref is not None and not handed_fresh_batch(ctx, call) and not ctx.step_unreached(call):
                callee = ctx.module.code_for_node(call.func)
                guard = ctx.logging_guard(call, loop)  # `if N % 500 == 0: helper(...)`: the helper's syncs too
                ctx.exported.stepped.append((ref, stepped_payload.encode(payload, tail or f"|{callee}{entry}", guard)))
                ctx.exported.stepped_args.append((ref, ctx.step_args_spec(call)))  # semantic/step_args.py

    def _function_drives(self, func: "FuncInfo", depth: int):
        """(what, the caller's loop) when a hot function drives compiled code."""
        ctx = self.ctx
        what = self._driving_funcs().get(func)
        loop = None
        for caller in self._callers(func):
            caller_loop = self._enclosing_hot_loop(caller)
            if caller_loop is not None:
                loop = loop or caller_loop
                outer = self._loop_drives(caller_loop)
                if outer is not None:
                    return (what or outer), caller_loop
                continue
            outer_func = ctx.enclosing_function(caller)
            if depth < _MAX_DEPTH and outer_func is not None and outer_func in ctx.hot_funcs:
                found = self._function_drives(outer_func, depth + 1)
                if found is not None:
                    return (what or found[0]), found[1]
        return (what, loop) if what is not None else None

    def _hot_root(self, node: cst.CSTNode):
        """The hot loop whose body holds ``node``, or the hot function."""
        ctx = self.ctx
        child = node
        for anc in ctx.ancestors(node):
            if anc in ctx.hot_loops and child is getattr(anc, "body", None):
                return anc
            if isinstance(anc, cst.FunctionDef):
                info = ctx.func_info.get(anc)
                return info if info is not None and info in ctx.hot_funcs else None
            child = anc
        return None

    def _enclosing_hot_loop(self, node: cst.CSTNode):
        ctx = self.ctx
        child = node
        for anc in ctx.ancestors(node):
            if anc in ctx.hot_loops and child is getattr(anc, "body", None):
                return anc
            if isinstance(anc, (cst.FunctionDef, cst.ClassDef)):
                return None
            child = anc
        return None

    def _role_of_block(self, block: cst.CSTNode) -> str:
        from gnnlint.semantic.model import FuncInfo

        ctx = self.ctx
        for call in calls_under(block):
            func = call.func
            if isinstance(func, cst.Attribute) and (func.attr.value == "backward" or (
                    func.attr.value == "step" and ctx._is_step_trigger(call))):
                return "training"
            if (ctx.last_part(func) or "").endswith("_backward"):
                return "training"  # `self._backward(loss)` (an inherited method), `manual_backward(loss)`
            callee = self._callee(call)
            if isinstance(callee, FuncInfo) and ctx._updates_when_called(callee):
                return "training"
            if (ctx.last_part(func) or "").lower().startswith("train") and hands_compiled_to_step(ctx, call):
                return "training"  # `model.train_step(model, optimizer, it)` of another file (step_handoffs.py)
            if "train" in (ctx.last_part(func) or "").lower() and hands_model(ctx, call):
                return "training"  # `self.train_step.on_train_batch(self, state, batch)`: a step object's
        if any(id(call) in inherited_compiled_calls(ctx) for call in calls_under(block)):
            return ""  # the step is a method of a base class in another file: training or not, unknown
        return "evaluation"

    def _per(self, loop: cst.CSTNode) -> str:
        ctx = self.ctx
        if isinstance(loop, cst.For):
            iterables = wrapped_iterables(loop.iter)
            if any(ctx.looks_like_loader(it) for it in iterables):
                return "batch"
            # the names that say what is iterated -- not strings or keyword
            # arguments (tqdm(loader, desc=f"epoch {epoch}") is a batch loop)
            names = [ctx.module.code_for_node(loop.target)] + [
                ctx.module.code_for_node(it) for it in iterables if not isinstance(it, cst.Call)]
            if any("epoch" in name.lower() for name in names):
                return "epoch"
        return "step"
