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
