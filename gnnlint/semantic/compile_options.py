"""Compile options bound to names: "what is this compile option when the program runs with its defaults?"

``dynamic=args.dynamic``, ``mode=MODE``, ``**compile_kwargs``, ``**cfg.compile.args``: the value a compile
option surely has (a literal reached through assignments, an argparse default, a dict literal, the
``**kwargs`` of a helper's local callers, the project's Hydra YAML through ``config_targets``), else
``_NO_VALUE`` -- the rules then say nothing, and the site is counted as one whose options gnnlint could not
read (``-v``). ``compile_option``, ``compile_option_source``, ``unreadable_compile_options``; the sites
themselves (``compile_kwarg``, ``_compile_args``, ``compile_partials``) are compile_sites.py's. Moved out of
compile_sites.py (s11), unchanged.
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from gnnlint import config_targets
from gnnlint.semantic.imported_constants import imported_constant
from gnnlint.semantic.kinds import _NO_VALUE


def _shown(value: object) -> str:
    """A literal as a message shows it: ``"reduce-overhead"``, ``False``."""
    return f'"{value}"' if isinstance(value, str) else repr(value)


class CompileOptions:
    """Compile options read through names. Mixed into FileContext (through CompileSites); reads the SemanticModel."""

    def compile_option(self, site_node: cst.CSTNode, name: str) -> object:
        """Compile option ``name`` of a site: its literal value, None when not
        given, ``_NO_VALUE`` when gnnlint cannot read it."""
        return self._option_read(site_node, name)[0]

    def compile_option_source(self, site_node: cst.CSTNode, name: str) -> Optional[str]:
        """For a readable option not written as a literal at the call: where
        its value comes from, for messages (``"`--dynamic` defaults to False"``)."""
        return self._option_read(site_node, name)[1]

    def unreadable_compile_options(self) -> list[tuple[cst.CSTNode, tuple[str, ...]]]:
        """Compile sites (not optimizer steps) whose ``dynamic``/``mode`` gnnlint
        cannot read, with the options it could not read."""
        out = []
        for site_node, site in self.compile_sites:
            if site.target_kind == "optimizer_step":
                continue
            missing = tuple(n for n in ("dynamic", "mode") if self.compile_option(site_node, n) is _NO_VALUE)
            if missing:
                out.append((site_node, missing))
        return out

    def _option_read(self, site_node: cst.CSTNode, name: str) -> tuple[object, Optional[str]]:
        def compute():
            arg = self.compile_kwarg(site_node, name)
            if arg is not None:
                value, source = self._option_value(arg.value, arg.value, 0)
                call = self.compile_call_node(site_node)
                if value is not _NO_VALUE and source is None and not (call is not None and
                                                                      any(a is arg for a in call.args)):
                    alias = next((n for n, p in self.compile_partials.items() if arg in p.args), "functools.partial")
                    source = f"set by `{alias}`"  # compile_fn = partial(torch.compile, dynamic=False)
                return value, source
            return self._star_option(site_node, name)
        return self._memoised(("compile_option", site_node, name), compute, (_NO_VALUE, None))

    def _star_option(self, site_node: cst.CSTNode, name: str) -> tuple[object, Optional[str]]:
        """``name`` through the ``**`` arguments of a compile call (None: surely not passed)."""
        for arg in self._compile_args(site_node):
            if arg.star != "**":
                continue
            config = self._config_entry(arg.value, name)
            if config is not None:
                if config[0] is None:
                    continue  # the configs leave it out
                return config
            found = self._dict_entry(arg.value, arg.value, name, 0)
            if found is None:
                continue
            if found[0] is _NO_VALUE or found[1] is None:
                return found
            value, source = self._option_value(found[1], found[1], 1)
            if value is _NO_VALUE:
                return _NO_VALUE, None
            where = self.module.code_for_node(arg.value)
            return value, source or f"`**{where}` sets `{name}={_shown(value)}`"
        return None, None

    _CONFIG_ROOTS = ("cfg", "config", "conf", "hparams", "args", "opt", "hydra_cfg")
    _YAML_LITERALS = {"true": True, "True": True, "false": False, "False": False, "null": None, "~": None}

    def _config_entry(self, expr: cst.BaseExpression, name: str) -> Optional[tuple]:
        """``**cfg.compile.args`` in a Hydra program: ``(value, source)`` of
        ``name`` in that mapping of the project's YAML configs
        (``gnnlint.config_targets.mapping_entry``), ``(None, None)`` when
        they leave it out, None when unknown (not a Hydra config, no config
        defines the mapping, the configs disagree, not a plain scalar)."""
        if not any(m.split(".")[0] in ("hydra", "omegaconf") for m in self.aliases.values()) \
                and not any(r.module.split(".")[0] in ("hydra", "omegaconf") for r in self.imports.values()):
            return None
        keys = []
        while isinstance(expr, cst.Attribute):
            keys.append(expr.attr.value)
            expr = expr.value
        keys.reverse()
        if isinstance(expr, cst.Name) and expr.value == "self" and keys and keys[0] in self._CONFIG_ROOTS:
            keys = keys[1:]  # self.cfg.compile.args
        elif not isinstance(expr, cst.Name) or expr.value == "self":
            return None
        if not keys:
            return None
        found = config_targets.mapping_entry(self.path, tuple(keys), name)
        if found is None:
            return None
        raw, where = found
        if raw == config_targets.ABSENT:
            return None, None
        value = self._YAML_LITERALS.get(raw, raw)
        if isinstance(value, str) and name == "dynamic":
            return _NO_VALUE, None  # `dynamic: ${...}` or a string: not a value gnnlint reads
        return value, f"`{where}` sets `{'.'.join(keys)}.{name}: {raw}`"

    def _dict_entry(self, expr: cst.BaseExpression, at: cst.CSTNode, key: str, depth: int):
        """The entry ``key`` of a mapping expression: None when it surely has
        none, ``(_NO_VALUE, None)`` when unreadable, ``(True, value_expr)``."""
        if depth > 4:
            return _NO_VALUE, None
        if isinstance(expr, cst.Dict):
            found = None
            for element in expr.elements:
                if not isinstance(element, cst.DictElement):
                    inner = self._dict_entry(element.value, at, key, depth + 1)  # {**base, ...}
                    if inner is not None:
                        found = inner
                    continue
                element_key = self.literal_value(element.key)
                if element_key is _NO_VALUE:
                    return _NO_VALUE, None
                if element_key == key:
                    found = (True, element.value)
            return found
        if isinstance(expr, cst.Call) and self.resolve(expr.func) == "dict" and \
                all(a.keyword is not None or a.star == "**" for a in expr.args):
            found = None
            for a in expr.args:
                if a.star == "**":
                    inner = self._dict_entry(a.value, at, key, depth + 1)
                    found = inner if inner is not None else found
                elif a.keyword.value == key:
                    found = (True, a.value)
            return found
        if isinstance(expr, cst.Name):
            if self._mapping_mutated(expr.value):
                return _NO_VALUE, None
            values = self._reaching_values(expr, at)
            if values is None:
                return self._kwargs_param_entry(expr, at, key, depth)
            entries = [self._dict_entry(v, v, key, depth + 1) for v in values]
            if any(e is not None and e[0] is _NO_VALUE for e in entries):
                return _NO_VALUE, None
            given = [e for e in entries if e is not None]
            if not given:
                return None
            if len(given) != len(entries):
                return _NO_VALUE, None  # set on one path only
            return given[0] if len(given) == 1 else (True, given[0][1]) if all(
                self.literal_value(g[1]) == self.literal_value(given[0][1]) for g in given) else (_NO_VALUE, None)
        return _NO_VALUE, None

    def _kwargs_param_entry(self, expr: cst.Name, at: cst.CSTNode, key: str, depth: int):
        """``def build(model, **kwargs): torch.compile(model, **kwargs)``: what
        the local callers pass (unreadable without local callers)."""
        binding, scope = self.lookup(expr.value, at)
        if binding is None or binding.how != "param" or scope is None:
            return _NO_VALUE, None
        param = scope.params.get(expr.value)
        if param is None or scope.node.params.star_kwarg is not param:
            return _NO_VALUE, None
        callers = self.callers_of(scope)
        if not callers:
            return _NO_VALUE, None
        found = []
        for caller in callers:
            if any(a.star for a in caller.args):
                return _NO_VALUE, None
            passed = [a.value for a in caller.args if a.keyword is not None and a.keyword.value == key]
            found.append(passed[0] if passed else None)
        values = {self.literal_value(v) if v is not None else None for v in found}
        if len(values) != 1 or _NO_VALUE in values:
            return _NO_VALUE, None
        value = next(iter(values))
        return None if value is None and all(v is None for v in found) else (True, next(v for v in found if v is not None))

    def _mapping_mutated(self, name: str) -> bool:
        """``name[...] = ...``, ``name.update(...)`` and the like anywhere in the file."""
        def compute():
            for use in self.name_uses(name):
                parent = self.parent.get(use)
                if isinstance(parent, cst.Subscript) and parent.value is use:
                    holder = self.parent.get(parent)
                    if isinstance(holder, (cst.AssignTarget, cst.AugAssign, cst.Del)):
                        return True
                if isinstance(parent, cst.Attribute) and parent.value is use and \
                        parent.attr.value in ("update", "setdefault", "pop", "popitem", "clear", "__setitem__"):
                    return True
                if isinstance(parent, cst.AugAssign) and parent.target is use:
                    return True
            return False
        return self._memoised(("mapping_mutated", name), compute, True)

    def _reaching_values(self, expr: cst.Name, at: cst.CSTNode) -> Optional[list[cst.BaseExpression]]:
        """The values of every assignment of a name that may reach ``at``
        (None: a binding that is not a plain assignment reaches it)."""
        reaching = [b for b, _scope in self.reaching(expr.value, at)]
        if not reaching or any(b.how != "assign" or b.value is None for b in reaching):
            return None
        return [b.value for b in reaching]

    def _option_value(self, expr: cst.BaseExpression, at: cst.CSTNode, depth: int) -> tuple[object, Optional[str]]:
        """(literal value, where it came from when not written here) or (_NO_VALUE, None)."""
        if depth > 5:
            return _NO_VALUE, None
        if isinstance(expr, cst.Name) and expr.value not in ("True", "False", "None"):
            values = self._reaching_values(expr, at)
            if values is None:
                return imported_constant(self, expr) or self._param_option(expr, at, depth)
            results = [self._option_value(v, v, depth + 1) for v in values]
            return self._agree(results, f"`{expr.value}`")
        if isinstance(expr, cst.Attribute):
            dest = expr.attr.value
            if self._is_parsed_args(expr.value, at, depth):
                return self._argparse_default(dest)
            return imported_constant(self, expr) or (_NO_VALUE, None)  # `config.compile_mode`
        if isinstance(expr, cst.Subscript) and len(expr.slice) == 1 and \
                isinstance(expr.slice[0].slice, cst.Index):
            key = self.literal_value(expr.slice[0].slice.value)
            if not isinstance(key, str):
                return _NO_VALUE, None
            entry = self._dict_entry(expr.value, at, key, depth + 1)
            if entry is None or entry[0] is _NO_VALUE:
                return _NO_VALUE, None
            value, source = self._option_value(entry[1], entry[1], depth + 1)
            return value, source or (f"`{self.module.code_for_node(expr)}` is {_shown(value)}"
                                     if value is not _NO_VALUE else None)
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "get" \
                and expr.args and not any(a.star or a.keyword for a in expr.args):
            key = self.literal_value(expr.args[0].value)
            entry = self._dict_entry(expr.func.value, at, key, depth + 1) if isinstance(key, str) else (_NO_VALUE,)
            if entry is not None and entry[0] is _NO_VALUE:
                return _NO_VALUE, None
            if entry is None:  # cfg.get("dynamic", False): the default
                if len(expr.args) < 2:
                    return None, f"`{self.module.code_for_node(expr)}` is None"
                value, source = self._option_value(expr.args[1].value, at, depth + 1)
            else:
                value, source = self._option_value(entry[1], entry[1], depth + 1)
            return value, source or (f"`{self.module.code_for_node(expr)}` is {_shown(value)}"
                                     if value is not _NO_VALUE else None)
        if isinstance(expr, cst.IfExp):
            return self._agree([self._option_value(expr.body, at, depth + 1),
                                self._option_value(expr.orelse, at, depth + 1)], None)
        return self.literal_value(expr, expr) if not isinstance(expr, cst.Name) or \
            expr.value in ("True", "False", "None") else _NO_VALUE, None

    @staticmethod
    def _agree(results: list[tuple[object, Optional[str]]], name: Optional[str]) -> tuple[object, Optional[str]]:
        values = [r[0] for r in results]
        if not values or any(v is _NO_VALUE for v in values) or any(v != values[0] or type(v) is not type(values[0])
                                                                    for v in values):
            return _NO_VALUE, None
        source = next((r[1] for r in results if r[1]), None)
        return values[0], source or (f"{name} is {_shown(values[0])}" if name else None)

    def _param_option(self, expr: cst.Name, at: cst.CSTNode, depth: int) -> tuple[object, Optional[str]]:
        """A parameter: its default and what every local caller passes (unreadable without local callers)."""
        binding, scope = self.lookup(expr.value, at)
        if binding is None or binding.how != "param" or scope is None:
            return _NO_VALUE, None
        param = scope.params.get(expr.value)
        callers = self.callers_of(scope)
        if param is None or not callers or param.star:
            return _NO_VALUE, None
        results = []
        for caller in callers:
            if any(a.star for a in caller.args):
                return _NO_VALUE, None
            passed = self.arg_for_param(scope, caller, expr.value)
            if passed is None:
                if param.default is None:
                    return _NO_VALUE, None
                value, source = self._option_value(param.default, param.default, depth + 1)
                results.append((value, source or f"`{expr.value}` defaults to {_shown(value)}"))
            else:
                results.append(self._option_value(passed, caller, depth + 1))
        return self._agree(results, f"`{expr.value}`")

    def _is_parsed_args(self, expr: cst.BaseExpression, at: cst.CSTNode, depth: int) -> bool:
        """``args`` from ``parser.parse_args()`` (through names and local callers' arguments)."""
        if depth > 5:
            return False
        if isinstance(expr, cst.Call):
            return isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "parse_args"
        if not isinstance(expr, cst.Name):
            return False
        binding, scope = self.lookup(expr.value, at)
        if binding is None:
            binding, scope = self.feed_binding(expr.value, at), None
        if binding is None:
            return False
        if binding.how == "assign":
            return self._is_parsed_args(binding.value, binding.value, depth + 1)
        if binding.how == "unpack" and binding.index == 0 and isinstance(binding.value, cst.Call) \
                and isinstance(binding.value.func, cst.Attribute) \
                and binding.value.func.attr.value == "parse_known_args":
            return True
        if binding.how == "param" and scope is not None:
            callers = self.callers_of(scope)
            passed = [self.arg_for_param(scope, c, expr.value) for c in callers]
            return bool(passed) and all(p is not None and self._is_parsed_args(p, c, depth + 1)
                                        for p, c in zip(passed, callers))
        return False

    def _argparse_default(self, dest: str) -> tuple[object, Optional[str]]:
        """The default of the argparse option stored in ``dest`` in this file
        (``action="store_true"``: False), unless the program assigns it."""
        def compute():
            found: list[tuple[object, str]] = []
            overrides: list[tuple[object, str]] = []  # parser.set_defaults(dest=...) wins over add_argument's default
            for call in self.all_calls():
                func = call.func
                if not isinstance(func, cst.Attribute):
                    continue
                if func.attr.value == "set_defaults":
                    for a in call.args:
                        if a.keyword is not None and a.keyword.value == dest:
                            value = self._option_value(a.value, a.value, 4)[0]
                            overrides.append((value, f"`{dest}` defaults to {_shown(value)}"))
                    continue
                if func.attr.value != "add_argument":
                    continue
                flags = [self.literal_value(a.value) for a in call.args if a.keyword is None]
                flags = [f for f in flags if isinstance(f, str)]
                kw = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
                name = self.literal_value(kw["dest"]) if "dest" in kw else next(
                    (f.lstrip("-").replace("-", "_") for f in flags if f.startswith("--")),
                    flags[0].lstrip("-").replace("-", "_") if flags else None)
                if name != dest:
                    continue
                flag = next((f for f in flags if f.startswith("--")), flags[0] if flags else dest)
                action = self.literal_value(kw["action"]) if "action" in kw else None
                if "default" in kw:
                    value = self._option_value(kw["default"], kw["default"], 4)[0]
                elif action in ("store_true", "store_false"):
                    value = action == "store_false"
                elif action in (None, "store"):
                    value = None
                else:
                    value = _NO_VALUE
                found.append((value, f"`{flag}` defaults to {_shown(value)}"))
            found = overrides or found
            if not found or any(v is _NO_VALUE or v != found[0][0] for v, _ in found):
                return _NO_VALUE, None
            for node in self.attribute_nodes(dest):  # args.dynamic = True somewhere
                holder = self.parent.get(node)
                if isinstance(holder, (cst.AssignTarget, cst.AugAssign)) and holder.target is node:
                    return _NO_VALUE, None
            return found[0]
        return self._memoised(("argparse_default", dest), compute, (_NO_VALUE, None))
