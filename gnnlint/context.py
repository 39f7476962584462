"""FileContext: the one object a rule receives -- a thin facade.

Rules ask, they never re-derive. Each family of questions is answered by one
module of ``gnnlint.semantic`` (its README is the map); FileContext only
builds the file's semantic model once and mixes the analyses in, so a rule
calls ``ctx.kind(expr)`` or ``ctx.loader_feeds(site)`` without knowing where
the answer lives:

- ``resolve(expr)``, ``lookup(name, at)``, ``ancestors(node)``: names and
  scopes (semantic/names.py over the parse-once model, semantic/model.py).
- ``kind(expr)``: what a value is -- TENSOR, BATCH, MODEL, OPTIMIZER, SCALAR,
  UNKNOWN (semantic/kinds.py; ``isinstance(x, Tensor)`` narrowing, inside a
  branch only: semantic/narrowing.py). Rules flag only what is surely a tensor.
- ``host_tensor(expr)``: a tensor known to live on the CPU (``torch.tensor(list)``,
  a ``.cpu()`` result, ``torch.from_numpy``): reading it is no device sync (semantic/devices.py).
- ``compiled_region(node)`` / ``hot_region(node)`` / ``is_eager_only(node)``:
  does this line run compiled, once per step, or only eagerly, and why
  (semantic/regions.py; eager-only code -- ``is_compiling()`` guards,
  ``torch.compiler.disable``, helpers only called from there -- semantic/eager.py).
- ``compile_site(node)``, ``compile_kwarg``, ``compiled_refs``: the
  ``torch.compile`` calls and how their options were read
  (semantic/compile_sites.py).
- ``loader_feeds(site)``, ``variable_size_loader``, ``mark_dynamic_keys``,
  ``pipeline_padded``: what feeds a compiled model (semantic/feeds.py).
- ``optimizer_ctor``, ``lr_changers``, ``compiled_steps`` (semantic/optim.py);
  ``lazy_reason``, ``eager_forward_before`` (semantic/lazy.py).
- ``compiled_callee``, ``compiled_sink``: does a call run compiled code, does
  a value reach it (semantic/flow.py); ``is_bool_mask``, ``likely_tensor``
  (semantic/shapes.py); ``module_dict_kind``, ``tuple_key`` (semantic/keys.py).

Cross-file knowledge (a class compiled in another file) arrives as
``ProjectFacts``; ``exported_facts()`` is what this file tells the project.
The names below are re-exported so rules and tools import them from here.
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from gnnlint.facts import (  # noqa: F401 - re-exported: rules and tools import them from here
    ContextOptions,
    ExportedFacts,
    ImportRef,
    ProjectFacts,
)
from gnnlint.semantic import (compile_facts, constant_branches, cpu_only, default_off_flags, entry_points, host_flags, flow, instance_methods, keys, layer_feeds, layers, shapes, sparse_feeds, synced_params,
                              unpassed_inputs, version_fallbacks)
from gnnlint.semantic.choices import Choices
from gnnlint.semantic.compile_flags import CompileFlags
from gnnlint.semantic.compile_switches import CompileSwitches
from gnnlint.semantic.compile_sites import CompileSite, CompileSites  # noqa: F401
from gnnlint.semantic.devices import Devices
from gnnlint.semantic.eager import EagerOnly
from gnnlint.semantic.feeds import Feeds, LoaderFeed  # noqa: F401
from gnnlint.semantic.fixed_size import FixedSize
from gnnlint.semantic.handoffs import Handoffs
from gnnlint.semantic.classes import Classes
from gnnlint.semantic.instances import Instances
from gnnlint.semantic.instantiate import Instantiate
from gnnlint.semantic.literals import Literals
from gnnlint.semantic.kinds import (  # noqa: F401
    _NO_VALUE,
    BATCH,
    LOADER,
    MODEL,
    OPTIMIZER,
    SCALAR,
    SCHEDULER,
    TENSOR,
    UNKNOWN,
    Kinds,
)
from gnnlint.semantic.containers import Containers
from gnnlint.semantic.returned_callables import ReturnedCallables
from gnnlint.semantic.callables import Callables
from gnnlint.semantic.config_params import ConfigParams
from gnnlint.semantic.ctor_args import ConstructorArgs
from gnnlint.semantic.holders import Holders
from gnnlint.semantic.none_filled import NoneFilled
from gnnlint.semantic.frameworks import Frameworks
from gnnlint.semantic.lazy import Lazy
from gnnlint.semantic.model import Binding, ClassInfo, FuncInfo, SemanticModel, iter_children, walk  # noqa: F401
from gnnlint.semantic.names import Names
from gnnlint.semantic.narrowing import Narrowing
from gnnlint.semantic.optim import Optim
from gnnlint.semantic.optional_inputs import OptionalInputs
from gnnlint.semantic.ref_aliases import RefAliases
from gnnlint.semantic.regions import Regions
from gnnlint.semantic.fed_args import FedArgs
from gnnlint.semantic.returned_compiled import ReturnedCompiled
from gnnlint.semantic.returned_functions import ReturnedFunctions
from gnnlint.semantic.step_args import StepArgs
from gnnlint.semantic.unreached_branches import UnreachedBranches
from gnnlint.semantic.syntax import (  # noqa: F401 - call-argument helpers rules use
    arg_of,
    has_star_args,
    is_none,
    literal_string_tuple,
    param_position,
    passed,
)
from gnnlint.semantic.vocab import (  # noqa: F401
    COMPILE_FUNCS,
    IS_COMPILING,
    LIGHTNING_STEP_HOOKS,
    MESSAGE_PASSING_METHODS,
    MODULE_BASE_SUFFIXES,
    VARIABLE_SIZE_LOADERS,
)


class FileContext(SemanticModel, Names, Narrowing, Kinds, Classes, Literals, Devices, Choices, Instantiate, CompileSites,
                  EagerOnly, OptionalInputs, UnreachedBranches, Regions, Handoffs, Instances, Feeds, FixedSize, Optim, Lazy, Frameworks,
                  Containers, ConstructorArgs, ConfigParams, NoneFilled, Callables, Holders, CompileFlags,
                  StepArgs, ReturnedFunctions, ReturnedCompiled, ReturnedCallables, RefAliases, FedArgs, CompileSwitches):
    """The parse-once model of one file plus the analyses that answer the rules' questions.

    The model (parents, order, scopes, bindings, imports, aliases, calls) is
    collected in one pass here; the compiled/hot regions are computed up
    front because every region question and the exported facts need them.
    Everything else (kinds, feeds, optimizers, lazy modules) is computed on
    demand and memoised, so a rule that never asks about loaders never pays
    for them.
    """

    def __init__(self, module: cst.Module, path: str = "<stdin>",
                 project: Optional[ProjectFacts] = None,
                 options: Optional[ContextOptions] = None) -> None:
        SemanticModel.__init__(self, module, path, project or ProjectFacts(), options or ContextOptions())
        self._analyse_regions()

    # -- questions answered by functions of the context (semantic/flow.py, shapes.py, keys.py)
    def is_test_file(self) -> bool:
        """A test module (``test_*.py``, ``*_test.py``, under ``tests/``): a check of outputs, not a training path."""
        return layer_feeds.test_file(self.path)

    def synced_param_call(self, call: cst.Call) -> Optional[tuple[int, str]]:
        return synced_params.synced_param_call(self, call)

    def compiled_callee(self, call: cst.Call) -> Optional[str]:
        return flow.compiled_callee(self, call)

    def compiled_value(self, expr: cst.BaseExpression, at: cst.CSTNode) -> Optional[str]:
        return flow.compiled_value(self, expr, at)

    def compiled_sink(self, expr: cst.BaseExpression) -> Optional[tuple[cst.Call, str]]:
        return flow.compiled_sink(self, expr)

    def class_fullgraph(self, cls) -> Optional[bool]:
        """Whether every known compile of ``cls`` (here or in another file) passes ``fullgraph=True``."""
        return compile_facts.class_fullgraph(self, cls)

    def sweep_of(self, info) -> Optional[str]:
        """How a local function is called once per iteration of a varying loop with no reset, or None."""
        return compile_facts.sweep_of(self, info)

    def loop_varying_names(self, loop: cst.For) -> set[str]:
        """Names whose values may change per iteration of ``loop``: its target, names bound in its body."""
        return compile_facts.varying_names(self, loop)

    def names_bound_in(self, body: cst.CSTNode) -> set[str]:
        return compile_facts.names_bound_in(body)

    def target_names(self, target: cst.BaseExpression) -> set[str]:
        return compile_facts.target_names(target)

    def args_mention(self, call: cst.Call, names: set[str]) -> bool:
        return compile_facts.args_mention(call, names)

    def resets_compiles(self, body: cst.CSTNode) -> bool:
        """``body`` calls ``torch._dynamo.reset()``."""
        return compile_facts.resets(self, body)

    def name_uses(self, name: str) -> list[cst.Name]:
        return flow.name_uses(self, name)

    def attribute_nodes(self, attr: str) -> list[cst.Attribute]:
        return flow.attribute_nodes(self, attr)

    def host_flag(self, expr: cst.BaseExpression) -> Optional[str]:
        """``batch["misc"]["flag"]`` whose key the project only sets to True / False (host_flags.py)."""
        return host_flags.host_flag(self, expr)

    def pins_cpu(self) -> bool:
        """This file names only the CPU as its device (cpu_only.py)."""
        return cpu_only.pins_cpu(self)

    def version_fallback(self, node: cst.CSTNode) -> bool:
        """This line runs only where a version test chose something else than torch.compile (version_fallbacks.py)."""
        return version_fallbacks.version_fallback(self, node)

    def is_read(self, node: cst.Attribute) -> bool:
        return flow.is_read(self, node)

    def is_bool_mask(self, expr: cst.BaseExpression) -> bool:
        return shapes.is_bool_mask(self, expr)

    def likely_tensor(self, expr: cst.BaseExpression) -> bool:
        return shapes.likely_tensor(self, expr)

    def int_or_tensor_is_tensor(self, expr: cst.BaseExpression) -> bool:
        return shapes.int_or_tensor_is_tensor(self, expr)

    def module_dict_kind(self, expr: cst.BaseExpression, at: cst.CSTNode) -> Optional[str]:
        return keys.module_dict_kind(self, expr, at)

    def tuple_key(self, key: cst.BaseExpression) -> bool:
        return keys.tuple_key(self, key)

    # -- where a layer built in __init__ runs (semantic/layers.py: GNN009, GNN014, GNN015)
    def loop_around(self, node: cst.CSTNode):
        return layers.loop_around(self, node)

    def stored_attr(self, call: cst.Call):
        return layers.stored_attr(self, call)

    def attr_uses(self, cls, attr: str):
        return layers.attr_uses(self, cls, attr)

    def compiled_constructors(self):
        return layers.compiled_constructors(self)

    def constructor_of(self, expr, at: cst.CSTNode):
        return layers.constructor_of(self, expr, at)

    def fullgraph_everywhere(self) -> bool:
        return layers.fullgraph_everywhere(self)

    def captured_reasons(self) -> frozenset:
        return layers.captured_reasons(self)

    def step_drive(self, node: cst.CSTNode):
        """Whether the per-step code at ``node`` drives compiled code (a
        ``semantic.steps.StepDrive``), or None; built on first use."""
        return self._step_analysis().drive(node)

    def logging_guard(self, node: cst.CSTNode, loop) -> Optional[str]:
        """The step-counter test of the ``if`` that runs per-step ``node`` on
        some steps only (``global_step % 500 == 0``), or None."""
        from gnnlint.semantic.step_guards import logging_guard

        return logging_guard(self, node, loop)

    def adj_sinks(self) -> list:
        """``(compiled call, why, the read)`` for each compiled call this file feeds an
        ``X.adj_t`` / ``X.adj_t_dict`` (PyG's sparse adjacency; semantic/sparse_feeds.py)."""
        return sparse_feeds.adj_sinks(self)

    def sparse_fed_functions(self) -> dict:
        """This file's functions (and the local functions they call) whose result another
        file feeds as ``adj_t`` to a compiled model: -> what is fed where (``sparse_fed`` facts)."""
        return sparse_feeds.sparse_fed_functions(self)

    def unpassed_input(self, expr: cst.BaseExpression) -> bool:
        """``expr`` reads a ``forward(..., labels=None)`` parameter no call of the class
        gives: it is None (semantic/unpassed_inputs.py)."""
        return unpassed_inputs.unpassed_input(self, expr)

    def step_unreached(self, node: cst.CSTNode) -> bool:
        """``node`` runs only in a branch that the compiled per-step path never takes: the
        class's compile flag is off there (semantic/compile_flags.py), or a test of a parameter
        fails for every value the per-step calls from other files pass (semantic/step_args.py), or
        a switch no construction turns on guards it (semantic/default_off_flags.py), or a module
        constant that is off does (``if DEBUG:``, semantic/constant_branches.py), or it is in a method
        the program handing this class its compiled model never runs (semantic/instance_methods.py).
        ``hot_region``, ``step_drive`` and the per-step calls told to other files leave it out."""
        return self.compile_flag_unreached(node) or self.step_arg_unreached(node) \
            or default_off_flags.switched_off(self, node) or constant_branches.constant_off(self, node) is not None \
            or instance_methods.uncalled_method(self, node)

    def layer_input_feed(self, site_node: cst.CSTNode):
        """The module forward that runs the function compiled at ``site_node``
        on its own inputs (``semantic.layer_feeds.LayerFeed``), or None."""
        from gnnlint.semantic.layer_feeds import layer_input_feed

        return layer_input_feed(self, site_node)

    def dynamic_sibling_feed(self, site_node: cst.CSTNode):
        """The sibling submodule compiled with ``dynamic=True`` that runs on the same per-call data as
        the one compiled at ``site_node`` (``semantic.dynamic_siblings.SiblingFeed``), or None."""
        from gnnlint.semantic.dynamic_siblings import dynamic_sibling_feed

        return dynamic_sibling_feed(self, site_node)

    def assembled_batch_feed(self, site_node: cst.CSTNode):
        """The function that runs what ``site_node`` compiles on a PyG ``Batch`` it assembles per
        call from its parameters (``semantic.assembled_batches.AssembledFeed``), or None."""
        from gnnlint.semantic.assembled_batches import assembled_batch_feed

        return assembled_batch_feed(self, site_node)

    def padded_call_feed(self, site_node: cst.CSTNode):
        """The function that runs what ``site_node`` compiles on a batch it pads per call to the longest
        of its inputs (``tokenizer(texts, padding=True, return_tensors="pt")``;
        ``semantic.padded_batches.PaddedFeed``), or None."""
        from gnnlint.semantic.padded_batches import padded_call_feed

        return padded_call_feed(self, site_node)

    def swept_shape_feed(self, site_node: cst.CSTNode):
        """The function that runs what ``site_node`` compiles on tensors a loop sizes anew each
        iteration (``semantic.swept_shapes.SweptFeed``), or None."""
        from gnnlint.semantic.swept_shapes import swept_shape_feed

        return swept_shape_feed(self, site_node)

    def _export_stepped(self) -> None:
        """The imported functions this file calls every step of a loop that drives compiled code."""
        self._step_analysis().export()
        entry_points.export(self)  # functions a runner loads by name and calls every step

    def _step_analysis(self):
        if getattr(self, "_steps", None) is None:
            from gnnlint.semantic.steps import StepAnalysis
            self._steps = StepAnalysis(self)
        return self._steps

