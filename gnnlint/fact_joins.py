"""The project fact joins: what each file's ``exported`` facts tell the other
files of the project, resolved into their ``incoming`` ``ProjectFacts``.

``engine.check_files`` drives the rounds (lint, join, lint the files whose
facts changed again); this module answers one question per round: which
files learn what. Facts about a file's own functions are *pulled* by the
files importing them (``pull_compiled_params``), a framework's by every file
naming it (``broadcast_framework_facts``), project-wide switches are *joined*
from every file's latest result (``join_compile_switches``,
``join_ctor_switches``), the rest are *delivered* to the file an import
resolves to (``deliver_facts``).
"""
from __future__ import annotations

import os
import re
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Optional, Sequence

from gnnlint import config_targets, constructions, entry_points, module_constants, registry_picks
from gnnlint.facts import FACT_KINDS, ImportRef, ProjectFacts

if TYPE_CHECKING:
    from gnnlint.engine import FileResult


# facts also told to a file importing the defining module itself (`import collate as C`, `C.collate_graphs`)
_MODULE_IMPORTED = ("fed_args", "graph_collates", "returned_args", "returns")
# the facts a file tells the files importing the name they are about (in this order: the first
# told wins a key)
_PULLED_BY_IMPORTERS = ("compiled_params", "compiled_instances", "graph_steps", "compiled_hooks", "step_hooks",
                        "returns", "compiled_returns", "synced_params", "returned_tensors", "graph_collates",
                        "returned_args", "fed_args", "stepped_overrides", "compiled_overrides")
_FUNCTION_KEYED = ("compiled_params", "returns", "compiled_returns", "fed_args", "synced_params",
                   "returned_tensors", "graph_collates", "returned_args")  # "<stem>.<function>:..." keys


def pull_compiled_params(result: FileResult, every: Sequence[str], contents: Optional[dict],
                          incoming: dict, changed: set) -> None:
    """``def run(model): model = torch.compile(model)``: the files that
    import ``run`` (by their bytes: an import line naming it) are told, so the
    classes they pass for ``model`` are compiled there. Likewise the
    ``compiled_instances`` of a model that compiles itself: the files naming
    the class, the registry its decorator fills or the base class holding it
    in an import line are told (semantic/instances.py), and the ``graph_steps``
    of a LightningModule taking PyG batches (semantic/lightning_feeds.py)."""
    params = [(kind, ref, why) for kind in _PULLED_BY_IMPORTERS for ref, why in getattr(result.exported, kind)]
    if not params:
        return
    stem = Path(result.path).stem
    if stem == "__init__":
        stem = Path(result.path).parent.name
    for kind, ref, why in params:
        if kind == "compiled_params" and ref.name.endswith(":@/"):
            # a registry lookup by a config name: the registered names the project's configs can pick
            ref = ImportRef(ref.module, ref.name + registry_picks.picked_names(
                result.path, ref.name.split(".")[0], every, contents, bytes_of,
                getattr(_run_reads, "registries", None)))
        # compiled_instances: "Net", "@registry.register_model", "Trainer.model": the name imported
        # compiled_returns: "Builder.build:" (a static builder) is imported by its class's name
        function = (ref.name.split(":")[0].split(".")[0] if kind in _FUNCTION_KEYED else
                    ref.name.lstrip("@").split(".")[0]).encode()
        # an import line naming the function (`_import_words`: the words of both shapes); the pattern
        # only for the module's stem, named on an import line itself
        pattern = rb"\bimport\b[^\n]*\b%s\b|\bimport\s*\([^)]*\b%s\b" % (function, function)
        if kind in _MODULE_IMPORTED:  # `import training.train as train` then `train.Train_QM9(model, ...)`
            function = function.split(b".")[0]
            pattern = rb"\bimport\b[^\n]*\b(?:%s|%s)\b|\bimport\s*\([^)]*\b%s\b" % (
                function, stem.encode(), function)
        # `from citation import run` where citation/__init__.py says `from .train_eval import run`:
        # the importer names the package, not the defining module
        stems = [stem] + (_reexporting_package(result.path, stem, function, contents)
                          if kind in _FUNCTION_KEYED else [])
        # only a file with an import line naming it can match the exact pattern below
        importers = _importers(every, contents)
        candidates = importers.get(function.split(b".")[0], ())
        if kind in _MODULE_IMPORTED or kind == "compiled_instances":  # also the importers of the module
            candidates = sorted(set(candidates) | set(importers.get(stem.encode(), ())), key=every.index) \
                if stem.encode() in importers else candidates
        for path in candidates:
            if path == result.path:
                continue
            data = bytes_of(path, contents)
            if data is None or (function not in data and (kind not in _MODULE_IMPORTED or stem.encode() not in data)):
                continue
            if kind == "compiled_instances" and _names_module_class(path, data, stem, function):
                pass  # `from pkg import layers` ... `layers.Attention(...)`: the module imported, not the class
            elif function not in _import_words(path, data) and not (
                    kind in _MODULE_IMPORTED and stem.encode() in _import_words(path, data)
                    and re.search(pattern, data)):
                continue  # the pattern's words, read once per file (the stem: only on an import line)
            if kind == "compiled_instances" and ref.name.isidentifier() \
                    and _imported_from_elsewhere(data, function, result.path, every, contents):
                continue  # `from jssp.models.agent import Agent`: another file's class of the same name
            facts = incoming.setdefault(path, ProjectFacts())
            keys = [f"{name}.{ref.name}" for name in stems] \
                if kind in _FUNCTION_KEYED else [ref.name]
            known = getattr(facts, kind)
            for key in keys:
                if key not in known:
                    # a fact handed on (Trainer.model, from the model's file) keeps where it began
                    known[key] = why if kind == "returns" or kind in ("compiled_instances", "compiled_hooks",
                                                                      "stepped_overrides", "compiled_overrides") \
                        and ", from " in why \
                        else f"{why}, from {Path(result.path).name}"
                    changed.add(path)


