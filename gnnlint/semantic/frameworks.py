"""Framework per-step entry points: code a framework calls once per step.

Real code often has no ``for batch in loader:`` loop of its own: a framework
runs the loop and calls the project's code once per step.

- **ASE**: the ``calculate()`` method of a calculator (a class deriving from
  ``ase.calculators.calculator.Calculator``, directly or through a local base
  class). ASE calls it once per molecular-dynamics or optimisation step, with
  that step's structure: what a compiled model gets from ``atoms`` is a graph
  whose atom and edge counts vary between structures (and edge counts between
  steps) -- the compile site is fed variable-size graphs (GNN007).
- **LAMMPS ML-IAP**: the ``compute_forces(data)`` method of a model deriving
  from ``lammps.mliap.mliap_unified_abc.MLIAPUnified``: LAMMPS calls it once
  per MD step with that step's atoms and neighbour pairs (counts vary, as for ASE).
- **Lightning**: the batch hooks of a ``Callback`` (``on_train_batch_end``,
  ``on_after_backward``, ``on_before_optimizer_step``, ...) and of a
  ``LightningModule``. Lightning calls them once per training / evaluation
  step. (A LightningModule's ``training_step`` & co. are ``LIGHTNING_STEP_HOOKS``,
  handled by regions.py and feeds.py.)

``framework_step_entry(func)`` answers "does a framework call this method
once per step, and why" (regions.py marks such methods hot). Whether the step
*drives compiled code* is still steps.py's question: the calculator calls a
model it compiled; a Callback runs in a Lightning training whose model is
compiled -- known only when the project says so (``lightning_compiled``, below).
A project that never compiles gets no per-step finding.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional

from gnnlint.semantic.callback_hooks import told_compiled, told_step_entry
from gnnlint.semantic.compiling_forwards import compiling_forward

if TYPE_CHECKING:
    from gnnlint.semantic.model import ClassInfo, FuncInfo

# Lightning hooks called once per step (Callback and LightningModule hooks alike), and the loop they run in.
LIGHTNING_BATCH_HOOKS = {
    "on_train_batch_start": "training", "on_train_batch_end": "training",
    "on_before_backward": "training", "on_after_backward": "training",
    "on_before_optimizer_step": "training", "on_before_zero_grad": "training",
    # LightningModule hooks the training loop calls once per step (automatic optimization):
    # `backward(loss)` runs `loss.backward()`, `optimizer_step` / `optimizer_zero_grad` the optimizer
    "backward": "training", "optimizer_step": "training", "optimizer_zero_grad": "training",
    "on_validation_batch_start": "evaluation", "on_validation_batch_end": "evaluation",
    "on_test_batch_start": "evaluation", "on_test_batch_end": "evaluation",
    "on_predict_batch_start": "evaluation", "on_predict_batch_end": "evaluation",
}
_LIGHTNING_PACKAGES = ("lightning", "pytorch_lightning")
_ASE_CALCULATORS = "ase.calculators"
_LAMMPS_MLIAP = "lammps.mliap"  # ML-IAP unified models: LAMMPS calls `compute_forces(data)` every MD step
_TEST_DIRS = ("tests", "test", "testing", "unittests")


@dataclass(frozen=True)
class StepEntry:
    """A method a framework calls once per step."""

    framework: str  # "ase" | "lammps" | "lightning" | "module" (compiling_forwards.py)
    role: str  # "training" | "evaluation"
    why: str  # for messages: "ASE calls `Calc.calculate` once per MD / optimisation step"
    varying_inputs: bool  # its parameters carry a new variable-size structure every step (ASE atoms)


class Frameworks:
    """Framework per-step entry points. Mixed into FileContext; reads the SemanticModel."""

    def framework_step_entry(self, func: "FuncInfo") -> Optional[StepEntry]:
        """The framework that calls the method ``func`` once per step, or None."""
        cls = func.cls
        if cls is None or func.parent is not None:
            return None
        if func.name == "calculate" and self._derives_from(cls, _ASE_CALCULATORS, "Calculator"):
            return StepEntry("ase", "evaluation",
                             f"ASE calls `{cls.name}.calculate` once per MD / optimisation step", True)
        if func.name == "compute_forces" and self._derives_from(cls, _LAMMPS_MLIAP, "MLIAPUnified"):
            return StepEntry("lammps", "evaluation",
                             f"LAMMPS calls `{cls.name}.compute_forces` once per MD step", True)
        module_step = compiling_forward(self, func)  # a forward around code its module compiles itself
        if module_step is not None:
            return StepEntry("module", "training", module_step, False)
        role = LIGHTNING_BATCH_HOOKS.get(func.name)
        if role is not None and (self._derives_from(cls, _LIGHTNING_PACKAGES, "Callback")
                                 or self._derives_from(cls, _LIGHTNING_PACKAGES, "LightningModule")):
            return StepEntry("lightning", role, f"Lightning calls `{cls.name}.{func.name}` once per step", False)
        told = told_step_entry(self, func)  # an imported base's per-step hook calls `self.<name>`
        return StepEntry("lightning", told[0], told[1], False) if told is not None else None

    def lightning_method(self, func: Optional["FuncInfo"]) -> bool:
        """``func`` is a method of a LightningModule (a local base derives from one) or a Lightning
        per-step hook an imported base declares: its ``self.print`` / ``self.log`` are Lightning's."""
        if func is None or func.cls is None:
            return False
        if self._derives_from(func.cls, _LIGHTNING_PACKAGES, "LightningModule"):
            return True
        entry = self.framework_step_entry(func)
        return entry is not None and entry.framework == "lightning"

    def framework_host_param(self, func: "FuncInfo", name: str) -> bool:
        """``data`` of LAMMPS's ``compute_forces(self, data)``, ``atoms`` of ASE's
        ``calculate``: what the simulation engine hands the step is a host object
        (its counts and arrays are Python / numpy values), not a device batch."""
        if name in ("self", "cls"):
            return False
        entry = self.framework_step_entry(func)
        return entry is not None and entry.framework in ("ase", "lammps")

    def framework_step_entries(self) -> dict:
        """Every method of this file a framework calls once per step: FuncInfo -> StepEntry."""
        key = ("framework_step_entries",)
        if key not in self._memo:
            found = {}
            for cls in self.class_info.values():
                for method in cls.methods.values():
                    entry = self.framework_step_entry(method)
                    if entry is not None:
                        found[method] = entry
            self._memo[key] = found
        return self._memo[key]

    # -- does the framework's training run compiled code? -------------------------------
    def lightning_compiled(self) -> Optional[str]:
        """What compiled code a Lightning training of this project runs, when
        the project says so: a model class that compiles what it wraps and runs
        it in its own forward (``compile_wrappers``), here or in another file
        (``ProjectFacts.framework_compiled``), or a LightningModule of this file
        whose model it compiles. None: no per-step hook of it drives compiled code."""
        wrappers = self.compile_wrappers()
        if wrappers:
            return f"the project's compiled models (`{wrappers[0]}` compiles the model it wraps in its forward)"
        for name, why in self.compiled_classes.items():
            cls = self.classes.get(name)
            if cls is not None and self._derives_from(cls, _LIGHTNING_PACKAGES, "LightningModule"):
                return f"compiled `{name}`"
        why = self.project.framework_compiled.get("lightning")
        if why:
            what, _, origin = why.rpartition(", ")
            return f"the project's compiled models ({what}, {origin})"
        return told_compiled(self) if self.project.step_hooks else None  # a Callback base's file knew it

    def compile_wrappers(self) -> list[str]:
        """Classes of this file that compile a model in their own methods
        and run the result from their ``forward`` (a wrapper compiling what it
        wraps, lazily or in ``__init__``): every model built with one is compiled."""
        key = ("compile_wrappers",)
        if key not in self._memo:
            found: list[str] = []
            driving = self._step_analysis()._driving_funcs() if self.compile_sites else {}
            for site_node, _site in self.compile_sites:
                func = self.enclosing_function(site_node)
                cls = func.cls if func is not None else None
                if cls is None or cls.name in found:
                    continue
                forward = self.method_of(cls, "forward")  # a module (its base may live in another file)
                if forward is not None and forward in driving:
                    found.append(cls.name)
            self._memo[key] = found
        return self._memo[key]

    def _export_framework_compiled(self) -> None:
        """A compile wrapper tells the project's Lightning files (not from a test file)."""
        from gnnlint.facts import ImportRef

        parts = self.path.replace("\\", "/").split("/")
        name = parts[-1]
        if name.startswith("test_") or name.endswith("_test.py") or any(p in _TEST_DIRS for p in parts[-4:-1]):
            return
        wrappers = self.compile_wrappers()
        if wrappers:
            self.exported.framework_compiled.append(
                (ImportRef("", "lightning"), f"`{wrappers[0]}` compiles the model it wraps in its forward"))

    def _derives_from(self, cls: "ClassInfo", packages, last: str) -> bool:
        """``cls`` derives from a class of ``packages`` whose name ends in ``last``
        (resolved through imports), directly or through local base classes."""
        prefixes = tuple(p + "." for p in ((packages,) if isinstance(packages, str) else packages))
        for c in self.local_lineage(cls):
            for base in c.bases:
                resolved = self.resolve_dotted(base)
                if resolved.split(".")[-1].endswith(last) and resolved.startswith(prefixes):
                    return True
        return False
