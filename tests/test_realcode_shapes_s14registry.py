"""s14registry: classes a compile reaches through a registry or a module chosen by a config name.

- ``self.model = registry.get_model_class(name)(**cfg)`` then ``torch.compile(self.model)`` with
  ``@registry.register_model("net")`` on the class in another file (fairchem / equiformer_v3): every class
  registered there with the getter's noun is compiled, never a ``register_dataset`` class nor a class of
  another registry (semantic/registries.py). Other spellings: ``MODELS.build(cfg)`` /
  ``MODELS[cfg.name](...)`` with ``@MODELS.register_module()``.
- ``getattr(importlib.import_module("src.brepnet.model"), cfg.name)``: a class of that module chosen by name
  (choices.py ``_getattr_choices``, registries.imported_module).
- ``if v_deduplicated:`` in a helper only compiled calls reach, each leaving the flag at its ``False``
  default (the eager ``inference()`` passes ``True``): not compiled (unreached_branches.py, "False argument").
Each shape in two spellings, with VALID twins."""
from __future__ import annotations

from tests.project_files import assert_one_file_agrees, finding_keys, write_project

PYPROJECT = "[project]\nname = 'demo'\n\n[tool.gnnlint]\n"

REGISTRY = """\
    class Registry:
        mapping = {"model_name_mapping": {}, "dataset_name_mapping": {}}

        @classmethod
        def register_model(cls, name):
            def wrap(func):
                cls.mapping["model_name_mapping"][name] = func
                return func
            return wrap

        @classmethod
        def register_dataset(cls, name):
            def wrap(func):
                cls.mapping["dataset_name_mapping"][name] = func
                return func
            return wrap

        @classmethod
        def get_model_class(cls, name):
            return cls.mapping["model_name_mapping"][name]


    registry = Registry()
"""

MODELS = """\
    import torch
    from torch import nn
    from pkg.common.registry import registry


    @registry.register_model("net")
    class Net(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.lin = nn.Linear(dim, dim)

        def forward(self, x, batch):
            n = int(batch.max()) + 1
            return self.lin(x)[:n]


    @registry.register_dataset("toy")
    class ToyNorm(nn.Module):
        def forward(self, x):
            n = int(x.max()) + 1
            return x[:n]
"""

TRAINER = """\
    import torch
    from pkg.common.registry import registry


    class Trainer:
        def __init__(self, config):
            self.config = config
            self.load_model()
            if config.get("compile", False):
                self.model = torch.compile(self.model)

        def load_model(self):
            name = self.config["model"].pop("name")
            self.model = registry.get_model_class(name)(**self.config["model"])

        def train(self, loader):
            for batch in loader:
                out = self.model(batch.x, batch.batch)
                out.sum().backward()
"""


def _keys(tmp_path, files: dict) -> list:
    return finding_keys(write_project(tmp_path, {"pyproject.toml": PYPROJECT, "pkg/__init__.py": "",
                                                 "pkg/common/__init__.py": "", "pkg/models/__init__.py": "",
                                                 "pkg/trainers/__init__.py": "", **files}))


def _gnn001(keys: list, name: str) -> list:
    return [k for k in keys if k.startswith(name) and k.endswith("GNN001")]


def test_a_class_registered_where_the_trainer_compiles_a_registry_lookup(tmp_path):
    keys = _keys(tmp_path, {"pkg/common/registry.py": REGISTRY, "pkg/models/net.py": MODELS,
                            "pkg/trainers/trainer.py": TRAINER})
    assert _gnn001(keys, "pkg/models/net.py") == ["pkg/models/net.py:13:13: GNN001"], keys
    assert_one_file_agrees(tmp_path, "pkg/models/net.py", nonempty=True)


def test_a_lookup_bound_to_a_name_in_a_script_compiling_it(tmp_path):
    # another spelling: the class first bound to a name, a function (not a method) compiling it
    trainer = """\
        import torch
        from pkg.common.registry import registry


        def main(cfg, loader):
            model_cls = registry.get_model_class(cfg.model.name)
            model = torch.compile(model_cls(**cfg.model.args))
            for batch in loader:
                model(batch.x, batch.batch).sum().backward()
    """
    keys = _keys(tmp_path, {"pkg/common/registry.py": REGISTRY, "pkg/models/net.py": MODELS,
                            "pkg/trainers/trainer.py": trainer})
    assert _gnn001(keys, "pkg/models/net.py") == ["pkg/models/net.py:13:13: GNN001"], keys


