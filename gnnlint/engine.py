"""discover -> prefilter -> parse -> FileContext -> rules -> findings.

Two phases make cross-file facts work without parsing everything twice:

1. Every file that passes the byte prefilter is parsed and linted with what it
   knows itself, and reports what it says about names it imports (a class it
   compiles, a model it runs every step).
2. Those facts are resolved to files of the linted set (gnnlint/fact_joins.py:
   who learns what); only the files they land on are linted again (parsed now
   if the prefilter had skipped them).

The engine never imports torch or the linted code.
"""
from __future__ import annotations

import gc
import os
import tokenize
from stat import S_ISREG
import io
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Sequence

from typing import TYPE_CHECKING

from gnnlint import elide, kept_modules
from gnnlint.compiling_files import CompilingImports
from gnnlint.fact_joins import (broadcast_framework_facts, bytes_of, deliver_facts, join_compile_switches,
                                join_config_fed_args, join_config_graph_steps, join_ctor_switches, join_imported_constants,
                                pull_compiled_params, reads_once, remember_bytes)
from gnnlint.facts import (ContextOptions, ExportedFacts, ProjectFacts, may_export_collate, may_export_sweep,
                           may_export_wrapper, possible_regions,
                           sweep_modules)
from gnnlint.finding import Edit, Finding, Fix
from gnnlint.rules import SYNTAX_ERROR_CODE, SYNTAX_ERROR_NAME, RuleInfo, all_rules, rule_index
from gnnlint.versions import installed_version, matches

if TYPE_CHECKING:  # libcst is imported only when a file is parsed
    import libcst as cst

    from gnnlint.context import FileContext
    from gnnlint.rules.base import Rule  # noqa: F401

# At least this many files to parse before a process pool pays for itself.
_PARALLEL_MIN_FILES = 8


@dataclass(frozen=True)
class LintOptions:
    """Everything per-file linting depends on (picklable, hashable)."""

    codes: frozenset[str]
    assume_compiled: str = "detected"
    torch_version: Optional[str] = None
    pyg_version: Optional[str] = None
    # max-file-size in bytes (0: no limit): a resource guard, not part of the
    # cache key -- a cached answer is kept when the limit is lowered.
    max_parse_bytes: int = 0


@dataclass
class FileResult:
    path: str
    findings: list[Finding] = field(default_factory=list)
    exported: ExportedFacts = field(default_factory=ExportedFacts)
    parsed: bool = False
    parsed_bytes: int = 0  # what libcst was given (after emptying constant tables)
    error: Optional[str] = None  # unreadable file: reported and skipped
    internal: bool = False  # the error is a bug in gnnlint (exit 2)
    cached: bool = False  # answered from the cache
    # skipped by max-file-size: the bytes libcst would have been given (the
    # verdict is cached, so a warm run does not C-parse the file again)
    too_big: int = 0
    # compile sites whose dynamic=/mode= gnnlint could not read (a config, a
    # flag without a default here): the rules say nothing about them; -v counts them
    unread_options: int = 0
    # (module, level, name) of imports this file calls once per loop iteration
    # that were not parsed for a sweep because their files compile nothing
    # (gnnlint.compiling_files): a cached answer stands while that holds
    sweep_imports: tuple = ()


@dataclass
class CheckResult:
    findings: list[Finding] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # unreadable files etc.
    internal_errors: list[str] = field(default_factory=list)
    files_checked: int = 0
    files_parsed: int = 0
    bytes_parsed: int = 0
    files_cached: int = 0
    unread_options: dict[str, int] = field(default_factory=dict)  # path -> compile sites with unread options
    sources: dict[str, str] = field(default_factory=dict)
    # The facts other files gave each file (the fixer re-lints with them).
    facts: dict[str, ProjectFacts] = field(default_factory=dict)


def active_rules(options: LintOptions) -> list[RuleInfo]:
    """Enabled rules whose hazard exists in the target torch/PyG versions
    (from the generated index: no rule module, no libcst is imported)."""
    torch_v = options.torch_version or installed_version("torch")
    pyg_v = options.pyg_version or installed_version("torch_geometric")
    return [
        rule for rule in rule_index()
        if rule.code in options.codes
        and matches(rule.torch_versions, torch_v)
        and matches(rule.pyg_versions, pyg_v)
    ]


def rule_classes(rules: Sequence) -> list["type[Rule]"]:
    """The Rule classes for index entries (classes pass through)."""
    by_code = {r.code: r for r in all_rules()}
    out = []
    for rule in rules:
        if isinstance(rule, RuleInfo):
            if rule.code in by_code:
                out.append(by_code[rule.code])
        else:
            out.append(rule)
    return out


def _may_fire(rule, data: bytes, options: LintOptions, regions: Optional[frozenset] = None) -> bool:
    """The byte prefilter: the rule's trigger tokens, and for rules limited to
    compiled regions or hot loops, the tokens such a region needs (asked first: most files hold no
    region, and some rules have a hundred trigger tokens, each a scan of the file)."""
    if rule.region is not None:
        if regions is None:
            regions = possible_regions(data, options.assume_compiled)
        if rule.region not in regions:
            return False
    return any(t in data for t in rule.triggers)


def prefilter(data: bytes, options: LintOptions, compiles=None) -> tuple[list[RuleInfo], bool]:
    """The rules that may fire on these bytes, and whether the file must be
    parsed anyway because it may tell other files that it compiles their
    class or runs it every step (a hot loop that imports), or drives a sweep
    of a function imported from a file that ``compiles(module, level, name)``."""
    regions = possible_regions(data, options.assume_compiled)
    rules = [r for r in active_rules(options) if _may_fire(r, data, options, regions)]
    exports = ("compiled_or_hot" in regions and b"import" in data) or may_export_collate(data) \
        or may_export_wrapper(data) or may_export_sweep(data, compiles)  # the costliest test last
    return rules, exports


