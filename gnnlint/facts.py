"""Plain facts shared by the engine, the cache and the FileContext, with no
libcst import: a run whose files all fail the byte prefilter never loads
libcst (the pre-commit case: one small file, a fraction of a second)."""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

# Bytes without which a file can have no compiled region of its own:
# `torch.compile(`, `T.compile(model)`, `model.compile()`, `from torch import
# compile`, `c = torch.compile` -- but not `re.compile("...")`.
_COMPILED_RE = re.compile(
    rb"(?<![\w.])(?:torch|torch_geometric)\.compile\b|\.compile\((?!\s*[rbuf]*['\"])"
    rb"|\bcompile\w*\s*=|@\w*\.?compile")
# An imported `compile` compiles only where the file uses it: a bare call or
# decorator, or under an alias. A package `__init__` that re-exports it
# (`from ._compile import compile` and `'compile'` in `__all__`) compiles
# nothing; importers reach the defining file through the import (compiling_files.py).
_IMPORTED_COMPILE_RE = re.compile(rb"\bimport\b[^\n]*\bcompile\b")
_IMPORTED_COMPILE_USED_RE = re.compile(rb"(?<![\w.'\"])compile\s*[(,)]|@compile\b|\bcompile\s+as\s+\w")
# ... or hot loop: an optimizer step, a backward pass, a Lightning step hook, a framework's per-step method,
# or a loop (over a range, or over a loader's batches) whose first lines call
# something named like a model: `for batch in loader: out = model(batch)`.
_HOT_TOKENS = (b".backward(", b".step(", b"_step(",
               # methods a framework calls once per step (semantic/frameworks.py): ASE, Lightning hooks
               b"def calculate(", b"_batch_start(", b"_batch_end(", b"on_before_zero_grad(")
# `self._backward(loss)`, `manual_backward(loss)`, `on_after_backward(self)`; not an
# autograd Function's `ctx.save_for_backward(...)` (common in library code, never a step)
_BACKWARD_RE = re.compile(rb"(?<!save_for)_backward\(")
# `\bfor\s` (A|B|C), written with the literal first (`for(?<!\wfor)` is `\bfor`): `re` then skips to
# each "for" instead of trying every byte (6x faster; the same matches on all 21,244 corpus files)
_LOOP_HEADER_RE = re.compile(
    rb"for(?<!\wfor)\s(?:[^:\n]{0,120}?\bin\s+(?:t?range|tqdm)\("
    rb"|[^:\n]{0,120}?\bin\b[^:]{0,200}?(?:loader|Loader|batches)"
    rb"|\s*(?:\w+\s*,\s*)?\(?(?:batch|data|graph)\w*\s+in\b)")
_MODEL_CALL_RE = re.compile(  # FileContext's _MODEL_NAMES (and other model-ish names), called
    rb"(?<!\w)(?:\w+_)?(?:model|net|gnn|encoder|decoder|classifier|module|predictor|regressor|scorer)\s*"
    rb"(?:\(|\.(?:forward|encode|decode|inference|predict|embed)\()")
_LOOP_BODY_LINES = 25


def _loop_calls_model(data: bytes) -> bool:
    for header in _LOOP_HEADER_RE.finditer(data):
        end = header.end()
        for _ in range(_LOOP_BODY_LINES):
            end = data.find(b"\n", end + 1)
            if end < 0:
                end = len(data)
                break
        if _MODEL_CALL_RE.search(data, header.end(), end):
            return True
    return False


_LIBRARY_TOKENS = (b"forward",)