def test_a_registry_whose_lookup_is_never_compiled(tmp_path):
    # VALID: the trainer builds from the registry and never compiles
    trainer = TRAINER.replace("            if config.get(\"compile\", False):\n"
                              "                self.model = torch.compile(self.model)\n", "")
    keys = _keys(tmp_path, {"pkg/common/registry.py": REGISTRY, "pkg/models/net.py": MODELS,
                            "pkg/trainers/trainer.py": trainer})
    assert not _gnn001(keys, "pkg/models/net.py"), keys


def test_a_literal_name_picks_no_other_class(tmp_path):
    # VALID: `get_model_class("other")` names one class; the file registering it alone would know which
    trainer = TRAINER.replace('registry.get_model_class(name)', 'registry.get_model_class("other")')
    keys = _keys(tmp_path, {"pkg/common/registry.py": REGISTRY, "pkg/models/net.py": MODELS,
                            "pkg/trainers/trainer.py": trainer})
    assert not _gnn001(keys, "pkg/models/net.py"), keys


MM_REGISTRY = """\
    class Registry:
        def __init__(self, name):
            self.name = name
            self._modules = {}

        def register_module(self, name=None):
            def wrap(cls):
                self._modules[name or cls.__name__] = cls
                return cls
            return wrap

        def build(self, cfg):
            cfg = dict(cfg)
            return self._modules[cfg.pop("type")](**cfg)

        def __getitem__(self, name):
            return self._modules[name]


    MODELS = Registry("models")
    LOSSES = Registry("losses")
"""

MM_MODELS = """\
    import torch
    from torch import nn
    from pkg.common.registry import MODELS, LOSSES


    @MODELS.register_module()
    class GraphNet(nn.Module):
        def forward(self, x, batch):
            if batch.sum() > 0:
                return x
            return -x


    @LOSSES.register_module()
    class Loss(nn.Module):
        def forward(self, x, batch):
            if batch.sum() > 0:
                return x
            return -x
"""


def test_a_registry_object_building_from_a_config(tmp_path):
    # another registry: MODELS.build(cfg) with @MODELS.register_module(); LOSSES' classes are not compiled
    trainer = """\
        import torch
        from pkg.common.registry import MODELS


        def run(cfg, loader):
            model = torch.compile(MODELS.build(cfg.model))
            for batch in loader:
                model(batch.x, batch.batch)
    """
    keys = _keys(tmp_path, {"pkg/common/registry.py": MM_REGISTRY, "pkg/models/net.py": MM_MODELS,
                            "pkg/trainers/trainer.py": trainer})
    assert _gnn001(keys, "pkg/models/net.py") == ["pkg/models/net.py:9:12: GNN001"], keys


def test_a_registry_object_indexed_by_a_config_name(tmp_path):
    # another spelling: MODELS[cfg.name](...)
    trainer = """\
        import torch
        from pkg.common.registry import MODELS


        class Runner:
            def __init__(self, cfg):
                self.net = MODELS[cfg.name](**cfg.args)
                self.net = torch.compile(self.net)
    """
    keys = _keys(tmp_path, {"pkg/common/registry.py": MM_REGISTRY, "pkg/models/net.py": MM_MODELS,
                            "pkg/trainers/trainer.py": trainer})
    assert _gnn001(keys, "pkg/models/net.py") == ["pkg/models/net.py:9:12: GNN001"], keys


def test_another_registry_of_the_same_method_names_is_not_compiled(tmp_path):
    # VALID: the compiled model comes from LOSSES' twin MODELS; only LOSSES is looked up here, uncompiled
    trainer = """\
        import torch
        from pkg.common.registry import MODELS, LOSSES


        def run(cfg, model):
            loss = LOSSES.build(cfg.loss)
            model = torch.compile(model)
            return model, loss
    """
    keys = _keys(tmp_path, {"pkg/common/registry.py": MM_REGISTRY, "pkg/models/net.py": MM_MODELS,
                            "pkg/trainers/trainer.py": trainer})
    assert not _gnn001(keys, "pkg/models/net.py"), keys