def _names_module_class(path: str, data: bytes, stem: str, name: bytes) -> bool:
    """``module.Name`` read in ``data`` where an import line names ``module`` (the defining file's stem):
    a class told about through ``compiled_instances`` used through its module (semantic/nested_compiled.py)."""
    attr = stem.encode() + b"." + name
    return attr in data and stem.encode() in _import_words(path, data) \
        and re.search(rb"\b%s\b(?!\.)" % re.escape(attr), data) is not None \
        and re.search(rb"\bimport\b[^\n]*\b%s\b" % re.escape(stem.encode()), data) is not None


def _imported_from_elsewhere(data: bytes, name: bytes, defining: str, every: Sequence[str],
                             contents: Optional[dict]) -> bool:
    """Every absolute ``from a.b.c import Name`` line of ``data`` names a
    project file other than ``defining`` (``a/b/c.py`` or its package
    ``__init__.py``) that does not re-export ``Name`` itself: the importer's
    ``Name`` is a different class of the same name."""
    files = {os.path.normpath(p).replace(os.sep, "/") for p in every}
    home = os.path.normpath(defining).replace(os.sep, "/")
    found = False
    for match in re.finditer(rb"^[ \t]*from[ \t]+([\w.]+)[ \t]+import[ \t]*\(?([^\n)]*)", data, re.M):
        if name not in re.findall(rb"\w+", match.group(2)):
            continue
        module = match.group(1).decode().replace(".", "/")
        tails = ("/" + module + ".py", "/" + module + "/__init__.py")
        other = [f for f in files if ("/" + f).endswith(tails)]
        if not other or any(f == home or ("/" + home).endswith("/" + f) or ("/" + f).endswith("/" + home)
                            for f in other):
            return False
        for f in other:
            text = bytes_of(f, contents) or b""
            if re.search(rb"\bimport\b[^\n]*\b%s\b" % name, text) \
                    and not re.search(rb"^[ \t]*class[ \t]+%s\b" % name, text, re.M):
                return False  # a package re-exporting it (not a module defining its own)
        found = True
    return found