# A loop that calls a function the file imports with ``from ... import``,
# passing the loop's variable, within its first lines: the file may tell the
# file that defines the function that it runs once per configuration (a
# sweep driven from here: ``swept`` facts). Line by line, no backtracking.
# Line-start patterns begin with the newline itself and are searched in b"\n" + data: a literal
# first character lets ``re`` skip to each newline, where ``^`` under re.M tries every byte (2x
# slower; every file of a cold run is asked).
_FROM_IMPORT_RE = re.compile(rb"\n[ \t]*from[ \t]+(?P<dots>\.*)(?P<module>[\w.]*)[ \t]+import[ \t]*(?P<names>\([^)]*\)|[^\n]*)")
_IMPORTED_NAME_RE = re.compile(rb"([A-Za-z_]\w*)(?:[ \t]+as[ \t]+([A-Za-z_]\w*))?")
_FOR_RE = re.compile(rb"\n[ \t]*for[ \t]+([\w, \t()]+?)[ \t]+in\b")
_CALL_RE = re.compile(rb"(?<![\w.])([a-z_]\w*)\(")
_SWEEP_LINES = 12


def from_imports(data: bytes) -> list[tuple[str, int, str, bytes]]:
    """Cheap byte test: each ``from <dots><module> import name [as bound]``
    of the file, as (module, relative-import level, name, bound name)."""
    out = []
    for match in _FROM_IMPORT_RE.finditer(b"\n" + data):
        module, level = match.group("module").decode("ascii", "replace"), len(match.group("dots"))
        for name, alias in _IMPORTED_NAME_RE.findall(match.group("names")):
            if name != b"as":
                out.append((module, level, name.decode("ascii", "replace"), (alias or name).decode("ascii", "replace")))
    return out


@functools.lru_cache(maxsize=4)  # the prefilter and the engine's veto ask it of the same bytes in turn
def sweep_modules(data: bytes) -> tuple[tuple[str, int, str], ...]:
    """Cheap byte test: the ``from ... import`` names this file may call once
    per loop iteration with the loop's variable, as (module, relative-import
    level, name) -- what it may send a ``swept`` fact to."""
    if b"from" not in data or b"for" not in data:
        return ()
    imported: dict[bytes, tuple[str, int, str]] = {}
    lined = b"\n" + data  # positions in it are one past data's
    for match in _FROM_IMPORT_RE.finditer(lined):
        module, level = match.group("module").decode("ascii", "replace"), len(match.group("dots"))
        for name, alias in _IMPORTED_NAME_RE.findall(match.group("names")):
            imported[alias or name] = (module, level, name.decode("ascii", "replace"))
    # a call below is `name(` in the bytes: names never written so are never called (most files)
    imported = {bound: ref for bound, ref in imported.items() if bound + b"(" in data}
    if not imported:
        return ()
    out: list[tuple[str, int, str]] = []
    for header in _FOR_RE.finditer(lined):
        targets = set(re.findall(rb"\w+", header.group(1)))
        start = end = header.end() - 1  # the header line's rest and the next lines (not the file's whole tail)
        for _ in range(_SWEEP_LINES + 1):
            end = data.find(b"\n", end) + 1
            if not end:
                end = len(data)
                break
        window = data[start:end]
        if not any(bound + b"(" in window for bound in imported):
            continue  # no imported name is called under this header (most loops)
        body = window.split(b"\n", _SWEEP_LINES + 1)[1:_SWEEP_LINES + 1]
        for line in body:
            for call in _CALL_RE.finditer(line):
                module = imported.get(call.group(1))
                if module is not None and module not in out and targets & set(re.findall(rb"\w+", line[call.end():])):
                    out.append(module)
    return tuple(out)


def may_export_sweep(data: bytes, compiles=None) -> bool:
    """Cheap byte test: a function imported with ``from ... import`` may be
    called once per loop iteration here, with the loop's variable.
    ``compiles(module, level, name)``: whether the file that import names
    may compile anything (a sweep matters only to a function that compiles a
    model); None: any may."""
    return any(compiles is None or compiles(*ref) for ref in sweep_modules(data))