# --- a class of a module imported by its dotted path ---------------------------------------------------
DYN_MODELS = """\
    import torch
    from torch import nn


    class AutoEncoderA(nn.Module):
        def decode(self, z, v_deduplicated=False):
            if v_deduplicated:
                if z.sum() > 0:
                    z = z * 2
            return z

        def forward(self, z, v_test=False):
            out = self.decode(z)
            if z.max() > 1:
                out = out + 1
            return out

        def inference(self, z):
            return self.decode(z, v_deduplicated=True)
"""

DYN_TRAIN = """\
    import importlib
    import torch


    class Lit:
        def __init__(self, conf):
            model_mod = importlib.import_module("pkg.models.auto")
            model_mod = getattr(model_mod, conf["model"]["name"])
            self.model = model_mod(conf["model"])
            if conf["trainer"]["compile"]:
                self.model = torch.compile(self.model, dynamic=True)
"""


def test_a_class_chosen_by_name_from_an_imported_module_path(tmp_path):
    keys = _keys(tmp_path, {"pkg/models/auto.py": DYN_MODELS, "pkg/trainers/train.py": DYN_TRAIN})
    # the forward's test is compiled; the deduplication branch only the eager inference() takes is not
    assert _gnn001(keys, "pkg/models/auto.py") == ["pkg/models/auto.py:14:12: GNN001"], keys


def test_a_module_path_in_a_local_name_and_dunder_import(tmp_path):
    # another spelling: `from importlib import import_module`, the module looked up in a function
    train = """\
        from importlib import import_module
        import torch


        def build(conf):
            mod = import_module("pkg.models.auto")
            cls = getattr(mod, conf.name)
            return torch.compile(cls())
    """
    keys = _keys(tmp_path, {"pkg/models/auto.py": DYN_MODELS, "pkg/trainers/train.py": train})
    assert _gnn001(keys, "pkg/models/auto.py") == ["pkg/models/auto.py:14:12: GNN001"], keys


def test_a_module_path_never_compiled(tmp_path):
    # VALID: the class is chosen by name but never compiled
    train = DYN_TRAIN.replace("            if conf[\"trainer\"][\"compile\"]:\n"
                              "                self.model = torch.compile(self.model, dynamic=True)\n", "")
    keys = _keys(tmp_path, {"pkg/models/auto.py": DYN_MODELS, "pkg/trainers/train.py": train})
    assert not _gnn001(keys, "pkg/models/auto.py"), keys


def test_a_flag_a_compiled_call_passes_true_keeps_the_branch(tmp_path):
    # INVALID twin of the False-argument shape: the compiled forward itself passes True
    models = DYN_MODELS.replace("out = self.decode(z)", "out = self.decode(z, v_deduplicated=True)") \
        .replace("\n        def inference(self, z):\n            return self.decode(z, v_deduplicated=True)\n", "")
    keys = _keys(tmp_path, {"pkg/models/auto.py": models, "pkg/trainers/train.py": DYN_TRAIN})
    assert _gnn001(keys, "pkg/models/auto.py") == ["pkg/models/auto.py:14:12: GNN001",
                                                   "pkg/models/auto.py:8:16: GNN001"], keys


# --- a method returning torch.compile(self) ------------------------------------------------------------
SELF_COMPILING = """\
    import torch as th
    from torch import nn


    def check_full():
        return th.__version__ > "2.4"


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 4)

        def get_compile(self, **kwargs):
            if check_full():
                return th.compile(self, **kwargs)
            self.lin = th.compile(self.lin, **kwargs)
            return self

        def forward(self, x, batch):
            n = int(batch.max()) + 1
            return self.lin(x)[:n]
"""


