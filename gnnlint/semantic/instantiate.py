"""Models built by Hydra: "which project classes can this
``hydra.utils.instantiate(cfg.X)`` / ``instantiate(config.X)`` /
``hydra.utils.call(cfg.X)`` build?"

Research code names its model classes in YAML configs
(``configs/encoder/schnet.yaml``: ``_target_: pkg.models.SchNet``) and builds
them with ``self.encoder = hydra.utils.instantiate(cfg.encoder)`` or
``model = hydra.utils.instantiate(cfg.model)`` before ``torch.compile``. The
file alone cannot name the class: ``instantiated_group(call)`` answers with
the config group the call reads (the last attribute or string key of its
first argument: ``cfg.model.encoder`` -> ``encoder``), and
``instantiated_choice`` with the marker ``ImportRef`` the file exports for
it (``gnnlint.config_targets.group_ref``). The engine turns that into the
``_target_`` classes of the project's configs for that group (YAML read by a
line scan in ``gnnlint.config_targets``), each compiled "when the config
selects it". A group the configs do not name builds nothing (precision
first); so does an argument that is not ``<something>.<group>``.
"""
from __future__ import annotations

import re
from typing import Optional

import libcst as cst

from gnnlint.config_targets import _CONF_NAME, group_ref
from gnnlint.facts import ImportRef

HYDRA_BUILDERS = frozenset((
    "hydra.utils.instantiate", "hydra.utils.call",
    "hydra._internal.instantiate._instantiate2.instantiate",
    "hydra._internal.instantiate._instantiate2.call",
))
_GROUP = re.compile(r"^[A-Za-z_][\w\-]*$")
_MAX_DEPTH = 3


class Instantiate:
    """Hydra-built values. Mixed into FileContext; reads the SemanticModel."""

    def instantiated_group(self, call: cst.Call, depth: int = 0) -> Optional[str]:
        """The config group ``call`` builds from, when it is a Hydra
        ``instantiate``/``call`` of ``<config>.<group>``, else None."""
        if not isinstance(call, cst.Call) or self.resolve(call.func) not in HYDRA_BUILDERS:
            return None
        first = next((a.value for a in call.args if a.keyword is None and not a.star), None)
        if first is None:
            first = next((a.value for a in call.args if a.keyword is not None
                          and a.keyword.value == "config"), None)
        return self._config_group(first, call, depth)

    def instantiated_param(self, call: cst.Call) -> Optional[cst.Name]:
        """``hydra.utils.instantiate(encoder, ...)`` with ``encoder`` a parameter
        of the enclosing ``__init__``: the name, whose classes are what the
        config passes for that parameter (a nested ``_target_`` under
        ``_recursive_: False``, ``config_params.py``); else None."""
        if not isinstance(call, cst.Call) or self.resolve(call.func) not in HYDRA_BUILDERS:
            return None
        first = next((a.value for a in call.args if a.keyword is None and not a.star), None)
        if not isinstance(first, cst.Name):
            return None
        binding, func = self.lookup(first.value, call)
        if binding is None or binding.how != "param" or func is None or func.name != "__init__":
            return None
        return first

    def instantiated_choice(self, call: cst.Call) -> Optional[ImportRef]:
        """The marker reference of the classes ``call`` may build (for
        ``model_choices``), or None."""
        group = self.instantiated_group(call)
        return group_ref(group) if group is not None else None

    def self_attr_builds(self, expr: cst.Attribute, at: cst.CSTNode) -> list[ImportRef]:
        """``self.model`` in a method of a class that sets ``self.model =
        hydra.utils.instantiate(cfg.model)`` (through ``.to(device)``) in any
        of its methods: the marker references of those builds."""
        if not (isinstance(expr.value, cst.Name) and expr.value.value == "self"):
            return []
        cls = self.enclosing_class(at)
        out: list[ImportRef] = []
        for value in cls.attrs.get(expr.attr.value, ()) if cls is not None else ():
            while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
                    and value.func.attr.value in ("to", "cuda", "train", "eval", "float", "double", "half"):
                value = value.func.value
            ref = self.instantiated_choice(value) if isinstance(value, cst.Call) else None
            if ref is not None and ref not in out:
                out.append(ref)
        return out

    def _config_group(self, expr, at, depth: int) -> Optional[str]:
        if expr is None or depth > _MAX_DEPTH:
            return None
        group = None
        if isinstance(expr, cst.Attribute):
            group = expr.attr.value
        elif isinstance(expr, cst.Subscript) and len(expr.slice) == 1 \
                and isinstance(expr.slice[0].slice, cst.Index):
            key = self.literal_value(expr.slice[0].slice.value)
            group = key if isinstance(key, str) else None
        elif isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) \
                and expr.func.attr.value == "get" and expr.args:
            key = self.literal_value(expr.args[0].value)  # cfg.get("encoder")
            group = key if isinstance(key, str) else None
        elif isinstance(expr, cst.Name):
            binding, _func = self.lookup(expr.value, at)
            if binding is not None and binding.how == "assign" and binding.value is not None:
                return self._config_group(binding.value, binding.value, depth + 1)  # enc_cfg = cfg.encoder
            return None
        if group is None or not _GROUP.match(group) or _CONF_NAME.match(group):
            return None
        return group
