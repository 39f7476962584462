"""The project call graph: which functions reach compiled code, which loops drive it.

Input: every file's summary (``gnnlint/semantic/summaries.py``), built once from the
file's parse. The refs are resolved through ``ModuleMap`` and three sets are solved to a
bounded fixpoint in memory (no re-parse per round):

* ``reaches``: calling the function runs compiled code once per call (outside its own
  loops) -- it is compiled itself, calls a compiled object (a name, ``self.<attr>``, an item of a filled container, a parameter a
  caller hands one), or calls a function / method that reaches;
* ``holds``: (function, parameter) pairs some call passes a compiled object; an
  ``__init__`` parameter stored as ``self.<attr>`` makes the attribute compiled;
* ``compiled``: the compiled entries and everything they call (a compiled region);
* ``per_step``: what a loop whose body reaches calls, per iteration, transitively.

Callees whose receiver is unknown (``obj.step()``) are *possible* callees: all project
methods of that name. They are followed only with ``possible=True``: their precision is
measured, not assumed. Nothing here changes findings; ``bench/callgraph_diff.py`` reports
what the graph reaches that the rules' regions do not (the flag ``GNNLINT_CALLGRAPH_DUMP``).
"""
from __future__ import annotations

from typing import Iterator, Optional

from gnnlint.facts import ImportRef

_ROUNDS = 20  # chains of hand-offs longer than this are not seen (real projects: < 6)
_CALL = ("__call__", "forward")