def test_a_method_returning_the_compiled_module_itself(tmp_path):
    lit = """\
        from pkg.models.net import Net


        class Lit:
            def __init__(self, compile):
                self.model = Net()
                if compile:
                    self.model = self.model.get_compile(dynamic=True)
    """
    keys = _keys(tmp_path, {"pkg/models/net.py": SELF_COMPILING, "pkg/trainers/lit.py": lit})
    assert _gnn001(keys, "pkg/models/net.py") == ["pkg/models/net.py:21:13: GNN001"], keys


def test_a_base_class_method_compiling_self_with_options(tmp_path):
    # another spelling: `torch.compile(self, mode=...)` kept in a name and returned, in one file
    model = SELF_COMPILING.replace("                return th.compile(self, **kwargs)\n",
                                   "                compiled = th.compile(self, mode=\"default\")\n"
                                   "                return compiled\n")
    keys = _keys(tmp_path, {"pkg/models/net.py": model})
    assert _gnn001(keys, "pkg/models/net.py") == ["pkg/models/net.py:22:13: GNN001"], keys


def test_compiling_self_in_a_plain_object_is_no_module(tmp_path):
    # VALID: a helper object (not an nn.Module) compiling itself has no forward
    model = SELF_COMPILING.replace("class Net(nn.Module):", "class Net:").replace("super().__init__()", "pass")
    keys = _keys(tmp_path, {"pkg/models/net.py": model})
    assert not _gnn001(keys, "pkg/models/net.py"), keys


# --- the right side of `not is_compiling() and ...` -------------------------------------------------------
GUARDED = """\
    import torch
    from torch import nn


    class Net(nn.Module):
        def forward(self, x, ids):
            if not torch.compiler.is_compiling() and ids.unique().shape[0] != ids.shape[0]:
                raise AssertionError("one generator per bus")
            ok = torch.compiler.is_compiling() or bool(ids.sum() > 0)
            bad = torch.compiler.is_compiling() and bool(ids.sum() > 0)
            return x


    model = torch.compile(Net())
"""


def test_the_right_side_of_a_short_circuit_on_is_compiling(tmp_path):
    # `not is_compiling() and X` / `is_compiling() or X`: X runs eagerly only; `is_compiling() and X` runs compiled
    keys = _keys(tmp_path, {"pkg/models/net.py": GUARDED})
    assert [k for k in keys if k.startswith("pkg/models/net.py")] == ["pkg/models/net.py:10:49: GNN001"], keys


def test_a_builder_in_the_registry_module_itself(tmp_path):
    # another file: `build_model(cfg)` next to `MODELS = Registry(...)` returns `MODELS.build(cfg)`; the
    # trainer compiles what the imported builder returns
    registry = MM_REGISTRY + "\n\n    def build_model(cfg):\n        return MODELS.build(cfg)\n"
    trainer = """\
        import torch
        from pkg.common.registry import build_model


        def run(cfg, loader):
            model = torch.compile(build_model(cfg.model))
            for batch in loader:
                model(batch.x, batch.batch)
    """
    keys = _keys(tmp_path, {"pkg/common/registry.py": registry, "pkg/models/net.py": MM_MODELS,
                            "pkg/trainers/trainer.py": trainer})
    assert _gnn001(keys, "pkg/models/net.py") == ["pkg/models/net.py:9:12: GNN001"], keys


# s14regnarrow: a registry lookup by a config name reaches the registered names the project's configs pick
THREE_MODELS = """\
    import torch
    from torch import nn
    from pkg.common.registry import registry


    @registry.register_model("painn")
    class PaiNN(nn.Module):
        def forward(self, x, batch):
            n = int(batch.max()) + 1
            return x[:n]


    @registry.register_model("schnet")
    class SchNet(nn.Module):
        def forward(self, x, batch):
            n = int(batch.max()) + 1
            return x[:n]


    @registry.register_model("gemnet_oc")
    class GemNetOC(nn.Module):
        def forward(self, x, batch):
            n = int(batch.max()) + 1
            return x[:n]
"""
ALL_THREE = sorted(["pkg/models/three.py:9:13: GNN001", "pkg/models/three.py:16:13: GNN001",
                    "pkg/models/three.py:23:13: GNN001"])