def decode_source(data: bytes) -> str:
    """Decode like Python does (BOM, encoding cookie); raises on bad bytes."""
    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    text = data.decode(encoding)
    if text.startswith("\ufeff"):
        text = text[1:]
    return text


def _syntax_error(path: str, exc: BaseException) -> Finding:
    """GNN000 from what Python's compiler raised (its position and wording)."""
    from gnnlint.parsing import describe

    line, col, message = describe(exc)
    return Finding(path, line, col, line, col + 1, SYNTAX_ERROR_CODE, SYNTAX_ERROR_NAME, message)


_GRAPH_DUMP = os.environ.get("GNNLINT_CALLGRAPH_DUMP")  # a folder: dump each file's call-graph summary


def lint_bytes(path: str, data: bytes, options: LintOptions,
               facts: Optional[ProjectFacts] = None,
               rules: Optional[Sequence] = None) -> FileResult:
    """Lint one file's bytes (no prefilter, no noqa).

    The size limit is checked on the bytes before anything parses them;
    Python's compiler then sees the file before libcst does
    (``gnnlint.parsing``): what it rejects is GNN000 and goes no further."""
    import libcst as cst

    from gnnlint.parsing import newer_syntax, parse_module, python_verdict

    result = FileResult(path)
    rules = rule_classes(active_rules(options) if rules is None else rules)
    source = data
    limit = options.max_parse_bytes
    if limit and len(source) > limit:
        return FileResult(path, error=too_big_message(path, len(source), len(source), limit), too_big=len(source))
    kept = kept_modules.take(path, source)  # parsed by this run already: these bytes passed both parsers
    if kept is not None:
        data, module = kept
        result.parsed_bytes = len(data)
        return _lint_module(result, path, data, module, options, facts, rules)
    # one C-parser pass serves both the syntax check and the elision
    verdict = python_verdict(source, path, want_ast=len(source) >= elide.MIN_FILE_BYTES)
    python_error = None
    if verdict.error is not None and newer_syntax(source, verdict.error):
        python_error, verdict.error = verdict.error, None  # a newer Python's grammar: libcst decides (below)
    if verdict.error is not None:
        result.parsed = True
        if SYNTAX_ERROR_CODE in options.codes:
            result.findings.append(_syntax_error(path, verdict.error))
        return result
    if verdict.tree is not None:
        data = elide.elide_constant_tables(source, verdict.tree)  # same positions, a fraction of the memory
        verdict.tree = None
    result.parsed_bytes = len(data)
    try:
        module = parse_module(data)
    except cst.ParserSyntaxError as exc:
        if python_error is not None:  # neither grammar accepts it: Python's message stands
            result.parsed = True
            if SYNTAX_ERROR_CODE in options.codes:
                result.findings.append(_syntax_error(path, python_error))
            return result
        # Python compiles it: a libcst limit, not the user's error
        reason = str(exc).strip().splitlines()
        reason = next((r for r in reason if r.startswith("parser error")), reason[0] if reason else "")
        return FileResult(path, error=f"{path}: skipped: libcst cannot parse it although Python compiles it "
                                      f"(e.g. over 3,000 adjacent string literals): {reason[:200]}")
    except (RecursionError, MemoryError) as exc:
        return FileResult(path, error=f"{path}: skipped: too deeply nested for libcst ({type(exc).__name__})")
    kept_modules.keep(path, source, data, module)
    return _lint_module(result, path, data, module, options, facts, rules)


def _lint_module(result: FileResult, path: str, data: bytes, module: "cst.Module", options: LintOptions,
                 facts: Optional[ProjectFacts], rules: list) -> FileResult:
    """``lint_bytes`` from the parsed module on: the file's context, the rules, the findings."""
    from gnnlint.context import FileContext

    result.parsed = True
    context = FileContext(module, path, facts, ContextOptions(
        options.assume_compiled,
        options.torch_version or installed_version("torch"),
        options.pyg_version or installed_version("torch_geometric"),
    ))
    result.exported = context.exported_facts()
    if _GRAPH_DUMP:  # measuring the call graph (bench/callgraph_diff.py); default off
        from gnnlint.call_graph_dump import dump_file
        dump_file(_GRAPH_DUMP, path, module, data, context)
    result.unread_options = len(context.unreadable_compile_options()) if context.compile_sites else 0
    visitors = [rule(context) for rule in rules]
    if visitors:
        _dispatch(context, visitors)
    reports = [(v, r) for v in visitors for r in v.reports]
    if not reports:
        return result
    positions, first_line = _report_positions(module, data, context, reports)
    for visitor, report in reports:
        rng = positions[report.node]
        stmt_line = first_line(context.statement_of(report.node)) or rng.start.line
        fix = _to_fix(report.fix, positions, module, context) if report.fix is not None else None
        result.findings.append(Finding(
            path=path, line=rng.start.line, col=rng.start.column + 1,
            end_line=rng.end.line, end_col=rng.end.column + 1,
            code=visitor.code, name=visitor.name, message=report.message,
            severity=report.severity or visitor.severity, fix=fix, noqa_line=stmt_line if stmt_line != rng.start.line else 0,
            step_loop=(first_line(report.loop) or 0) if report.loop is not None else 0,
        ))
    result.findings = _drop_nested_duplicates(result.findings)
    return result