def broadcast_framework_facts(result: FileResult, every: Sequence[str], contents: Optional[dict],
                               incoming: dict, changed: set) -> None:
    """``framework_compiled``: a model class that compiles what it wraps in its
    forward tells every file of the project naming the framework (``lightning``)
    that the framework's training may run compiled code (semantic/frameworks.py)."""
    for ref, why in result.exported.framework_compiled:
        token = ref.name.encode()
        for path in every:
            if path == result.path:
                continue
            data = bytes_of(path, contents)
            if data is None or token not in data:
                continue
            facts = incoming.setdefault(path, ProjectFacts())
            if ref.name not in facts.framework_compiled:
                facts.framework_compiled[ref.name] = f"{why}, {Path(result.path).name}"
                changed.add(path)


def join_compile_switches(results: dict, every: Sequence[str], contents: Optional[dict],
                           incoming: dict, changed: set, memo: dict) -> None:
    """``compile_switches``: a keyword every call of a compiled object in the project passes as a
    value false under a compile site's flag (``debug=(not use_compile) and ...``) is told, with the
    positions such calls pass, to the files defining a parameter of that name defaulting to
    ``False`` / ``None`` (semantic/compile_switches.py). Recomputed from every file's latest
    result each round: a later call passing the keyword on takes the fact back."""
    switches: dict[str, set] = {}
    flags: set = set()
    for result in results.values():
        flags.update(ref.name for ref, _why in result.exported.compile_flags)
        for ref, value in result.exported.compile_switches:
            switches.setdefault(ref.name, set()).add(value)
    if not any(value.startswith("off") for values in switches.values() for value in values):
        return
    positions = {key: "on" for key in switches if key.startswith("#")}
    told: dict = {}
    for key, values in switches.items():
        if key.startswith("#") or not any(value.startswith("off") for value in values):
            continue
        off = all(value == "off:" or (value.startswith("off:") and "" not in flags
                                      and set(value[4:].split("/")) & flags) for value in values)
        told[key] = "off" if off else "on"
    if memo.get("told") == (told, positions):
        return  # what the files were told stands
    memo["told"] = (told, positions)
    defining = memo.setdefault("defining", {})  # keyword -> the files with a parameter of that name off by default
    for key in told:
        if key not in defining:
            pattern = re.compile(rb"\b%s\s*(?::[^=,)\n]*)?=\s*(?:False|None)\b" % re.escape(key.encode()))
            defining[key] = {path for path in every if pattern.search(bytes_of(path, contents) or b"")}
    for path in every:
        wanted = {key: value for key, value in told.items() if path in defining[key]}
        facts = incoming.get(path)
        if wanted:
            wanted.update(positions)
        if (facts.compile_switches if facts is not None else {}) != wanted:
            incoming.setdefault(path, ProjectFacts()).compile_switches = wanted
            changed.add(path)


def join_ctor_switches(results: dict, every: Sequence[str], contents: Optional[dict],
                        incoming: dict, changed: set, memo: dict) -> None:
    """``ctor_switches``: a default-``False`` switch of a class that its own file never turns on is told
    back "off" when no other project file may construct the class with it (gnnlint/constructions.py)."""
    pending = {(result.path, *ref.name.split(":")) for result in results.values()
               for ref, _why in result.exported.ctor_switches} - memo.keys()
    for key in pending:  # a Hydra `_target_` naming the class
        memo[key] = not config_targets.config_builds(key[0], key[1])
    if any(memo[key] for key in pending):
        registered = {key: constructions.decorated_class(bytes_of(key[0], contents) or b"", key[1])
                      for key in pending if memo[key]}
        for path in every:  # each file read once for all the switches
            data = None
            for key in pending:
                if memo[key] and path != key[0]:
                    if data is None:
                        data = bytes_of(path, contents) or b""
                    memo[key] = not constructions.switch_maybe_on(data, key[1], key[2], int(key[3]),
                                                                  registered[key])
    for result in results.values():
        told = {}
        for ref, _why in result.exported.ctor_switches:
            cls, flag, _position = key = ref.name.split(":")
            # "on": some construction elsewhere may pass it -- no debugging-switch presumption then
            told[f"{cls}:{flag}"] = "off" if memo[(result.path, *key)] else "on"
        facts = incoming.get(result.path)
        if told and (facts is None or facts.ctor_switches != told):
            incoming.setdefault(result.path, ProjectFacts()).ctor_switches = told
            changed.add(result.path)