def _three(tmp_path, extra: dict, trainer: str = TRAINER) -> list:
    return _gnn001(_keys(tmp_path, {"pkg/common/registry.py": REGISTRY, "pkg/models/three.py": THREE_MODELS,
                                    "pkg/trainers/trainer.py": trainer, **extra}), "pkg/models/three.py")


def test_a_yaml_config_naming_one_of_three_registered_models(tmp_path):
    config = """\
        model:
          name: schnet   # the model this project trains
          hidden: 128
        optim:
          lr: 0.001
    """
    assert _three(tmp_path, {"configs/oc20/schnet.yml": config}) == ["pkg/models/three.py:16:13: GNN001"]
    assert_one_file_agrees(tmp_path, "pkg/models/three.py", nonempty=True)


def test_no_config_naming_a_registered_model_reaches_all_three(tmp_path):
    # no config at all, and a config naming none of them: every registered class is reachable
    assert _three(tmp_path, {}) == ALL_THREE
    assert _three(tmp_path, {"configs/base.yaml": "model:\n  name: ${oc.env:MODEL}\noptim: adam\n"}) == ALL_THREE


def test_a_json_config_and_a_toml_config_naming_two(tmp_path):
    # other formats: a JSON config (quoted values) and a TOML one (`key = "value"`)
    extra = {"conf/run.json": '{"model": {"name": "painn", "hidden": 64}, "epochs": 10}\n',
             "conf/sweep.toml": '[model]\nname = "gemnet_oc"\n'}
    assert _three(tmp_path, extra) == sorted(["pkg/models/three.py:9:13: GNN001",
                                           "pkg/models/three.py:23:13: GNN001"])


def test_argparse_choices_in_the_compiling_file_pick(tmp_path):
    # a command-line option instead of a config file: its choices / default literals pick
    trainer = """\
        import argparse
        import torch
        from pkg.common.registry import registry


        def main(loader):
            parser = argparse.ArgumentParser()
            parser.add_argument("--model", choices=["painn", "schnet"], default="painn")
            args = parser.parse_args()
            model = torch.compile(registry.get_model_class(args.model)())
            for batch in loader:
                model(batch.x, batch.batch).sum().backward()
    """
    assert _three(tmp_path, {}, trainer) == sorted(["pkg/models/three.py:9:13: GNN001",
                                                   "pkg/models/three.py:16:13: GNN001"])


def test_the_configs_next_to_the_trainer_win_over_a_vendored_librarys(tmp_path):
    # the project's experiments folder (configs next to its trainer) names one; the vendored
    # library's configs at the root name every model: the nearest configs answer
    extra = {"configs/all.yml": "models:\n  - painn\n  - schnet\n  - gemnet_oc\n",
             "pkg/experimental/__init__.py": "", "pkg/experimental/trainer.py": TRAINER,
             "pkg/experimental/configs/run.yml": "model:\n  name: gemnet_oc\n"}
    keys = _keys(tmp_path, {"pkg/common/registry.py": REGISTRY, "pkg/models/three.py": THREE_MODELS, **extra})
    assert _gnn001(keys, "pkg/models/three.py") == ["pkg/models/three.py:23:13: GNN001"], keys


def test_a_bare_register_module_is_picked_by_its_class_name(tmp_path):
    # mmengine spelling: `@MODELS.register_module()` registers the class's name; `type: GraphNet` picks it
    models = MM_MODELS.replace("@LOSSES.register_module()\n    class Loss", "@MODELS.register_module()\n    class Other")
    assert "class Other" in models
    trainer = """\
        import torch
        from pkg.common.registry import MODELS


        def run(cfg, loader):
            model = torch.compile(MODELS.build(cfg.model))
            for batch in loader:
                model(batch.x, batch.batch).sum().backward()
    """
    keys = _keys(tmp_path, {"pkg/common/registry.py": MM_REGISTRY, "pkg/models/mm.py": models,
                            "pkg/trainers/trainer.py": trainer, "configs/model.yaml": "model:\n  type: GraphNet\n"})
    flagged = [k for k in keys if k.startswith("pkg/models/mm.py")]
    assert flagged and all(":9:" in k for k in flagged), keys  # GraphNet's branch, not Other's (line 16)