def _report_positions(module, data: bytes, context, reports):
    """Positions of the reported nodes and fix anchors, and a function giving
    a statement's first line: the cheap per-statement path when the trees
    line up (gnnlint.positions), libcst's whole-module pass otherwise."""
    from gnnlint.positions import finder_for

    wanted = [r.node for _, r in reports]
    wanted += [e.node for _, r in reports if r.fix is not None for e in r.fix.edits]
    try:
        text = decode_source(data)
    except (SyntaxError, UnicodeDecodeError, LookupError):
        text = None
    finder = finder_for(module, data, text, context.parent) if text is not None else None
    positions = finder.ranges(wanted) if finder is not None else None
    if positions is not None:
        return positions, finder.first_line
    positions = node_positions(module)
    return positions, lambda stmt: positions[stmt].start.line if stmt in positions else None


def node_positions(module: "cst.Module") -> dict:
    """node -> CodeRange for every node, from one codegen pass.

    ``MetadataWrapper.resolve(PositionProvider)`` does the same codegen and
    then a second, batched visit of the whole tree only to copy the results;
    calling the provider directly skips that visit (about 45% of the cost).
    Only files with findings pay for this at all.
    """
    from libcst.metadata import PositionProvider

    provider = PositionProvider()
    provider._gen_impl(module)  # libcst 1.x: fills provider._computed
    return provider._computed


def _dispatch(context: "FileContext", visitors: list) -> None:
    """Run every rule's ``visit_<Node>`` methods over the nodes the context
    already walked (one walk per file serves every rule), then their
    ``leave_<Node>`` methods in post-order."""
    import libcst as cst

    enter: dict[type, list] = {}
    leave: dict[type, list] = {}
    for visitor in visitors:
        for name in _handler_names(type(visitor)):
            node_type = getattr(cst, name[6:])
            (enter if name.startswith("visit_") else leave).setdefault(node_type, []).append(
                getattr(visitor, name))
    if enter:
        get = enter.get
        for node in context.preorder:
            fns = get(type(node))
            if fns:
                for fn in fns:
                    fn(node)
    if leave:
        get = leave.get
        for node in context.postorder:
            fns = get(type(node))
            if fns:
                for fn in fns:
                    fn(node)


_HANDLERS: dict[type, tuple[str, ...]] = {}


def _handler_names(rule: type) -> tuple[str, ...]:
    """``visit_<Node>``/``leave_<Node>`` methods of a rule class (cached:
    libcst's get_visitors() runs inspect.getmembers on every call)."""
    import libcst as cst

    names = _HANDLERS.get(rule)
    if names is None:
        names = tuple(
            name for name in dir(rule)
            if (name.startswith("visit_") or name.startswith("leave_")) and name.count("_") == 1
            and hasattr(cst, name[6:]) and callable(getattr(rule, name)))
        _HANDLERS[rule] = names
    return names


def _to_fix(spec, positions, module: "cst.Module", context=None) -> Optional[Fix]:
    edits = []
    for edit in spec.edits:
        rng = positions.get(edit.node)
        if rng is None:
            return None
        text = edit.replacement if isinstance(edit.replacement, str) else \
            _code_in_place(module, edit.replacement, edit.node, context)
        if edit.where == "before":
            edits.append(Edit(rng.start.line, rng.start.column + 1, rng.start.line, rng.start.column + 1, text))
        elif edit.where == "after":
            edits.append(Edit(rng.end.line, rng.end.column + 1, rng.end.line, rng.end.column + 1, text))
        else:
            edits.append(Edit(rng.start.line, rng.start.column + 1, rng.end.line, rng.end.column + 1, text))
    return Fix(spec.applicability, spec.message, tuple(edits))


def _code_in_place(module: "cst.Module", node, anchor, context) -> str:
    """The source of ``node`` as it will stand where ``anchor`` is: the
    continuation lines of a multi-line expression are indented by the
    blocks around ``anchor`` (``Module.code_for_node`` renders them at
    column 0: a fixed call lost its indentation)."""
    import libcst as cst

    if context is None:
        return module.code_for_node(node)
    try:
        from libcst._nodes.internal import CodegenState
    except ImportError:  # a libcst without it: the plain rendering
        return module.code_for_node(node)
    blocks = [anc for anc in context.ancestors(anchor) if isinstance(anc, cst.IndentedBlock)]
    tokens = [module.default_indent if b.indent is None else b.indent for b in reversed(blocks)]
    state = CodegenState(default_indent=module.default_indent, default_newline=module.default_newline,
                         indent_tokens=tokens)
    node._codegen(state)
    return "".join(state.tokens)


def _drop_nested_duplicates(findings: list[Finding]) -> list[Finding]:
    """One hazard, one finding: drop a finding whose span lies inside another
    finding of the same code (``x.cpu().numpy()`` is one sync to fix)."""
    kept = []
    for f in findings:
        inside = any(
            g is not f and g.code == f.code
            and (g.line, g.col) <= (f.line, f.col) and (f.end_line, f.end_col) <= (g.end_line, g.end_col)
            and (g.line, g.col, g.end_line, g.end_col) != (f.line, f.col, f.end_line, f.end_col)
            for g in findings)
        if not inside and f not in kept:
            kept.append(f)
    return kept