def join_imported_constants(results: dict, modules, contents: Optional[dict], incoming: dict,
                            changed: set, memo: dict) -> None:
    """``imported_constants``: a file reading an imported name as a compile option (``from config import
    compile_mode``) is told the literal the defining file binds it to at module level, when it binds it
    once (semantic/imported_constants.py)."""
    for result in results.values():
        told = {}
        for ref, _why in result.exported.imported_constants:
            found = modules.resolve(result.path, ImportRef(ref.module, ref.name, ref.level))
            if found is None:
                continue
            path = modules.given.get(os.path.abspath(found[0]), found[0])
            if (path, ref.name) not in memo:
                memo[(path, ref.name)] = module_constants.module_literal(bytes_of(path, contents) or b"", ref.name)
            value = memo[(path, ref.name)]
            if value is not None:
                told[f"{ref.module}.{ref.name}"] = value
        facts = incoming.get(result.path)
        if told and (facts is None or facts.imported_constants != told):
            incoming.setdefault(result.path, ProjectFacts()).imported_constants = told
            changed.add(result.path)


def join_config_graph_steps(results: dict, modules, incoming: dict, changed: set) -> None:
    """``graph_steps`` of a class a Hydra config builds: a file compiling ``hydra.utils.instantiate(cfg.model)``
    (a config-group marker among its ``compiled`` facts) names no class in an import line; it is told, keyed
    by the group (``config_targets.CONFIG_GROUP + group``), why the steps of a class that group's configs
    name take graph batches (that class's file's ``graph_steps``; semantic/lightning_feeds.py)."""
    for result in results.values():
        groups = sorted({ref.name for ref, _why in result.exported.compiled
                         if config_targets.is_group_ref(ref) and "#" not in ref.name})
        told = {}
        for group in groups:
            for dotted, yaml_path in config_targets.candidates(result.path, group):
                found = modules.resolve(result.path, config_targets.as_import(dotted))
                defining = results.get(modules.given.get(os.path.abspath(found[0]), found[0])) if found else None
                # a LightningModule's steps under the class name, a plain module's forward under "<Class>.forward"
                # (semantic/graph_models.py): each told under its own key
                for suffix in ("", ".forward"):
                    why = next((why for ref, why in defining.exported.graph_steps if ref.name == found[1] + suffix),
                               None) if defining is not None else None
                    if why is not None:
                        told.setdefault(config_targets.CONFIG_GROUP + group + suffix,
                                        f"{why} when `{yaml_path}` selects it, from {Path(defining.path).name}")
        facts = incoming.get(result.path)
        if told and (facts is None or any(facts.graph_steps.get(key) != why for key, why in told.items())):
            incoming.setdefault(result.path, ProjectFacts()).graph_steps.update(told)
            changed.add(result.path)


