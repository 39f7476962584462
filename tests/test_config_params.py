"""A config-built class's constructor arguments (heldout3 recall): a
LightningModule built from a Hydra config (``_target_: pkg.lit.VAE``) takes
its encoder as a constructor argument the config fills (``encoder:
${encoder}``, or a nested ``_target_``); the method it compiles in
``setup()`` (``self.encode = torch.compile(self.encode)``) runs that
encoder, so the classes of the ``encoder`` config group run compiled.
Also: a ``forward`` parameter every module call in the file passes a
Python value for (``self.training``) is not a tensor."""
from __future__ import annotations

from gnnlint import config_targets
from tests.project_files import finding_lines, run, write_project

ENCODER = """\
    import torch
    from torch_geometric.utils import to_dense_batch


    class Encoder(torch.nn.Module):
        def forward(self, batch):
            x, token_mask = to_dense_batch(batch.pos, batch.batch)
            return x[token_mask]


    class NotInConfigs(torch.nn.Module):
        def forward(self, x):
            return x[x > 0]
"""

LIT = """\
    import torch
    from lightning import LightningModule


    class VAE(LightningModule):
        def __init__(self, encoder: torch.nn.Module, head: torch.nn.Module, compile: bool):
            super().__init__()
            self.encoder = encoder
            self.head = head

        def encode(self, batch):
            return self.encoder(batch)

        def forward(self, batch):
            return self.head(self.encode(batch))

        def training_step(self, batch, batch_idx):
            return self.forward(batch).sum()

        def setup(self, stage):
            if self.hparams.compile and stage == "fit":
                self.encode = torch.compile(self.encode)
"""

HEAD = """\
    import torch


    class Head(torch.nn.Module):
        def forward(self, x):
            return x[x > 0]
"""


def _project(tmp_path, vae_yaml: str):
    return write_project(tmp_path / "proj", {
        "pyproject.toml": "[project]\nname = 'demo'\n",
        "configs/encoder/enc.yaml": "_target_: pkg.enc.Encoder\nd_model: 8\n",
        "configs/model/vae.yaml": vae_yaml,
        "pkg/__init__.py": "",
        "pkg/enc.py": ENCODER,
        "pkg/head.py": HEAD,
        "pkg/lit.py": LIT,
    })


VAE_YAML = """\
_target_: pkg.lit.VAE

encoder: ${encoder}
head:
  _target_: pkg.head.Head
compile: true
"""


def test_param_fills_reads_the_interpolated_group_and_the_nested_target(tmp_path):
    root = _project(tmp_path, VAE_YAML)
    lit = str(root / "pkg" / "lit.py")
    assert config_targets.param_fills(lit, "VAE", "encoder") == [("group", "encoder")]
    assert config_targets.param_fills(lit, "VAE", "head") == [("target", "pkg.head.Head")]
    assert config_targets.param_fills(lit, "VAE", "compile") == []  # a literal: no class
    assert config_targets.param_fills(lit, "Other", "encoder") == []  # no config builds it
    # the same class name in another module is not this class
    assert config_targets.param_fills(str(root / "pkg" / "enc.py"), "VAE", "encoder") == []


def test_the_method_compiled_in_setup_runs_the_config_chosen_encoder(tmp_path):
    root = _project(tmp_path, VAE_YAML)
    lines = finding_lines(run(["check", "--isolated", "--no-cache", "."], root).output)
    enc = sorted(line for line in lines if line.startswith("pkg/enc.py"))
    assert [line.split(" ")[1] for line in enc] == ["GNN009", "GNN008"], enc
    assert all("compiled forward of `Encoder` (when the config selects it, `configs/encoder/enc.yaml`)"
               in line for line in enc), enc
    # the head runs in the eager forward, not in the compiled `encode`; NotInConfigs is never built
    assert not any(line.startswith("pkg/head.py") for line in lines), lines
    assert not any(":12:" in line for line in enc), enc


def test_no_config_names_the_class_no_reach(tmp_path):
    root = _project(tmp_path, VAE_YAML.replace("pkg.lit.VAE", "pkg.other.VAE"))
    lines = finding_lines(run(["check", "--isolated", "--no-cache", "."], root).output)
    assert not any(line.startswith("pkg/enc.py") for line in lines), lines


def test_a_literal_config_value_builds_nothing(tmp_path):
    root = _project(tmp_path, VAE_YAML.replace("encoder: ${encoder}", "encoder: null"))
    lines = finding_lines(run(["check", "--isolated", "--no-cache", "."], root).output)
    assert not any(line.startswith("pkg/enc.py") for line in lines), lines


FLAGS = """\
    import torch


    class LabelEmbedder(torch.nn.Module):
        def __init__(self, p):
            super().__init__()
            self.p = p
            self.table = torch.nn.Embedding(3, 4)

        def forward(self, labels, train):
            if train and self.p > 0:
                labels = labels * 0
            return self.table(labels)


    class DiT(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = LabelEmbedder(0.1)

        def forward(self, x, y):
            return x + self.emb(y, ARG)


    model = torch.compile(DiT())
"""


def test_a_forward_flag_passed_self_training_is_not_a_tensor(tmp_path):
    for arg, expected in (("self.training", set()), ("not self.training", set()), ("True", set()),
                          ("y > 0", {"GNN001"})):
        root = write_project(tmp_path / arg.replace(" ", "_").replace(".", "_"),
                             {"m.py": FLAGS.replace("ARG", arg)})
        lines = finding_lines(run(["check", "--isolated", "--no-cache", "."], root).output)
        assert {line.split(" ")[1] for line in lines} == expected, (arg, lines)