# ---------------------------------------------------------------------- project
def read_source(path: str, decode: bool = True, magics: bool = True) -> tuple[Optional[bytes], Optional[str]]:
    """The file's bytes (a notebook's: the module its code cells make; with
    ``magics``, a script's IPython lines blanked: ``ipython_lines.script_source``),
    or an error message for a file that cannot be read or (``decode``) decoded
    -- reported once and skipped, never a traceback. Within a check (``reads_once``)
    the bytes as read from disk are also the fact joins' (``remember_bytes``): read once."""
    try:
        if not S_ISREG(os.stat(path).st_mode) and not os.path.isdir(path):
            # a FIFO or a device named on the command line: reading it would block forever
            return None, f"{path}: not a regular file (a FIFO, a socket or a device); skipped"
        data = Path(path).read_bytes()
        remember_bytes(path, data)
    except IsADirectoryError:
        return None, f"{path}: is a directory"
    except FileNotFoundError:
        return None, f"{path}: No such file or directory (broken symlink?)"
    except OSError as exc:
        return None, f"{path}: {exc.strerror or exc}"
    if path.endswith(".ipynb"):  # a notebook is linted as the module its code cells make
        from gnnlint.notebook import NotebookError, python_source, unreadable_source

        try:
            data = python_source(data)
        except (NotebookError, UnicodeDecodeError) as exc:
            data = unreadable_source(exc)  # GNN000 at line 1, as a file Python rejects
    elif magics and path.endswith(".py"):  # `!pip install` kept in a script exported from a notebook
        from gnnlint.ipython_lines import script_source

        data = script_source(data)
    error = decode_error(path, data) if decode else None
    return (None, error) if error else (data, None)


def undecodable(path: str, data: bytes, error: str, options: LintOptions) -> FileResult:
    """The result for bytes Python cannot decode (an unknown codec, a BOM
    with another cookie, invalid UTF-8): GNN000 with Python's own words, as
    ``py_compile`` rejects the file; a named skip when GNN000 is not selected."""
    if SYNTAX_ERROR_CODE in options.codes:
        from gnnlint.parsing import python_verdict

        verdict = python_verdict(data, path)
        if verdict.error is not None:
            return FileResult(path, [_syntax_error(path, verdict.error)], parsed=True)
    return FileResult(path, error=error)


def decode_error(path: str, data: bytes) -> Optional[str]:
    try:
        decode_source(data)
    except (SyntaxError, UnicodeDecodeError, LookupError) as exc:
        reason = exc.reason if isinstance(exc, UnicodeDecodeError) else (getattr(exc, "msg", None) or str(exc))
        return f"{path}: cannot decode source: {reason}"
    return None


def _lint_job(args) -> FileResult:
    path, data, options, facts, force, prefiltered, vetoed = args
    # libcst builds ~10^5 objects per file and the cyclic collector would walk
    # them again and again (~10% of a cold run); reference counting frees the
    # tree when the file is done, and the collector runs again after it.
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        result = lint_one(path, data, options, facts, force, prefiltered)
        result.sweep_imports = vetoed
        return result
    except Exception as exc:  # noqa: BLE001 - a bug of ours: name the file, exit 2
        return FileResult(path, error=f"internal error while checking {path}: {type(exc).__name__}: {exc}",
                          internal=True)
    finally:
        if gc_was_enabled:
            gc.enable()


def lint_one(path: str, data: bytes, options: LintOptions, facts: Optional[ProjectFacts],
             force: bool = False, prefiltered: Optional[tuple] = None) -> FileResult:
    """Lint one file: the byte prefilter (``prefiltered``: its answer, when the
    caller already has it), then libcst only if some rule may fire. A
    notebook's cells that Python rejects alone are GNN000 at those cells
    (their marks in ``data``); the other cells are linted."""
    result = _lint_file(path, data, options, facts, force, prefiltered)
    if path.endswith(".ipynb") and SYNTAX_ERROR_CODE in options.codes:
        from gnnlint.notebook import rejected_cells

        for line, col, message in rejected_cells(data):
            result.findings.append(Finding(path, line, col, line, col + 1, SYNTAX_ERROR_CODE,
                                           SYNTAX_ERROR_NAME, message))
            result.parsed = True
    return result


def _lint_file(path: str, data: bytes, options: LintOptions, facts: Optional[ProjectFacts],
               force: bool, prefiltered: Optional[tuple]) -> FileResult:
    rules = active_rules(options)
    if force and facts is not None and not facts.needs_parse(data, options.assume_compiled):
        # re-linted for value facts in a file whose bytes hold no region (``_facts_can_matter``): they
        # judge only the patterns of the rules whose tokens are here, as ``gnnlint fix`` lints it
        regions = possible_regions(data, options.assume_compiled)
        rules = [r for r in rules if _may_fire(r, data, options, regions)]
    elif not force and (facts is None or not facts.needs_parse(data, options.assume_compiled)):
        rules, exports = prefiltered or prefilter(data, options)
        if not rules and exports:
            # Nothing to report here, but this file may tell others that it
            # compiles their class or runs it every step: parse it for that.
            return lint_bytes(path, data, options, facts, rules)
        if not rules:
            # No rule can fire here; still report a file that Python rejects
            # (its C parser is an order of magnitude cheaper than libcst).
            return _syntax_check(path, data, options) if SYNTAX_ERROR_CODE in options.codes else FileResult(path)
    try:
        return lint_bytes(path, data, options, facts, rules)
    except RecursionError:
        return FileResult(path, error=f"{path}: skipped: too deeply nested to analyse (RecursionError)")
    except MemoryError:
        return FileResult(path, error=f"{path}: skipped: out of memory while analysing it")


def _worker_pool_ready() -> None:
    """Import libcst and the rules before the workers fork (each starts with them)."""
    all_rules()


def parallel_map(jobs: int, func, items: list, on_crash=lambda item: None) -> list:
    """``[func(i) for i in items]``, in worker processes when there are
    enough items to pay for a pool (the fixer's per-file jobs). A worker
    that dies loses only its own item, whose result is ``on_crash(item)``."""
    from gnnlint import workers

    if jobs > 1 and len(items) >= _PARALLEL_MIN_FILES:
        _worker_pool_ready()
        results: list = [None] * len(items)
        workers.run(jobs, func, items, results.__setitem__, lambda i: on_crash(items[i]))
        return results
    return [func(item) for item in items]


