"""Constructor arguments a Hydra config fills: "which classes does the
config pass for this ``__init__`` parameter?"

A LightningModule or wrapper built by ``hydra.utils.instantiate(cfg.model)``
takes its submodules as constructor arguments (``def __init__(self,
encoder: torch.nn.Module, ...)``; ``self.encoder = encoder``) and its config
file fills them: ``_target_: pkg.lit.VAE`` with ``encoder: ${encoder}`` (the
class the ``encoder`` config group selects) or a nested ``encoder:`` /
``_target_: pkg.enc.Encoder``. No Python construction names the class, so
``constructor_args`` (ctor_args.py) has nothing to say.
``config_param_choices(init, param)`` answers with the marker reference of
the group (``config_targets.group_ref``; the engine turns it into the
group's ``_target_`` classes) or the nested target's class, for
``model_choices`` (choices.py). The YAML is read by a line scan in
``gnnlint.config_targets.param_fills``; nothing found, nothing answered.
"""
from __future__ import annotations

import libcst as cst

from gnnlint.config_targets import as_import, group_ref, param_fills
from gnnlint.facts import ImportRef
from gnnlint.semantic.model import FuncInfo


class ConfigParams:
    """What a Hydra config passes to a local class's ``__init__``. Mixed into FileContext."""

    def config_param_choices(self, init: FuncInfo, param: cst.Param) -> list[ImportRef]:
        cls = init.cls
        params = init.node.params
        if cls is None or init.name != "__init__" or init.parent is not None or self.path.startswith("<") \
                or not any(param is p for p in (*params.params, *params.kwonly_params)):
            return []
        return [group_ref(name) if how == "group" else as_import(name)
                for how, name in param_fills(self.path, cls.name, param.name.value)]