# A module-level line that may start a top-level function, or a compound statement that may hold one
# (`if TYPE_CHECKING:` / `try:` ... `def f():`). A module-level statement starts in column 0 (after a
# BOM or form feeds; a line may end in \r alone); a method is indented under its `class`. Lines of
# strings only add candidates.
_TOP_LEVEL_DEF_RE = re.compile(rb"(?:^|\r)(?:\xef\xbb\xbf)?\f*(?:def|async|if|try|with|for|while|match)\b", re.M)
# a call of a wrapper by its last name part (returned_args._WRAPPERS: `nn.DataParallel(m)`, `DDP (m)`,
# `(FSDP)(m)`, the parenthesis on the next line of a bracket, after a comment or a backslash)
_WRAPPER_CALL_RE = re.compile(rb"(?<!\w)(?:DataParallel|DistributedDataParallel|DDP|FullyShardedDataParallel|FSDP)"
                              rb"(?:\s|\\|\)|#[^\n]*)*\(")


def may_define_top_level_function(data: bytes) -> bool:
    """Cheap byte test: a function here may be defined outside every class and function (what the
    ``graph_collates`` and ``returned_args`` facts are told about; methods are not)."""
    return _TOP_LEVEL_DEF_RE.search(data) is not None


def may_export_collate(data: bytes) -> bool:
    """Cheap byte test: a top-level function here may batch graphs (``Batch.from_data_list``, PyG's
    ``Collater``, ``dgl.batch``): a ``collate_fn`` another file's loader names (semantic/graph_collates.py)."""
    return b"def " in data and (b"from_data_list" in data or b"Collater" in data
                                or (b"dgl" in data and b".batch(" in data)) and may_define_top_level_function(data)


def may_export_wrapper(data: bytes) -> bool:
    """Cheap byte test: a top-level function here may return a model it wraps in ``DataParallel`` / DDP /
    FSDP (semantic/returned_args.py): it calls one (a class deriving from it, a docstring naming it, a
    `DDPStrategy` tell nothing)."""
    return b"return" in data and (b"DataParallel" in data or b"DDP" in data or b"FSDP" in data) \
        and _WRAPPER_CALL_RE.search(data) is not None and may_define_top_level_function(data)


def compiles_anything(data: bytes) -> bool:
    """Cheap byte test: this file may hold a compile site of its own."""
    if b"compile" not in data:
        return False
    if _COMPILED_RE.search(data) is not None:
        return True
    if _IMPORTED_COMPILE_RE.search(data) is None:
        return False
    for used in _IMPORTED_COMPILE_USED_RE.finditer(data):
        line = data[data.rfind(b"\n", 0, used.start()) + 1:used.start()].lstrip()
        if b" as " in used.group() or not line.startswith((b"from ", b"import ")):
            return True
    return False


BOTH_REGIONS = frozenset(("compiled", "compiled_or_hot"))
HOT_ONLY = frozenset(("compiled_or_hot",))


def possible_regions(data: bytes, assume_compiled: str = "detected") -> frozenset:
    """Cheap byte test: the regions this file (on its own, without facts from
    other files) can contain -- "compiled" (then also "compiled_or_hot"), or
    "compiled_or_hot" for a hot loop only. A rule limited to a region this
    does not return cannot fire. It is a heuristic: the rule examples and the
    labelled cases check that it hides none of them."""
    if compiles_anything(data):
        return BOTH_REGIONS
    if assume_compiled == "modules" and any(t in data for t in _LIBRARY_TOKENS):
        return BOTH_REGIONS
    if any(t in data for t in _HOT_TOKENS) or (b"_backward(" in data and _BACKWARD_RE.search(data)):
        return HOT_ONLY
    if _loop_calls_model(data):
        return HOT_ONLY
    return frozenset()


# ``ImportRef.module`` prefix of a fact addressed to a function by name, not by
# import (a runner's entry point: gnnlint/entry_points.py), followed by the keywords passed.
ENTRY_POINT = "<entry point>:"
# ``ImportRef.module`` prefix of a fact addressed to every class's method of a name (a hook a
# trainer runs by name: semantic/hook_dispatch.py), followed by the positional arguments it gets.
HOOK_METHOD = "<hook method>:"