def crashed(path: str):
    """The result for a file whose worker process died twice on it."""
    return FileResult(path, error=f"{path}: skipped: the worker process checking it died "
                                  f"(a crash in the parser?); the other files were checked")


def too_big_message(path: str, to_parse: int, size: int, limit: int) -> str:
    emptied = " after emptying its constant tables" if to_parse < size else ""
    return (f"{path}: {to_parse // 1024} KiB to parse{emptied} is over max-file-size ({limit // 1024} KiB); "
            f"skipped (parsing it would take ~{to_parse * 570 // 10**6} MB)")


def _syntax_check(path: str, data: bytes, options: LintOptions) -> FileResult:
    """GNN000 if Python's compiler rejects the file (``py_compile``'s verdict:
    it also rejects what only the compiler checks, ``from __future__`` misuse,
    ``return`` outside a function), after the size limit."""
    from gnnlint.parsing import python_verdict

    limit = options.max_parse_bytes
    if limit and len(data) > limit:
        return FileResult(path, error=too_big_message(path, len(data), len(data), limit), too_big=len(data))
    from gnnlint.parsing import newer_syntax, parse_module

    verdict = python_verdict(data, path)
    if verdict.error is None:
        return FileResult(path)
    if newer_syntax(data, verdict.error):  # a newer Python's grammar: valid if libcst parses it
        try:
            parse_module(data)
            return FileResult(path)
        except Exception:  # noqa: BLE001 - libcst rejects it too: Python's message stands
            pass
    return FileResult(path, [_syntax_error(path, verdict.error)], parsed=True)


def _prefilter_job(data: bytes, options: LintOptions, facts: Optional[ProjectFacts],
                   force: bool, compiles=None) -> Optional[tuple]:
    """The prefilter's answer, or None when the file must be parsed whatever
    its bytes say (forced, or other files' facts land on it)."""
    if force or (facts is not None and facts.needs_parse(data, options.assume_compiled)):
        return None
    return prefilter(data, options, compiles)


def _sweeps_still_vetoed(hit: "FileResult", compiles) -> bool:
    """A cached answer that skipped a sweep stands only while every file it
    would have told still compiles nothing."""
    return compiles is None or not any(compiles(*ref) for ref in hit.sweep_imports)


def _run(items: list, cache=None, progress=None, contents=None,
         facts_only: frozenset = frozenset(), compiling: Optional[CompilingImports] = None,
         pool=None) -> list[FileResult]:
    """Lint ``items`` = (path, options, facts, force). Files are read, and
    answered from the cache, in this process; of the rest, the ones that must
    be parsed go to worker processes when there are enough of them to pay for
    the pool (largest first, so one big file does not finish last).

    ``contents``: path -> bytes that replace the file on disk (an editor's
    buffer, stdin). ``facts_only``: paths indexed only for what they tell
    other files: on a cache miss, a file whose bytes cannot export facts is
    not parsed (its findings are not wanted). ``compiling``: which imported
    files compile anything (the sweep part of the prefilter). ``pool``: the
    run's worker processes (gnnlint/workers.py), None for one process."""
    results: list = [None] * len(items)
    cheap, costly = [], []

    def finish(index, key, result):
        results[index] = result
        if cache is not None and key is not None and (result.error is None or result.too_big):
            cache.put(key, result)
        if progress is not None:
            progress()

    for index, (path, options, facts, force) in enumerate(items):
        in_memory = contents is not None and path in contents
        if cache is not None and path in facts_only and not in_memory:
            # indexed for facts only: an unchanged stat stands for unchanged bytes
            digest = cache.digest_if_unchanged(os.path.abspath(path))
            hit = _facts_only_hit(cache, cache.key_for_digest(digest, options, facts), path) \
                if digest is not None else None
            compiles = compiling.for_importer(path) if compiling is not None else None
            if hit is not None and not hit.too_big and _sweeps_still_vetoed(hit, compiles):
                hit.cached = True
                finish(index, None, hit)
                continue
        if in_memory:
            data, error = contents[path], None
        else:
            data, error = read_source(path, decode=False)
        if data is None:
            finish(index, None, FileResult(path, error=error))
            continue
        key = cache.key(data, options, facts, None if in_memory else os.path.abspath(path)) \
            if cache is not None else None
        if key is None:
            hit = None
        elif path in facts_only:
            hit = _facts_only_hit(cache, key, path)
        else:
            hit = cache.get(key, path)
        if hit is not None and hit.too_big:  # skipped by max-file-size: still over today's limit?
            limit = options.max_parse_bytes
            hit = FileResult(path, error=too_big_message(path, hit.too_big, len(data), limit), too_big=hit.too_big) \
                if limit and hit.too_big > limit else None
        compiles = compiling.for_importer(path) if compiling is not None else None
        if hit is not None and not _sweeps_still_vetoed(hit, compiles):
            hit = None
        if hit is not None:  # these bytes decoded when the entry was made
            hit.cached = True
            finish(index, None, hit)
            continue
        error = decode_error(path, data)
        if error is not None:
            finish(index, key, undecodable(path, data, error, options))
            continue
        prefiltered = _prefilter_job(data, options, facts, force, compiles)
        vetoed = tuple(sweep_modules(data)) if compiles is not None and prefiltered is not None \
            and not any(prefiltered) else ()
        if path in facts_only and prefiltered is not None and not prefiltered[1]:
            # tells no other file anything: not parsed; remembered as such
            # (a facts-only entry: its findings are unknown)
            if key is not None:
                cache.put_facts_only(key, vetoed)
            finish(index, None, FileResult(path, sweep_imports=vetoed))
            continue
        job = (index, key, (path, data, options, facts, force, prefiltered, vetoed))
        (costly if prefiltered is None or any(prefiltered) else cheap).append(job)
    _parse_jobs(cheap, costly, finish, pool)
    return results