def join_config_fed_args(results: dict, modules, incoming: dict, changed: set) -> None:
    """``fed_args`` of a class a Hydra config builds with a compiled object (``hydra.utils.instantiate(
    cfg.trainer, models=[model])``: a config-group marker among the file's ``compiled_args``, which names
    no class in an import line): the file is told, keyed ``CONFIG_GROUP + group + ":" + spec``, the loader
    the first class of that group whose file feeds the parameter tells (semantic/fed_args.py)."""
    for result in results.values():
        told = {}
        for ref, _why in result.exported.compiled_args:
            if not config_targets.is_group_ref(ref):
                continue
            group, _, spec = ref.name.partition(":")
            for dotted, _yaml_path in config_targets.candidates(result.path, group):
                found = modules.resolve(result.path, config_targets.as_import(dotted))
                defining = results.get(modules.given.get(os.path.abspath(found[0]), found[0])) if found else None
                why = next((why for told_ref, why in defining.exported.fed_args
                            if told_ref.name == f"{found[1]}:{spec}"), None) if defining is not None else None
                if why is not None:
                    told.setdefault(f"{config_targets.CONFIG_GROUP}{ref.name}",
                                    f"{why.rpartition(', from ')[0] or why}, from {Path(defining.path).name}'s "
                                    f"`{found[1]}`")
        facts = incoming.get(result.path)
        if told and (facts is None or any(facts.fed_args.get(key) != why for key, why in told.items())):
            incoming.setdefault(result.path, ProjectFacts()).fed_args.update(told)
            changed.add(result.path)


# The joins read every project file once per fact they deliver (33,000 opens on PyG's 655 files):
# within one check_files run (``reads_once``) a file's bytes are read once (per thread: the
# language server may run two checks at a time).
_run_reads = threading.local()


@contextmanager
def reads_once(cache=None):
    """Within this block, ``bytes_of`` reads each file from disk once and ``pull_compiled_params``
    looks importers up in one index of the project's import lines. ``cache`` (a
    ``gnnlint.cache.Cache``): each file's import words are kept with it, keyed on the file's
    content digest, so a warm run does not regex-scan every file of the project again."""
    outer = (getattr(_run_reads, "memo", None), getattr(_run_reads, "importers", None),
             getattr(_run_reads, "cache", None), getattr(_run_reads, "registries", None))
    _run_reads.memo, _run_reads.importers, _run_reads.cache, _run_reads.registries = {}, None, cache, {}
    try:
        yield
    finally:
        _run_reads.memo, _run_reads.importers, _run_reads.cache, _run_reads.registries = outer


def bytes_of(path: str, contents: Optional[dict]) -> Optional[bytes]:
    """The bytes of ``path``: an editor's buffer / stdin when given, else the
    file on disk (read once within ``reads_once``); None when it cannot be read."""
    data = contents.get(path) if contents else None
    if data is not None:
        return data
    memo = getattr(_run_reads, "memo", None)
    if memo is not None and path in memo:
        return memo[path]
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:
        data = None
    if memo is not None:
        memo[path] = data
    return data


def remember_bytes(path: str, data: bytes) -> None:
    """``path``'s bytes, as the engine read them from disk for linting: within
    ``reads_once``, ``bytes_of`` hands these out instead of reading the file again."""
    memo = getattr(_run_reads, "memo", None)
    if memo is not None and path not in memo:
        memo[path] = data


def _importers(every: Sequence[str], contents: Optional[dict]) -> dict:
    """word -> the files of ``every`` (in its order) with an import line naming it; built once
    within ``reads_once``."""
    built = getattr(_run_reads, "importers", None)
    if built is not None and built[0] is every:
        return built[1]
    index: dict = {}
    for path in every:
        data = bytes_of(path, contents)
        if data is not None:
            for word in _import_words(path, data):
                index.setdefault(word, []).append(path)
    if getattr(_run_reads, "memo", None) is not None:
        _run_reads.importers = (every, index)
    return index


# the two shapes of pull_compiled_params's import patterns: the rest of an import line, and a
# parenthesised list (it spans lines)
# (`import(?<!\wimport)` is `\bimport` with the literal first: `re` skips to each "import" instead of
# trying every byte, 12x faster; the same spans on all 21,244 corpus files)
_IMPORT_SPANS = (re.compile(rb"import(?<!\wimport)\b[^\n]*"), re.compile(rb"import(?<!\wimport)\s*\([^)]*"))
_WORD = re.compile(rb"\w+")
_import_words_memo: dict = {}