@dataclass(frozen=True)
class ImportRef:
    """A name imported from another module: ``from <level dots><module> import <name>``."""

    module: str
    name: str
    level: int = 0


# What files tell each other: a class/function compiled, run every step, or
# (a factory's result) fed a loader's batches. Field names of both classes below.
FACT_KINDS = ("compiled", "hot", "fed", "fullgraph", "swept", "compiled_args", "compiled_params",
              "compiled_passed", "stepped", "compiled_instances", "framework_compiled", "graph_steps",
              "compiled_hooks", "returns", "stepped_args", "compiled_returns", "fed_args", "sparse_fed",
              "step_hooks", "stepped_overrides", "compiled_overrides",
              "compile_flags", "compile_switches", "synced_params", "returned_tensors", "ctor_switches",
              "graph_collates", "imported_constants", "returned_args", "arg_classes", "instance_methods")
# Facts about what an imported function's value is (a tensor, a host copy of its argument, a library
# callable): they change how code inside a compiled region or hot loop is judged, and make neither.
VALUE_FACT_KINDS = ("returns", "synced_params", "returned_tensors")


@dataclass
class ProjectFacts:
    """What other files say about this file's classes and functions.

    Keys are top-level class/function names defined in this file; values are
    the human description used in messages ("compiled in train.py:12").
    """

    compiled: dict[str, str] = field(default_factory=dict)
    hot: dict[str, str] = field(default_factory=dict)
    # functions whose result (a compiled model) is fed loader batches there:
    # "<LoaderClass>: <how>, from <file>"
    fed: dict[str, str] = field(default_factory=dict)
    # classes compiled there: "fullgraph=True, from train.py" (any compile
    # site without it wins: "fullgraph=False, from ...")
    fullgraph: dict[str, str] = field(default_factory=dict)
    # functions called there once per iteration of a loop whose values change
    # the arguments, with no reset: "called in every iteration of `for h in ...`, from sweep.py"
    swept: dict[str, str] = field(default_factory=dict)
    # "<function>:<parameter position or keyword>" -> what is passed: another
    # file calls this function with a compiled model for that parameter
    compiled_args: dict[str, str] = field(default_factory=dict)
    # "<function>:<parameter position or keyword>" -> "<module>|<Class>": the same calls pass an instance
    # of that project class (absolute import) for another parameter (semantic/arg_classes.py)
    arg_classes: dict[str, str] = field(default_factory=dict)
    # "Class" -> "train,load_checkpoint" / "*": what the files building it with a compiled model read on
    # the instance (every construction joined; semantic/instance_methods.py)
    instance_methods: dict[str, str] = field(default_factory=dict)
    # "<defining module's stem>.<function>:<position>/<parameter>" -> why: a
    # function this file imports compiles that parameter (``def run(model):
    # model = torch.compile(model)``), so the classes passed there are compiled
    compiled_params: dict[str, str] = field(default_factory=dict)
    # functions other files call from compiled code -> the parameters each
    # such call gives, calls joined by "|" (semantic/optional_inputs.py)
    compiled_passed: dict[str, str] = field(default_factory=dict)
    # "<function>" or "<Class>.<method>" -> "<per>|<role>|<what it runs>|<callee>, from <file>":
    # another file calls it on every step of a loop that drives compiled code
    # (``StepAnalysis``, GNN013)
    stepped: dict[str, str] = field(default_factory=dict)
    # "<function>" -> what each of those per-step calls passes ("threshold=0,1=?"; "*" unknown),
    # calls joined by "|" (semantic/step_args.py)
    stepped_args: dict[str, str] = field(default_factory=dict)
    # "Net" / "@registry.register_model" / "Trainer.model" -> why: instances of
    # that class, classes registered through that decorator, that attribute of
    # the class hold a model that compiles itself (semantic/instances.py)
    compiled_instances: dict[str, str] = field(default_factory=dict)
    # "lightning" -> what compiled code the project's training under that framework runs (a model
    # class that compiles what it wraps in its forward, in another file): semantic/frameworks.py
    framework_compiled: dict[str, str] = field(default_factory=dict)
    # "Class" -> why: a LightningModule of another file whose step methods take PyG graph
    # batches (semantic/lightning_feeds.py): a Trainer fitting it compiled feeds it variable sizes
    graph_steps: dict[str, str] = field(default_factory=dict)
    # "Base" -> "_embedding,_conv_args: why": a base class in another file whose forward a compiled
    # subclass inherits calls these methods on self; a subclass's overrides run compiled (semantic/inherited.py)
    compiled_hooks: dict[str, str] = field(default_factory=dict)
    # "Base" -> "execute,get_figure: training: `Base.on_train_batch_end`, from base.py": a Lightning
    # Callback / LightningModule base in another file whose per-step hooks call these methods on self;
    # a subclass's overrides run once per step (semantic/callback_hooks.py)
    step_hooks: dict[str, str] = field(default_factory=dict)
    # "Base.method" -> the ``stepped`` why: a base class in another file whose method the project calls
    # per step; a subclass's override here runs per step (semantic/stepped_overrides.py)
    stepped_overrides: dict[str, str] = field(default_factory=dict)
    # "Base.method" -> why: a base class in another file compiles what this method returns; a subclass's
    # override here returns the compiled model (semantic/compiled_overrides.py)
    compiled_overrides: dict[str, str] = field(default_factory=dict)
    # "<defining module's stem>.<function>" -> "torch_geometric.nn.global_max_pool,...": the library
    # functions a function this file imports returns (``get_aggregation("max")``; semantic/callables.py)
    returns: dict[str, str] = field(default_factory=dict)
    # "<defining module's stem>.<function>:<position>" -> why: a builder this file imports returns a
    # compiled model ("" position: the whole result; "0": element 0 of its tuple; semantic/returned_compiled.py)
    compiled_returns: dict[str, str] = field(default_factory=dict)
    # "<defining module's stem>.<function>:<position>" -> why: a function this file imports copies that
    # parameter's tensor to the host (``def to_numpy(t): return t.cpu().numpy()``; semantic/synced_params.py)
    synced_params: dict[str, str] = field(default_factory=dict)
    # "<defining module's stem>.<function>" -> why: a function this file imports is annotated to return a
    # tensor (``-> torch.Tensor``; semantic/returned_tensors.py)
    returned_tensors: dict[str, str] = field(default_factory=dict)
    # "<defining module's stem>.<function>" -> why: a function this file imports batches graphs
    # (``Batch.from_data_list``): a ``collate_fn`` making variable-size batches (semantic/graph_collates.py)
    graph_collates: dict[str, str] = field(default_factory=dict)
    # "<module as imported>.<name>" -> repr of a literal: a module-level constant of another project file this
    # file reads as a compile option (``from config import compile_mode``; semantic/imported_constants.py)
    imported_constants: dict[str, str] = field(default_factory=dict)
    # "<defining module's stem>.<function>" -> "<parameter position>><result position or -1>": a set-up helper
    # this file imports returns that argument, moved or wrapped (semantic/returned_args.py)
    returned_args: dict[str, str] = field(default_factory=dict)
    # "<defining module's stem>.<function or Class>:<position or keyword>" -> "<Loader>: <how>, from <file>":
    # a function this file imports feeds the compiled object passed there a loader's batches
    # (semantic/fed_args.py)
    fed_args: dict[str, str] = field(default_factory=dict)
    # "<function>" -> "`batch.adj_t` is fed to compiled `model` in train.py": another file feeds the
    # ``adj_t`` of what this function returns to a compiled model (semantic/sparse_feeds.py, GNN005)
    sparse_fed: dict[str, str] = field(default_factory=dict)
    # unused here: the engine joins the compile sites' flags into ``compile_switches``
    compile_flags: dict[str, str] = field(default_factory=dict)
    # "<keyword>" -> "off": every call of a compiled object in the project passing that keyword passes a value
    # false whenever the compile happens (``debug=(not use_compile) and ...``); "#<n>" -> "on": some such call
    # passes position n (semantic/compile_switches.py)
    compile_switches: dict[str, str] = field(default_factory=dict)
    # "<Class>:<flag>" -> "off": no construction of this file's class anywhere in the project can turn its
    # default-``False`` ``__init__`` switch on (gnnlint/constructions.py, semantic/default_off_flags.py)
    ctor_switches: dict[str, str] = field(default_factory=dict)

    def is_empty(self) -> bool:
        return not any(getattr(self, kind) for kind in FACT_KINDS)

    def needs_parse(self, data: bytes, assume_compiled: str) -> bool:
        """These facts can change this file's findings whatever the byte prefilter says: any fact
        that makes a region, or value facts in a file whose bytes can hold a region (a library
        file importing ``softmax`` and compiling nothing is told it returns a tensor, and that
        cannot matter there)."""
        if self.is_empty():
            return False
        if any(getattr(self, kind) for kind in FACT_KINDS if kind not in VALUE_FACT_KINDS):
            return True
        return bool(possible_regions(data, assume_compiled))