def _parse_jobs(cheap: list, costly: list, finish, pool=None) -> None:
    """Run the jobs ``_run`` collected: the costly ones (libcst) in the run's
    worker ``pool`` when there are enough of them, or when a worker parsed
    one of them before (it still holds the module), largest first (one big
    file does not finish last); the cheap ones (syntax check only) meanwhile."""
    costly.sort(key=lambda job: -len(job[2][1]))
    paths = [args[0] for _, _, args in costly]
    if pool is not None and (len(costly) >= _PARALLEL_MIN_FILES or pool.owns_any(paths)):
        _worker_pool_ready()
        pool.run(_lint_job, [args for _, _, args in costly],
                 lambda i, result: finish(costly[i][0], costly[i][1], result),
                 lambda i: crashed(costly[i][2][0]),
                 side_jobs=[(lambda job=job: finish(job[0], job[1], _lint_job(job[2]))) for job in cheap],
                 keys=paths)
    else:
        from gnnlint.parsing import past_stack_cap

        # a file past the parse thread's stack cap could still crash libcst:
        # in a worker process that crash is a named skip, not the end of the run
        risky = [job for job in costly if past_stack_cap(len(job[2][1]))]
        for index, key, args in cheap + [job for job in costly if job not in risky]:
            finish(index, key, _lint_job(args))
        if risky:
            from gnnlint import workers

            _worker_pool_ready()
            workers.run(1, _lint_job, [args for _, _, args in risky],
                        lambda i, result: finish(risky[i][0], risky[i][1], result),
                        lambda i: crashed(risky[i][2][0]))


def _facts_only_hit(cache, key: str, path: str) -> Optional[FileResult]:
    """A cached answer for a file read only for its facts: its full entry,
    or the note that it exports nothing."""
    return cache.get(key, path, findings=False) or cache.get_facts_only(key, path)


_FACT_ROUNDS = 10  # a chain of files a compiled model reaches through (train -> models -> layers -> ...,
# and back: a compiled class tells the file constructing it which arguments it runs compiled)


def check_files(files: Sequence[Path], options_for, jobs: int = 1, cache=None,
                progress=None, *, index: Sequence[Path] = (), contents: Optional[dict] = None) -> CheckResult:
    """Lint ``files``. ``options_for(path) -> LintOptions`` (per-file ignores).
    ``cache``: a ``gnnlint.cache.Cache`` or None. ``progress``: called once per
    file linted. ``index``: more files of the project, read only for the
    cross-file facts they give ``files`` (not reported; the cache and the byte
    prefilter keep them cheap). ``contents``: path -> bytes replacing a file's
    contents on disk (stdin, an editor's buffer)."""
    try:
        with reads_once(cache), kept_modules.keeping(), _worker_pool(jobs) as pool:
            return _check_files(files, options_for, cache, progress, index, contents, pool)
    finally:
        if cache is not None:
            cache.forget_digests()  # the run's bytes are not held past it


def _worker_pool(jobs: int):
    """The run's worker processes (started when first needed), or a stand-in for one process."""
    if jobs <= 1:
        from contextlib import nullcontext

        return nullcontext()
    from gnnlint import workers

    return workers.Pool(jobs, initializer=kept_modules.keep_in_worker)


def _check_files(files: Sequence[Path], options_for, cache, progress,
                 index: Sequence[Path], contents: Optional[dict], pool) -> CheckResult:
    out = CheckResult()
    paths = [str(p) for p in files]
    named = set(paths)
    named_abs = {os.path.abspath(p) for p in paths}
    extra = [str(p) for p in index if os.path.abspath(p) not in named_abs]
    facts_only = frozenset(extra)
    every = paths + extra
    compiling = CompilingImports(every, lambda path: bytes_of(path, contents))
    phase1 = _run([(p, options_for(p), None, False) for p in every], cache, progress,
                  contents, facts_only, compiling, pool)
    results = {r.path: r for r in phase1}
    # Resolve cross-file facts and lint the files they land on again; what
    # those files then say travels on (train.py compiles models.Net, whose
    # submodule lives in layers.py), for a few rounds at most.
    incoming: dict[str, ProjectFacts] = {}
    modules = None
    exporting = [r for r in phase1 if not r.exported.is_empty()]
    switch_memo: dict = {}
    for _round in range(_FACT_ROUNDS):
        if not exporting:
            break
        if modules is None:
            modules = compiling.module_map()  # the same paths and bytes
        changed: set[str] = set()
        join_compile_switches(results, every, contents, incoming, changed, switch_memo)
        join_ctor_switches(results, every, contents, incoming, changed, switch_memo.setdefault("ctor", {}))
        join_imported_constants(results, modules, contents, incoming, changed, switch_memo.setdefault("const", {}))
        join_config_graph_steps(results, modules, incoming, changed)  # trainer.fit(instantiate(cfg.model))
        join_config_fed_args(results, modules, incoming, changed)  # instantiate(cfg.trainer, models=[compiled])
        for result in exporting:
            pull_compiled_params(result, every, contents, incoming, changed)
            broadcast_framework_facts(result, every, contents, incoming, changed)
            deliver_facts(result, every, contents, compiling, modules, incoming, changed)
        changed = {p for p in changed if _facts_can_matter(p, incoming[p], options_for(p), contents)}
        kept_modules.retain(changed)
        if not changed:
            break
        again = _run([(p, options_for(p), incoming[p], True) for p in sorted(changed)], cache,
                     contents=contents, facts_only=facts_only, pool=pool)
        for r in again:
            results[r.path] = r
        exporting = [r for r in again if not r.exported.is_empty()]
    out.facts = {p: facts for p, facts in incoming.items() if p in named}
    _tally(out, [results[p] for p in paths])
    return out