def _import_words(path: str, data: bytes) -> frozenset:
    """Every word after an ``import`` in ``data`` (a superset of what the
    import-line patterns of ``pull_compiled_params`` can match), read once per
    file contents: a project with thousands of facts and files (a
    ``returned_tensors`` fact per annotated function of a library) must not
    regex-scan every file for every fact."""
    key = (path, len(data), hash(data))
    words = _import_words_memo.get(key)
    if words is None:
        cache = getattr(_run_reads, "cache", None)
        digest = cache.digest(data) if cache is not None else None
        words = cache.import_words(digest) if cache is not None else None
        if words is None:
            words = frozenset(w for span in _IMPORT_SPANS for text in span.findall(data)
                              for w in _WORD.findall(text))
            if cache is not None:
                cache.put_import_words(digest, words)
        if len(_import_words_memo) > 20000:
            _import_words_memo.clear()
        _import_words_memo[key] = words
    return words


def _reexporting_package(path: str, stem: str, function: bytes, contents: Optional[dict]) -> list:
    """[the package's name] when the ``__init__.py`` next to ``path`` imports
    ``function`` from it (``from .train_eval import run``), else []."""
    init = os.path.join(os.path.dirname(path), "__init__.py")
    if stem == "__init__" or os.path.basename(path) == "__init__.py":
        return []
    data = bytes_of(init, contents)
    if data is None or function not in data or b"." + stem.encode() not in data:
        return []  # cheap exact preconditions of the pattern below
    if function not in _relative_imports(init, data).get(stem.encode(), ()):
        return []
    return [os.path.basename(os.path.dirname(os.path.abspath(path)))]


# `from .module import a, (b,\n c)`: every start (a lookahead, so a statement inside another's
# continuation lines is found too), the module and the words of the line and of up to 20 indented
# lines after it
_RELATIVE_IMPORT = re.compile(rb"(?=from[ \t]+\.(\w+)[ \t]+import[ \t(]([^\n]*(?:\n[ \t]+[^\n]*){0,20}))")
_relative_imports_memo: dict = {}


def _relative_imports(path: str, data: bytes) -> dict:
    """module -> the words a package's ``from .module import ...`` statements name (one scan of
    the file's bytes, not one compiled pattern per name asked about)."""
    key = (path, len(data), hash(data))
    found = _relative_imports_memo.get(key)
    if found is None:
        found = {}
        for module, tail in _RELATIVE_IMPORT.findall(data):
            found.setdefault(module, set()).update(_WORD.findall(tail))
        if len(_relative_imports_memo) > 2000:
            _relative_imports_memo.clear()
        _relative_imports_memo[key] = found
    return found


def _config_built(importer: str, kind: str, facts: list) -> list:
    """``facts`` with each Hydra config-group marker (``instantiate(cfg.encoder)``
    in a compiled class) replaced by the ``_target_`` classes of the project's
    configs for that group (gnnlint.config_targets); those may live in the
    importing file itself (marked so)."""
    if kind not in ("compiled", "compiled_args") or not any(config_targets.is_group_ref(ref) for ref, _ in facts):
        return facts
    out = []
    for ref, why in facts:
        if not config_targets.is_group_ref(ref):
            out.append((ref, why))
            continue
        if kind == "compiled_args":  # "group:models[]": the classes' __init__ is handed a compiled object
            group, _, spec = ref.name.partition(":")
            for dotted, _yaml_path in config_targets.candidates(importer, group):
                target = config_targets.as_import(dotted)
                if target.name[:1].isupper():
                    out.append((ImportRef(target.module, f"{target.name}:{spec}", target.level),
                                why + config_targets.SAME_FILE))
            continue
        group, _, member = ref.name.partition("#")  # "group#method": that method of each class (called_choices.py)
        for dotted, yaml_path in config_targets.candidates(importer, group):
            target = config_targets.as_import(dotted)
            if member:
                if not target.name[:1].isupper():
                    continue  # a factory's result: its class is not named here
                target = ImportRef(target.module, f"{target.name}.{member}", target.level)
            out.append((target, config_targets.target_why(why, dotted, yaml_path) + config_targets.SAME_FILE))
    return out