# A LightningModule compiling the architecture it builds in __init__ from a
# Hydra partial (`self.g = arch()`; `self.g = torch.compile(self.g)`): the
# config picks `arch` in its defaults list (`- arch: gcn.yaml`, a
# `_partial_: true` config of the `arch` group) and names the module through
# its package (`_target_: pkg.model.Denoiser`, re-exported by
# `pkg/model/__init__.py`).
DENOISER = """\
    from typing import Callable

    import lightning.pytorch as pl
    import torch


    class Denoiser(pl.LightningModule):
        def __init__(self, arch: Callable[..., torch.nn.Module], use_torch_compile: bool = True):
            super().__init__()
            self.g = arch()
            if use_torch_compile:
                self.g = torch.compile(self.g)

        def forward(self, batch):
            return self.g(batch)
"""

ARCH = """\
    import torch


    class GCN(torch.nn.Module):
        def forward(self, batch):
            return batch.pos[batch.mask]


    class Unused(torch.nn.Module):
        def forward(self, batch):
            return batch.pos[batch.mask]
"""


def _partial_project(tmp_path, denoiser_yaml: str, init: str = "from .denoiser import Denoiser\n"):
    return write_project(tmp_path / "proj", {
        "pyproject.toml": "[project]\nname = 'demo'\n",
        "pkg/__init__.py": "",
        "pkg/model/__init__.py": init,
        "pkg/model/denoiser.py": DENOISER,
        "pkg/model/arch/__init__.py": "from .gcn import GCN\n",
        "pkg/model/arch/gcn.py": ARCH,
        "pkg/hydra_config/model/arch/gcn.yaml": "_target_: pkg.model.arch.GCN\n_partial_: true\nhidden: 8\n",
        "pkg/hydra_config/model/denoiser.yaml": denoiser_yaml,
    })


DENOISER_YAML = """\
defaults:
  - arch: gcn.yaml
  - _self_

use_torch_compile: true
_target_: pkg.model.Denoiser
"""


def test_a_defaults_list_choice_fills_the_parameter_and_a_package_names_the_class(tmp_path):
    root = _partial_project(tmp_path, DENOISER_YAML)
    den = str(root / "pkg" / "model" / "denoiser.py")
    assert config_targets.param_fills(den, "Denoiser", "arch") == [("group", "arch")]
    assert config_targets.param_fills(den, "Denoiser", "use_torch_compile") == []


def test_defaults_list_syntaxes_name_the_group_that_fills_the_parameter():
    text = ("defaults:\n  - /model/arch: gcn\n  - override enc: x\n  - encoders@head: mlp\n"
            "  - off: null\n  - _self_\nname: 1\n")
    assert [config_targets._defaults_choice(text, p) for p in ("arch", "enc", "head", "encoders", "off", "name")] \
        == ["arch", "enc", "encoders", None, None, None]
    assert config_targets._defaults_choice("model:\n  - arch: gcn\n", "arch") is None  # not the defaults list


def test_the_self_compiled_partial_architecture_runs_compiled(tmp_path):
    root = _partial_project(tmp_path, DENOISER_YAML)
    lines = finding_lines(run(["check", "--isolated", "--no-cache", "."], root).output)
    gcn = [line for line in lines if line.startswith("pkg/model/arch/gcn.py")]
    assert [line.split(" ")[1] for line in gcn] == ["GNN008"], lines
    assert ":6:" in gcn[0] and "compiled forward of `GCN` (when the config selects it" in gcn[0], gcn


def test_a_null_defaults_choice_or_a_package_not_exporting_the_class_builds_nothing(tmp_path):
    for yaml, init in ((DENOISER_YAML.replace("arch: gcn.yaml", "arch: null"), "from .denoiser import Denoiser\n"),
                       (DENOISER_YAML, "")):
        root = _partial_project(tmp_path / str(len(init)) / yaml[20:24], yaml, init)
        lines = finding_lines(run(["check", "--isolated", "--no-cache", "."], root).output)
        assert not any(line.startswith("pkg/model/arch/gcn.py") for line in lines), lines


# s11reachA: a config that extends another of its group through `defaults:`
# (`model/vae_big.yaml`: `defaults: [- vae]` + `head: {_target_: ...}`) builds
# the class the extended config's top-level `_target_` names (Hydra merges it).
BIG_YAML = """\
defaults:
  - vae
  - _self_

head:
  _target_: pkg.head.Head
"""
BASE_YAML = "_target_: pkg.lit.VAE\ncompile: true\n"


def test_param_fills_follows_the_defaults_list_to_the_extended_config(tmp_path):
    root = _project(tmp_path, BASE_YAML)
    (root / "configs" / "model" / "vae_big.yaml").write_text(BIG_YAML)
    lit = str(root / "pkg" / "lit.py")
    assert config_targets.param_fills(lit, "VAE", "head") == [("target", "pkg.head.Head")]
    assert config_targets.param_fills(lit, "Other", "head") == []  # the extended config builds VAE only


def test_an_own_top_level_target_is_not_the_extended_configs(tmp_path):
    root = _project(tmp_path, BASE_YAML)
    # it names its own class: what it fills is that class's, not VAE's
    (root / "configs" / "model" / "vae_big.yaml").write_text("_target_: pkg.other.Other\n" + BIG_YAML)
    assert config_targets.param_fills(str(root / "pkg" / "lit.py"), "VAE", "head") == []


def test_a_group_choice_in_defaults_is_no_extended_config(tmp_path):
    root = _project(tmp_path, BASE_YAML)
    # `- encoder: enc` picks an option of another group; `vae` is not named
    (root / "configs" / "model" / "vae_big.yaml").write_text(BIG_YAML.replace("  - vae\n", "  - encoder: enc\n"))
    assert config_targets.param_fills(str(root / "pkg" / "lit.py"), "VAE", "head") == []