def _facts_can_matter(path: str, facts: ProjectFacts, options: LintOptions, contents: Optional[dict]) -> bool:
    """Whether linting ``path`` again with ``facts`` can change its findings or what it tells others.
    Value facts (``returned_tensors``...) on a file whose bytes hold no region cannot, unless a rule
    that fires outside regions may fire there: such a fact judges code inside a region (and a file
    without one exports nothing) or that rule's pattern. Decided from the bytes alone, so every
    invocation agrees."""
    data = bytes_of(path, contents)
    if data is None or facts.needs_parse(data, options.assume_compiled):
        return True
    # value facts only, and no region in the file: only a rule that fires outside regions (GNN004's
    # tensor repeats) can use them (the prefilter's answer for those rules alone: its other
    # tests, the export ones above all, cannot change this)
    return any(_may_fire(rule, data, options) for rule in active_rules(options) if rule.region is None)


def _tally(out: CheckResult, results: list[FileResult]) -> None:
    """Add the named files' results to ``out``: findings, errors, counts."""
    for r in results:
        if r.error:
            (out.internal_errors if r.internal else out.errors).append(r.error)
            continue
        out.files_checked += 1
        out.files_parsed += int(r.parsed and not r.cached)
        out.bytes_parsed += r.parsed_bytes if not r.cached else 0
        out.files_cached += int(r.cached)
        if r.unread_options:
            out.unread_options[r.path] = r.unread_options
        out.findings.extend(r.findings)