def _joined(kind: str, known: Optional[str], why: str) -> Optional[str]:
    """A fact's new value when another export meets it (None: unchanged): the calls of
    ``compiled_passed`` / ``stepped_args`` are joined; a ``stepped`` fact keeps its
    step-counter guard only while every per-step call has it (semantic/stepped_payload.py)."""
    if kind == "stepped":
        if "|@if " not in known:
            return None  # first wins
        from gnnlint.semantic.stepped_payload import stepped_guard, unguarded

        return unguarded(known) if stepped_guard(why) != stepped_guard(known) else None
    if known is None or why not in known.split("|"):
        return why if known is None else f"{known}|{why}"
    return None


def _join_instance_methods(known: Optional[str], told: str) -> Optional[str]:
    """``instance_methods``: every construction's names count (``*`` wins); None: unchanged
    (semantic/instance_methods.py)."""
    if known is None:
        return told
    if "*" in known.split(","):
        return None
    if "*" in told.split(","):
        return "*"
    joined = ",".join(sorted(set(filter(None, known.split(","))) | set(filter(None, told.split(",")))))
    return joined if joined != known else None


# about the file's own functions: pulled by their importers (or joined) in check_files, not delivered
# not delivered by import resolution: pulled by their importers, broadcast, or joined project-wide
_PULLED_KINDS = frozenset(_PULLED_BY_IMPORTERS + ("framework_compiled", "compile_flags", "compile_switches",
                                                  "ctor_switches", "imported_constants"))


def deliver_facts(result, every, contents, compiling, modules, incoming: dict, changed: set) -> None:
    """Deliver what ``result``'s file tells the project to the files its facts name
    (through imports, re-exports and config targets), into ``incoming``; the files
    whose facts changed go into ``changed``."""
    for kind in FACT_KINDS:
        if kind in _PULLED_KINDS:
            continue  # pulled by their importers, or joined, in check_files
        facts_of_kind = entry_points.delivered(result.path, kind, getattr(result.exported, kind), every,
                                               lambda path: bytes_of(path, contents))
        for ref, why in _config_built(result.path, kind, facts_of_kind):
            if kind == "swept" and not compiling.compiles(result.path, ref.module, ref.level, ref.name):
                continue  # a sweep matters only to a function that compiles (GNN015)
            target = modules.resolve(result.path, ref)
            if target is None or (target[0] == result.path and not why.endswith(config_targets.SAME_FILE)):
                continue
            why = why.removesuffix(config_targets.SAME_FILE)
            if kind in ("stepped", "stepped_args", "compiled", "compiled_args") \
                    and "." in ref.name.partition(":")[0]:
                # a method or an attribute: `Evaluator.eval`, `Calculator.model` (not the whole class);
                # `PPO.train:0` (an instance handed to it)
                target = (target[0], target[1] + "." + ref.name.split(".", 1)[1])
            facts = incoming.setdefault(target[0], ProjectFacts())
            known = getattr(facts, kind).get(target[1])
            if kind == "instance_methods":  # every construction counts (semantic/instance_methods.py)
                joined = _join_instance_methods(known, why)
                if joined is not None:
                    facts.instance_methods[target[1]] = joined
                    changed.add(target[0])
                continue
            if kind in ("compiled_passed", "stepped_args") or (kind == "stepped" and known is not None):
                joined = _joined(kind, known, why)  # every call counts, not first-wins
                if joined is not None:
                    getattr(facts, kind)[target[1]] = joined
                    changed.add(target[0])
                continue
            if known is None or (kind == "fullgraph" and why.endswith("False")
                                 and not known.startswith(why)):
                # one compile site without fullgraph=True decides
                getattr(facts, kind)[target[1]] = why if config_targets.CONFIG_CLASS_MARK in why \
                    and ", from " in why else f"{why}, from {Path(result.path).name}"
                changed.add(target[0])