class CallGraph:
    def __init__(self, summaries: dict, modules, possible=False) -> None:
        """``summaries``: path -> summary (the paths as ``modules`` names them). ``possible``:
        True (all), False (none) or the kinds of possible callees followed: "poss" (by method
        name), "cfg" (the ``__init__`` a config-built class's keywords name)."""
        self.summaries = summaries
        self.modules = modules
        self.possible = frozenset(("poss", "cfg") if possible is True else possible or ())
        self.funcs: dict = {}
        self.classes: dict = {}
        self.by_method: dict = {}
        self.by_keyword: dict = {}  # an __init__ parameter name -> the __init__s taking it
        for path, summary in summaries.items():
            for qual, func in summary["funcs"].items():
                self.funcs[(path, qual)] = func
                if func["cls"] is not None and qual.count(".") == 1:
                    self.by_method.setdefault(qual.split(".")[1], []).append((path, qual))
                    if qual.endswith(".__init__"):
                        for param in func["params"][1:]:
                            self.by_keyword.setdefault(param, []).append((path, qual))
            for name, cls in summary["classes"].items():
                self.classes[(path, name)] = cls
        self._resolved: dict = {}
        self.reaches: set = set()
        self.holds: set = set()
        self.held_attrs: set = set()
        self._solve()
        self.compiled = self._closure(self._entries())
        self.driving: dict = {}  # function key -> indexes of the loops whose body reaches
        self.per_step = self._closure(self._driven_callees(), stop=self.compiled)

    # -- resolving refs --------------------------------------------------------------
    def resolve(self, path: str, ref: list, depth: int = 0) -> Optional[tuple]:
        """("f" | "c", key) of a ref seen from ``path``, or None (a library, an unknown)."""
        key = (path, tuple(ref))
        if key not in self._resolved:
            self._resolved[key] = None  # a cycle of re-exports resolves to nothing
            self._resolved[key] = self._resolve(path, ref, depth)
        return self._resolved[key]

    def _resolve(self, path: str, ref: list, depth: int) -> Optional[tuple]:
        if depth > 4 or path not in self.summaries:
            return None
        if ref[0] == "L":
            qual = ref[1]
            head, _, tail = qual.partition(".")
            if (path, qual) in self.funcs:
                return "f", (path, qual)
            if (path, qual) in self.classes:
                return "c", (path, qual)
            if (path, head) in self.classes and tail and "." not in tail:
                method = self.method((path, head), tail)
                return ("f", method) if method is not None else None
            imported = self.summaries[path]["imports"].get(head)
            if imported is not None:  # a package re-exporting what it imports
                module, name, level = imported
                return self.resolve(path, ["I", module, f"{name}.{tail}" if tail else name, level], depth + 1)
            return None
        _, module, name, level = ref
        head, _, tail = name.partition(".")
        if tail:  # `from pkg import mod; mod.f()`: first the submodule pkg.mod
            sub = f"{module}.{head}" if module else head
            found = self.modules.resolve(path, ImportRef(sub, tail.split(".")[0], level))
            if found is not None and found[0] in self.summaries and found[0] != path:
                return self.resolve(found[0], ["L", tail], depth + 1)
        found = self.modules.resolve(path, ImportRef(module, head, level))
        if found is None or found[0] not in self.summaries:
            return None
        return self.resolve(found[0], ["L", name], depth + 1)

    def method(self, cls_key: tuple, name: str, depth: int = 0) -> Optional[tuple]:
        """The function a method name runs on an instance of a project class (its bases too)."""
        cls = self.classes.get(cls_key)
        if cls is None or depth > 8:
            return None
        if name in cls["methods"]:
            return cls_key[0], f"{cls_key[1]}.{name}"
        for base in cls["bases"]:
            found = self.resolve(cls_key[0], base)
            if found is not None and found[0] == "c":
                method = self.method(found[1], name, depth + 1)
                if method is not None:
                    return method
        return None

    def _call_method(self, cls_key: tuple, name: Optional[str]) -> Optional[tuple]:
        if name in _CALL:
            return self.method(cls_key, "forward") or self.method(cls_key, "__call__")
        return self.method(cls_key, name) if name else None

    def attr_values(self, cls_key: tuple, attr: str, depth: int = 0) -> Iterator[tuple]:
        """(class key, value) of ``self.<attr>`` in the class and its project bases."""
        cls = self.classes.get(cls_key)
        if cls is None or depth > 8:
            return
        for value in cls["attrs"].get(attr, ()):
            yield cls_key, value
        for base in cls["bases"]:
            found = self.resolve(cls_key[0], base)
            if found is not None and found[0] == "c":
                yield from self.attr_values(found[1], attr, depth + 1)

    # -- what a value holds ---------------------------------------------------------------
    def holds_compiled(self, path: str, value, fkey: Optional[tuple], depth: int = 0) -> bool:
        """The value is a compiled object (or a container of them)."""
        if value == "c" or value == ["c"]:
            return True
        if not isinstance(value, list) or depth > 4:
            return False
        kind = value[0]
        if kind == "p":
            return fkey is not None and (fkey, value[1]) in self.holds
        if kind == "v":
            found = self.resolve(path, value[1])
            return found is not None and found[0] == "f" and bool(self.funcs[found[1]]["rc"])
        if kind == "sa":
            return any(self._attr_compiled(ck, value[2], v, depth + 1)
                       for ck, v in self.attr_values((path, value[1]), value[2]))
        return False

    def _attr_compiled(self, cls_key: tuple, attr: str, value: list, depth: int) -> bool:
        if value[0] == "p":
            return (cls_key, attr) in self.held_attrs
        return self.holds_compiled(cls_key[0], value, None, depth)

    def value_targets(self, path: str, value: list, method: Optional[str], fkey: Optional[tuple],
                      depth: int = 0) -> tuple[bool, list]:
        """(calling ``value.method`` runs a compiled object, the project functions it runs)."""
        if depth > 4:
            return False, []
        if self.holds_compiled(path, value, fkey, depth) and (method in _CALL):
            return True, []
        kind = value[0]
        if kind in ("v", "t"):
            found = self.resolve(path, value[1])
            if found is not None and found[0] == "c":
                target = self._call_method(found[1], method)
                return False, [target] if target is not None else []
            if found is not None and kind == "v":  # a factory: what it returns
                hit, out = False, []
                for inner in self.funcs[found[1]].get("rv", ()):
                    h, targets = self.value_targets(found[1][0], inner, method, None, depth + 1)
                    hit, out = hit or h, out + targets
                return hit, out
            return False, []
        if kind == "sa":
            hit, out = False, []
            for cls_key, inner in self.attr_values((path, value[1]), value[2]):
                if inner[0] == "p":
                    hit = hit or (method in _CALL and (cls_key, value[2]) in self.held_attrs)
                    continue
                h, targets = self.value_targets(cls_key[0], inner, method, None, depth + 1)
                hit, out = hit or h, out + targets
            return hit, out
        return False, []

    def call_targets(self, fkey: tuple, call: list) -> tuple[bool, list, bool]:
        """(the call runs a compiled object, the project functions it runs, they are only possible)."""
        path = fkey[0]
        callee, method = call[0], call[1]
        kind = callee[0]
        if kind == "ref":
            found = self.resolve(path, callee[1])
            if found is None:
                return False, [], False
            if found[0] == "f":
                return False, [found[1]], False
            init = self.method(found[1], "__init__")
            return False, [init] if init is not None else [], False
        if kind == "self":
            target = self._call_method((path, callee[1]), method)
            return False, [target] if target is not None else [], False
        if kind == "super":
            cls = self.classes.get((path, callee[1]))
            for base in cls["bases"] if cls is not None else ():
                found = self.resolve(path, base)
                if found is not None and found[0] == "c":
                    target = self.method(found[1], method)
                    if target is not None:
                        return False, [target], False
            return False, [], False
        if kind == "sa":
            hit, targets = self.value_targets(path, ["sa", callee[1], callee[2]], method, fkey)
            return hit, targets, False
        if kind == "val":
            hit, targets = self.value_targets(path, callee[1], method, fkey)
            return hit, targets, False
        if kind == "poss" and "poss" in self.possible:
            return False, list(self.by_method.get(method, ())), True
        if kind == "cfg" and "cfg" in self.possible:
            flows = call[-1] if isinstance(call[-1], dict) else {}
            return False, [t for key in flows if not key.isdigit() for t in self.by_keyword.get(key, ())], True
        return False, [], False

    # -- solving ---------------------------------------------------------------------------
    def _calls(self) -> Iterator[tuple]:
        for fkey, func in self.funcs.items():
            for call in func["calls"]:
                yield fkey, func, call

    def _solve(self) -> None:
        self.reaches = {k for k, f in self.funcs.items() if f["entry"]}
        self.reaches |= {k for k in self._entries() if k in self.funcs}
        for _ in range(_ROUNDS):
            before = (len(self.reaches), len(self.holds), len(self.held_attrs))
            for fkey, func, call in self._calls():
                hit, targets, _possible = self.call_targets(fkey, call)
                # per call, not per iteration of its own loop: `train_epoch` looping over the
                # batches is a loop driver, a loop calling it is an epoch loop, not a step
                if call[-2] == -1 and (hit or any(t in self.reaches for t in targets)):
                    self.reaches.add(fkey)
                flows = call[-1] if isinstance(call[-1], dict) else {}
                if flows:
                    for target in targets:
                        self._pass_args(fkey, target, flows, "ref" if call[0][0] == "cfg" else call[0][0])
            if (len(self.reaches), len(self.holds), len(self.held_attrs)) == before:
                break

    def _pass_args(self, fkey: tuple, target: tuple, flows: dict, kind: str) -> None:
        func = self.funcs.get(target)
        if func is None:
            return
        params = func["params"]
        bound = func["cls"] is not None and params[:1] in (["self"], ["cls"]) and \
            (kind != "ref" or target[1].endswith(".__init__"))
        for key, flow in flows.items():
            if key.isdigit():
                index = int(key) + (1 if bound else 0)
                if index >= len(params):
                    continue
                name = params[index]
            else:
                name = key
                if name not in params:
                    continue
            value = ["p", flow[2:]] if isinstance(flow, str) and flow.startswith("p:") else flow
            if not self.holds_compiled(fkey[0], value, fkey):
                continue
            self.holds.add((target, name))
            if target[1].endswith(".__init__"):
                cls_key = (target[0], target[1].rsplit(".", 1)[0])
                for attr, values in self.classes.get(cls_key, {}).get("attrs", {}).items():
                    if ["p", name] in values:
                        self.held_attrs.add((cls_key, attr))

    def _entries(self) -> set:
        """The functions compile calls name (a function, a method, a class's forward)."""
        out = {k for k, f in self.funcs.items() if f["entry"]}
        for path, summary in self.summaries.items():
            for entry in summary["entries"]:
                if entry[0] == "ref":
                    found = self.resolve(path, entry[1])
                    if found is not None:
                        target = found[1] if found[0] == "f" else self._call_method(found[1], "forward")
                        if target is not None:
                            out.add(target)
                elif entry[0] == "self":
                    out.add((path, f"{entry[1]}.{entry[2]}"))
                elif entry[0] in ("val", "sa"):
                    value = entry[1] if entry[0] == "val" else ["sa", entry[1], entry[2]]
                    _, targets = self.value_targets(path, value, "forward", None)
                    out.update(t for t in targets if t is not None)
        return {k for k in out if k in self.funcs}

    def _closure(self, roots: set, stop: frozenset = frozenset()) -> set:
        seen = set(roots)
        todo = list(roots)
        while todo:
            fkey = todo.pop()
            for call in self.funcs[fkey]["calls"]:
                _, targets, _ = self.call_targets(fkey, call)
                for target in targets:
                    if target in self.funcs and target not in seen and target not in stop:
                        seen.add(target)
                        todo.append(target)
            # a nested function runs when its parent calls it: the parent's calls already name it
        return seen

    def _driven_callees(self) -> set:
        """What the body of a loop that reaches compiled code calls per iteration."""
        out = set()
        for fkey, func in self.funcs.items():
            loops = func["loops"]
            driving = set()
            for call in func["calls"]:
                hit, targets, _ = self.call_targets(fkey, call)
                if call[-2] >= 0 and (hit or any(t in self.reaches for t in targets)):
                    driving.add(call[-2])  # the innermost loop is the step (an epoch loop around it is not)
            if not driving:
                continue
            self.driving[fkey] = driving
            for call in func["calls"]:
                if driving & set(_chain(loops, call[-2])):
                    _, targets, _ = self.call_targets(fkey, call)
                    out.update(t for t in targets if t in self.funcs)
        return out


def _chain(loops: list, index: int) -> list:
    """The loop ``index`` and the loops around it (their bodies run it per iteration)."""
    out = []
    while index is not None and 0 <= index < len(loops) and index not in out:
        out.append(index)
        index = loops[index][2]
    return out