def check_files_cached(files: Sequence[Path], settings, jobs: int = 1, use_cache: bool = True,
                       progress: bool = False, *, index: Sequence[Path] = (),
                       contents: Optional[dict] = None) -> CheckResult:
    """``check_files`` with the settings' per-file options, the on-disk cache
    and a progress display on stderr (terminal only). ``index``/``contents``:
    as ``check_files``."""
    from gnnlint.cache import Cache

    cache = Cache.for_settings(settings) if use_cache else None
    options_for = options_resolver(settings)
    try:
        total = len(files) + len(index)
        if not progress or total < 50:
            result = check_files(files, options_for, jobs, cache, index=index, contents=contents)
        else:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            with Progress(TextColumn("checking"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                          transient=True, console=_stderr_console()) as bar:
                task = bar.add_task("check", total=total)
                result = check_files(files, options_for, jobs, cache, progress=lambda: bar.advance(task),
                                     index=index, contents=contents)
    finally:
        if cache is not None:
            cache.flush()  # also after an interrupt: finished entries are complete, the write atomic
    if cache is not None and cache.refused:
        result.errors.append(cache.refused)
    return result


def options_resolver(settings):
    """path -> LintOptions, each file with the settings of its closest
    ``[tool.gnnlint]`` (``settings.for_path``; one Settings object when
    there is no hierarchy)."""
    for_path = getattr(settings, "for_path", None) or (lambda p: settings)
    same: dict[int, LintOptions] = {}  # the options of settings without per-file-ignores
    by_folder: dict[str, object] = {}  # a file's settings are its folder's

    def options_for(path) -> LintOptions:
        folder = os.path.dirname(os.fspath(path))
        mine = by_folder.get(folder)
        if mine is None:
            mine = by_folder[folder] = for_path(path)
        if mine.per_file_ignores:
            return options_from_settings(mine, path)
        hit = same.get(id(mine))
        if hit is None:
            hit = same[id(mine)] = options_from_settings(mine, path)
        return hit

    return options_for


# ---------------------------------------------------------------------- project-wide facts
# Nothing marks a project (no pyproject.toml, no .git): the root is only a
# guess -- the current folder or the named file's -- and may be a home
# folder or /tmp. Past this many Python files it is not indexed.
UNMARKED_ROOT_LIMIT = 1000


class UnmarkedRootTooLarge(Exception):
    """The guessed project root holds more than UNMARKED_ROOT_LIMIT files."""


def project_index_files(named: Sequence, settings) -> list[Path]:
    """The project's files (discovered from ``settings.project_root`` with its
    excludes) that a run over ``named`` must read for cross-file facts; empty
    when a named path already covers the whole project (``check .`` at the
    root). Raises ``UnmarkedRootTooLarge`` when no marker names the root and
    the guessed one is too large to be a project."""
    from gnnlint.discover import TooManyFiles, discover

    root = os.path.normpath(os.path.abspath(os.fspath(settings.project_root)))
    cwd = os.fspath(settings.cwd)
    for given in named:
        absolute = os.path.normpath(os.path.join(cwd, os.fspath(given)))
        if absolute == root or root.startswith(absolute.rstrip(os.sep) + os.sep):
            return []
    limit = UNMARKED_ROOT_LIMIT if getattr(settings, "root_marker", "cwd") == "cwd" else None
    try:
        files, _warnings = discover([Path(root)], settings, as_strings=True, limit=limit)
    except TooManyFiles:
        raise UnmarkedRootTooLarge(
            f"no pyproject.toml or .git marks a project around {root}, and it holds more than "
            f"{UNMARKED_ROOT_LIMIT} Python files: only the named files were read for cross-file facts "
            f"(add a pyproject.toml at your project's root)") from None
    return files


def check_project(files: Sequence[Path], settings, *, project_facts: bool = True, jobs: int = 1,
                  use_cache: bool = True, progress: bool = False,
                  contents: Optional[dict] = None) -> CheckResult:
    """Lint ``files`` (already discovered) knowing what the whole project
    says about them: the rest of the project (``settings.project_root``) is
    indexed for cross-file facts -- what is compiled, run every step, fed
    variable-size batches -- and not reported, so a file's findings do not
    depend on which files were named. ``project_facts=False``: only the named
    files tell each other. ``contents``: path (as in ``files``) -> bytes to
    lint instead of the file on disk (stdin, an editor buffer). Findings are
    raw (``apply_noqa`` drops the suppressed ones)."""
    from gnnlint.config import ConfigError

    index, unread = [], None
    if project_facts:
        try:
            index = project_index_files(files, settings)
        except ConfigError as exc:  # a broken config elsewhere in the tree: the named files still lint
            unread = f"the rest of the project was not read for cross-file facts: {exc}"
        except UnmarkedRootTooLarge as exc:
            unread = str(exc)
    result = check_files_cached(files, settings, jobs, use_cache, progress, index=index, contents=contents)
    if unread is not None:
        result.errors.append(unread)
    return result


def lint_source(source, filename: str, settings=None, *, project_facts: bool = True,
                use_cache: bool = True) -> list[Finding]:
    """Findings for an editor buffer or a notebook's code: ``source`` (str or
    bytes) linted as if it were the file ``filename``, with the cross-file
    facts of ``filename``'s project (the buffer replaces the file on disk, if
    any) and ``# noqa`` applied. ``settings``: default, loaded from
    ``filename``'s folder (its project root and closest config)."""
    if settings is None:
        from gnnlint.config import load_settings

        settings = load_settings(cwd=Path(os.path.dirname(os.path.abspath(filename))))
    data = source.encode("utf-8") if isinstance(source, str) else source
    text = source if isinstance(source, str) else decode_source(data)
    result = check_project([Path(filename)], settings, project_facts=project_facts,
                           use_cache=use_cache, contents={str(Path(filename)): data})
    return apply_noqa(result.findings, sources={str(Path(filename)): text})


def _stderr_console():
    from rich.console import Console

    return Console(stderr=True)


def lint_paths(paths: Sequence, settings=None) -> list[Finding]:
    """Static findings for files/directories, with noqa applied (for verify)."""
    from gnnlint.config import load_settings
    from gnnlint.discover import discover

    settings = settings or load_settings(cwd=Path.cwd())
    files, _warnings = discover([Path(p) for p in paths], settings)
    result = check_files(files, lambda p: options_from_settings(settings, p))
    return apply_noqa(result.findings)


def target_versions(settings) -> dict[str, tuple[Optional[str], str]]:
    """distribution -> (target version or None for the newest, where it came
    from): the config / command line, else installed, else declared."""
    from gnnlint.versions import target_version

    out = {}
    for dist, value, key in (("torch", settings.torch_version, "torch_version"),
                             ("torch_geometric", settings.pyg_version, "pyg_version")):
        if value is not None:
            origin = (getattr(settings, "origins", None) or {}).get(key, "the settings")
            out[dist] = (value, f"set in {origin}" if origin != "command line" else "set on the command line")
        else:
            out[dist] = target_version(dist, os.path.abspath(os.fspath(settings.project_root)))
    return out


def options_from_settings(settings, path: Path) -> LintOptions:
    versions = target_versions(settings)
    return LintOptions(
        codes=frozenset(settings.codes_for(path)),
        assume_compiled=settings.assume_compiled,
        torch_version=versions["torch"][0],
        pyg_version=versions["torch_geometric"][0],
        max_parse_bytes=getattr(settings, "max_file_size", 0) * 1024,
    )


def apply_noqa(findings: list[Finding], sources: Optional[dict[str, str]] = None,
               sources_out: Optional[dict[str, str]] = None, ignore: bool = False,
               warnings_out: Optional[list[str]] = None) -> list[Finding]:
    """Drop findings suppressed by ``# noqa``; ``sources_out`` collects the
    text of every file that had findings (for the full report's snippets).
    ``ignore`` (--ignore-noqa): keep them all. ``warnings_out`` collects a
    line for each ``GNN`` code a directive names that is no rule (a ``.py``
    file's; a notebook's lines are its joined module's)."""
    from gnnlint.suppress import filter_findings, parse_noqa, unknown_codes

    by_path: dict[str, list[Finding]] = {}
    for f in findings:
        by_path.setdefault(f.path, []).append(f)
    kept: list[Finding] = []
    for path, group in by_path.items():
        text = (sources or {}).get(path)
        if text is None:
            data, _error = read_source(path, decode=False)
            try:
                text = decode_source(data)
            except Exception:  # noqa: BLE001 - unreadable now: keep findings
                kept.extend(group)
                continue
        if sources_out is not None:
            sources_out[path] = text
        noqa = parse_noqa(text)
        if warnings_out is not None and (noqa.lines or noqa.file_codes) and not path.endswith(".ipynb"):
            from gnnlint.config import known_codes

            for line, code, guess in unknown_codes(noqa, known_codes()):
                where = f"{path}:{line}" if line else path
                hint = f" (did you mean {guess}?)" if guess else ""
                warnings_out.append(f"{where}: `# noqa` names {code}, which is no gnnlint rule: "
                                    f"it suppresses nothing{hint}")
        kept.extend(group if ignore else filter_findings(group, noqa))
    return kept