@dataclass
class ExportedFacts:
    """What this file says about names it imports (for the project index)."""

    compiled: list[tuple[ImportRef, str]] = field(default_factory=list)
    hot: list[tuple[ImportRef, str]] = field(default_factory=list)
    # imported functions whose result this file feeds variable-size batches
    fed: list[tuple[ImportRef, str]] = field(default_factory=list)
    # imported classes this file compiles, with the site's fullgraph; imported
    # functions it calls once per iteration of a varying loop
    fullgraph: list[tuple[ImportRef, str]] = field(default_factory=list)
    swept: list[tuple[ImportRef, str]] = field(default_factory=list)
    # imported functions this file passes a compiled model to:
    # ImportRef(module, "<function>:<parameter position or keyword>")
    compiled_args: list[tuple[ImportRef, str]] = field(default_factory=list)
    # the same calls: ImportRef(module, "<function>:<parameter>") -> "<module>|<Class>" of another argument
    arg_classes: list[tuple[ImportRef, str]] = field(default_factory=list)
    # ImportRef(module, "Class") -> "train,load_checkpoint" / "*": the names this file reads on an instance it
    # builds with a compiled model (semantic/instance_methods.py)
    instance_methods: list[tuple[ImportRef, str]] = field(default_factory=list)
    # this file's own top-level functions that compile a parameter:
    # ImportRef("", "<function>:<position>/<parameter>"), told to the files
    # that import them (the engine finds those by their import lines)
    compiled_params: list[tuple[ImportRef, str]] = field(default_factory=list)
    # imported functions this file calls from compiled code: what one call gives
    # ("0,edge_attr!": positions and keywords, "!" never None; "*" unknown)
    compiled_passed: list[tuple[ImportRef, str]] = field(default_factory=list)
    # imported functions / methods (ImportRef(module, "Class.method")) this file
    # calls on every step of a loop that drives compiled code
    stepped: list[tuple[ImportRef, str]] = field(default_factory=list)
    # the same calls: what each passes (semantic/step_args.py)
    stepped_args: list[tuple[ImportRef, str]] = field(default_factory=list)
    # ImportRef("", key) with the keys of ProjectFacts.compiled_instances, told
    # to the files whose import lines name the key's class / registry
    compiled_instances: list[tuple[ImportRef, str]] = field(default_factory=list)
    # ImportRef("", framework) -> why: told to every file of the project that names the framework
    framework_compiled: list[tuple[ImportRef, str]] = field(default_factory=list)
    # ImportRef("", "Class") -> why: this file's LightningModules whose steps take PyG graph
    # batches, told to the files whose import lines name the class
    graph_steps: list[tuple[ImportRef, str]] = field(default_factory=list)
    # ImportRef("", "Base") -> "_embedding,_conv_args: why", told to the files naming ``Base`` in an import line
    compiled_hooks: list[tuple[ImportRef, str]] = field(default_factory=list)
    # ImportRef("", "Base") -> "execute: training: `Base.on_train_batch_end`", told to the files naming ``Base``
    step_hooks: list[tuple[ImportRef, str]] = field(default_factory=list)
    # ImportRef("", "Class.method") -> why: this file's methods run per step, told to the files naming ``Class``
    stepped_overrides: list[tuple[ImportRef, str]] = field(default_factory=list)
    # ImportRef("", "Class.method") -> why: what this method returns is compiled, told to the files naming ``Class``
    compiled_overrides: list[tuple[ImportRef, str]] = field(default_factory=list)
    # ImportRef("", "<function>") -> "dotted,dotted": this file's functions returning library functions
    returns: list[tuple[ImportRef, str]] = field(default_factory=list)
    # ImportRef("", "<function>:<position>") -> why: this file's builders returning a compiled model
    compiled_returns: list[tuple[ImportRef, str]] = field(default_factory=list)
    # ImportRef("", "<function>:<position>") -> why: this file's helpers copying that parameter to the host
    synced_params: list[tuple[ImportRef, str]] = field(default_factory=list)
    # ImportRef("", "<function>") -> why: this file's functions annotated to return a tensor
    returned_tensors: list[tuple[ImportRef, str]] = field(default_factory=list)
    # ImportRef("", "<function>") -> why: this file's functions batching graphs (a graph collate_fn)
    graph_collates: list[tuple[ImportRef, str]] = field(default_factory=list)
    # ImportRef(module, name, level) -> "": the imported constants this file asks the value of (the engine
    # reads the defining file's module-level literal and tells it back; semantic/imported_constants.py)
    imported_constants: list[tuple[ImportRef, str]] = field(default_factory=list)
    # ImportRef("", "<function>") -> "<parameter position>><result position>": this file's set-up helpers
    # returning a parameter they move or wrap
    returned_args: list[tuple[ImportRef, str]] = field(default_factory=list)
    # ImportRef("", "<function or Class>:<position or keyword>") -> "<Loader>: <how>": this file's
    # functions feeding the compiled object another file hands them a loader's batches
    fed_args: list[tuple[ImportRef, str]] = field(default_factory=list)
    # imported functions whose result's ``adj_t`` this file feeds to a compiled model
    sparse_fed: list[tuple[ImportRef, str]] = field(default_factory=list)
    # ImportRef("", "<flag key>"): the keys of the ``if`` tests a compile site of this file runs under
    compile_flags: list[tuple[ImportRef, str]] = field(default_factory=list)
    # ImportRef("", "<keyword>" or "#<n>") -> "off:<flag keys>" / "on": what a call of a compiled object passes
    compile_switches: list[tuple[ImportRef, str]] = field(default_factory=list)
    # ImportRef("", "<Class>:<flag>:<position>") -> "": a default-``False`` ``__init__`` switch of this file's
    # class that no construction here turns on; the engine reads the other files' constructions
    ctor_switches: list[tuple[ImportRef, str]] = field(default_factory=list)

    def is_empty(self) -> bool:
        return not any(getattr(self, kind) for kind in FACT_KINDS)


@dataclass(frozen=True)
class ContextOptions:
    assume_compiled: str = "detected"  # or "modules"
    # Target versions (config/CLI, else installed metadata; None = newest),
    # for rules whose cost depends on them beyond their version range.
    torch_version: "str | None" = None
    pyg_version: "str | None" = None
