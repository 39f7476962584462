"""Does this line run only when a parameter is true that every compiled call passes false?

A model keeps a debug switch in its forward, and the training loop turns it
off whenever it compiles (MeshGraphNets)::

    # setup.py
    if config.get('use_compile', False):
        model = torch.compile(model, dynamic=True)
    # training_loop.py (handed the model)
    debug = (not use_compile) and batch_idx == 0      # use_compile = config.get('use_compile', False)
    predicted = model(graph, debug=debug)
    # model.py
    def forward(self, graph, debug=False):
        ...
        if debug:
            print(x.std().item())

The ``if debug:`` block never runs compiled: every compiled call passes
``debug`` as a value that is false whenever the compile happens (a *compile
switch*). Three facts carry it, each file telling what only it can see:

- a compile site tells the project the flags it runs under (``compile_flags``:
  the key of each ``if`` test around it -- ``use_compile`` for a name,
  ``config.get('use_compile')``, ``config['use_compile']``, ``args.use_compile``;
  ``""`` for a site under no flag: then no switch tied to a flag is off);
- every call of a compiled object tells the project what it passes for each
  keyword (``compile_switches``): ``off:<flag keys>`` for ``not <flag>``, ``(not
  <flag>) and ...`` or a local name assigned only such values, ``off:`` for
  ``False`` / ``None``, ``on`` for anything else; ``#<n>`` for a positional
  argument (``on``: it may be the switch);
- the engine joins them (a keyword is off when each of its values is
  ``off:`` or names a compile flag) and tells the files defining a parameter of
  that name defaulting to ``False`` / ``None``.

``compile_switch_off(node)``: ``node`` runs only when a parameter ``P`` is true
(``if P:``, ``if P and ...:``, the ``else`` of ``if not P:``) and ``P`` is off:
it defaults to ``False`` / ``None`` (or has no default) and every call of the
function in this file passes it nothing, ``False`` / ``None``, or a parameter of
the calling function that is itself off (``self.model(graph, debug=debug)``,
``self._flat(graph, debug)``); a forward other files compile is off only when
the project's compiled calls pass it off and none passes the ``P``'s position.
Calls through ``*args`` / ``**kwargs`` are not read (the positional veto and
the keyword facts are what the calls show).
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from gnnlint.facts import ImportRef

_MAX_DEPTH = 4


class CompileSwitches:
    """Mixed into FileContext; reads the SemanticModel, the compile sites and ``project.compile_switches``."""

    # the compiling side ----------------------------------------------------------------
    def _export_compile_flags(self) -> None:
        for site_node, _site in self.compile_sites:
            child, keys = site_node, set()
            for anc in self.ancestors(site_node):
                if isinstance(anc, (cst.FunctionDef, cst.ClassDef)):
                    break
                if isinstance(anc, (cst.If, cst.IfExp)) and child is anc.body:
                    for conjunct in _conjuncts(anc.test):
                        keys.update(self._flag_keys(conjunct, anc))
                child = anc
            # "": a compile under no flag of its own -- a switch tied to a flag may then be on while it runs
            for key in sorted(keys) or [""]:
                self.exported.compile_flags.append((ImportRef("", key), "compile flag"))

    def _flag_keys(self, expr: cst.BaseExpression, at: cst.CSTNode) -> tuple:
        """The names a flag goes by: ``use_compile`` for the name, ``config.get('use_compile')``,
        ``config['use_compile']``, ``args.use_compile`` and a local name assigned one of them."""
        if isinstance(expr, cst.Attribute):
            return (expr.attr.value,)
        if isinstance(expr, cst.Subscript) and len(expr.slice) == 1 \
                and isinstance(expr.slice[0].slice, cst.Index) \
                and isinstance(expr.slice[0].slice.value, cst.SimpleString):
            return (expr.slice[0].slice.value.evaluated_value,)
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "get" \
                and expr.args and isinstance(expr.args[0].value, cst.SimpleString):
            return (expr.args[0].value.evaluated_value,)
        if isinstance(expr, cst.Name):
            keys = {expr.value}
            binding = self.sole_binding(expr.value, at, "assign")
            if binding is not None and binding.value is not None and not isinstance(binding.value, cst.Name):
                keys.update(self._flag_keys(binding.value, at))
            return tuple(sorted(k for k in keys if isinstance(k, str)))
        return ()

    # the calling side ------------------------------------------------------------------
    def _export_compile_switches(self) -> None:
        """What each call of a compiled object passes for its keywords (and that it passes positions)."""
        if not (self.compile_sites or self.project.compiled_args or self.project.compiled_returns
                or self.project.compiled_instances):
            return
        compiled = self._step_analysis()._compiled_calls()  # id(call) -> what it runs (steps.py, memoised)
        for call in self.all_calls():
            positional = [a for a in call.args if a.keyword is None and not a.star]
            keywords = [a for a in call.args if a.keyword is not None]
            if (len(positional) < 2 and not keywords) or id(call) not in compiled or self._hands_on(call):
                continue
            for arg in keywords:
                self.exported.compile_switches.append((ImportRef("", arg.keyword.value), self._switch_value(arg.value)))
            for index in range(1, len(positional)):
                self.exported.compile_switches.append((ImportRef("", f"#{index}"), "on"))

    def _hands_on(self, call: cst.Call) -> bool:
        """A call of a project / imported function (``train_epoch(model, ...)``): it hands the compiled
        object on (steps.py counts it as running compiled code); that function's calls tell their own."""
        root = call.func.value if isinstance(call.func, cst.Attribute) and call.func.attr.value == "forward" \
            else call.func
        return self.local_callee(call) is not None or (isinstance(root, cst.Name) and root.value in self.imports)

    def _switch_value(self, expr: cst.BaseExpression) -> str:
        keys = self._off_keys(expr, expr, 0)
        return "on" if keys is None else "off:" + "/".join(keys)

    def _off_keys(self, expr: cst.BaseExpression, at: cst.CSTNode, depth: int) -> Optional[tuple]:
        """The flag keys under which ``expr`` is false (``()``: always false), or None."""
        if isinstance(expr, cst.Name) and expr.value in ("False", "None"):
            return ()
        if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Not):
            keys = self._flag_keys(expr.expression, at)
            return keys or None
        if isinstance(expr, cst.BooleanOperation) and isinstance(expr.operator, cst.And):
            left = self._off_keys(expr.left, at, depth)
            return left if left is not None else self._off_keys(expr.right, at, depth)
        if isinstance(expr, cst.Name) and depth < _MAX_DEPTH:
            reaching = self.reaching(expr.value, at)
            found: Optional[set] = set() if reaching else None
            for binding, _func in reaching:
                if binding.how != "assign" or binding.value is None:
                    return None
                keys = self._off_keys(binding.value, binding.value, depth + 1)
                if keys is None:
                    return None
                found.update(keys)
            return tuple(sorted(found)) if found is not None else None
        return None

    # the defining side -----------------------------------------------------------------
    def compile_switch_off(self, node: cst.CSTNode) -> bool:
        if not self.project.compile_switches:
            return False
        func = self.enclosing_function(node)
        if func is None:
            return False
        for test, holds in self._conditions(node, func):
            if holds:
                names = [c.value for c in _conjuncts(test) if isinstance(c, cst.Name)]
            elif isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not) \
                    and isinstance(test.expression, cst.Name):
                names = [test.expression.value]
            else:
                names = []
            for name in names:
                # the parameter itself (not `add_noise = self.training` after `if add_noise is None:`)
                if name in func.params and all(b.how == "param" for b, _f in self.reaching(name, test)) \
                        and self._memoised(("switch_off", id(func.node), name),
                                                          lambda n=name: self._param_off(func, n, 0), False):
                    return True
        return False

    def _param_off(self, func, name: str, depth: int) -> bool:
        param = func.params.get(name)
        if not isinstance(param, cst.Param) or param.star in ("*", "**") or depth > _MAX_DEPTH:
            return False
        if param.default is not None and not (isinstance(param.default, cst.Name)
                                              and param.default.value in ("False", "None")):
            return False
        calls = self._switch_callers(func)
        entered = func.cls is not None and func.name in ("forward", "__call__") \
            and (func.cls.name in self.project.compiled or func.cls.name in self.project.compiled_passed)
        if entered and not self._told_off(func, name):
            return False
        if not calls and not entered:
            return False
        for call in calls:
            if any(a.star for a in call.args):
                return False
            value = self.arg_for_param(func, call, name)
            if value is None:
                if param.default is None:
                    return False
                continue
            if isinstance(value, cst.Name) and value.value in ("False", "None"):
                continue
            outer = self.enclosing_function(call)
            if not (isinstance(value, cst.Name) and outer is not None and value.value in outer.params
                    and all(b.how == "param" for b, _f in self.reaching(value.value, call))
                    and self._param_off(outer, value.value, depth + 1)):
                return False
        return True

    def _told_off(self, func, name: str) -> bool:
        """The project's compiled calls pass ``name`` off, and none passes its position."""
        if self.project.compile_switches.get(name) != "off":
            return False
        params = [p for p in func.params if p != "self"]
        index = params.index(name) if name in params else -1
        return index >= 0 and f"#{index}" not in self.project.compile_switches

    def _switch_callers(self, func) -> list:
        """The calls of ``func`` in this file; for a forward, also the calls of its class's instances."""
        calls = list(self.callers_of(func, through_aliases=True))
        if func.cls is not None and func.name in ("forward", "__call__"):
            for call in self.all_calls():
                if isinstance(call.func, (cst.Name, cst.Attribute)) and call not in calls \
                        and not (isinstance(call.func, cst.Attribute) and call.func.attr.value == func.name) \
                        and self.class_of(call.func, call) is func.cls:
                    calls.append(call)
        return calls


def _conjuncts(test: cst.BaseExpression) -> list:
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        return _conjuncts(test.left) + _conjuncts(test.right)
    return [test]
