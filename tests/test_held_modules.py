"""A compiled LightningModule another module holds (s11reachA, heldout3's
latent-diffusion module compiling its pretrained autoencoder in ``setup``):
its forward runs compiled, its step methods do not -- Lightning's Trainer runs
the owner's steps. A LightningModule compiled on its own keeps its compiled
steps (lightning.pytorch.utilities.compile.from_compiled)."""
from __future__ import annotations

from tests.project_files import finding_lines, run, write_project

VAE = """\
    import torch
    from lightning import LightningModule
    from torch_geometric.nn import global_add_pool


    class VAE(LightningModule):
        def forward(self, batch):
            return global_add_pool(batch.x, batch.batch)

        def training_step(self, batch, batch_idx):
            loss = self(batch).sum()
            self.log("loss", loss.item())
            return loss
"""

LDM = """\
    import torch
    from lightning import LightningModule
    from pkg.vae import VAE


    class LDM(LightningModule):
        def __init__(self, path):
            super().__init__()
            self.autoencoder = VAE.load_from_checkpoint(path)

        def setup(self, stage):
            self.autoencoder = torch.compile(self.autoencoder)

        def training_step(self, batch, batch_idx):
            return self.autoencoder(batch).sum()
"""

ALONE = """\
    import torch
    from lightning import Trainer
    from pkg.vae import VAE

    model = torch.compile(VAE())
    Trainer().fit(model)
"""


def _lines(tmp_path, files: dict) -> set[str]:
    root = write_project(tmp_path / "proj", {"pkg/__init__.py": "", "pkg/vae.py": VAE, **files})
    return finding_lines(run(["check", "--isolated", "--no-cache", "--output-format", "concise", "."], root).output)


def test_a_held_lightning_module_runs_its_forward_compiled_not_its_steps(tmp_path):
    lines = _lines(tmp_path, {"pkg/ldm.py": LDM})
    vae = sorted(line for line in lines if line.startswith("pkg/vae.py"))
    assert [line.split(":")[1] for line in vae] == ["8"], vae  # the pooling in forward; not the step's .item()


def test_a_lightning_module_compiled_alone_compiles_its_steps(tmp_path):
    lines = _lines(tmp_path, {"train.py": ALONE})
    vae = sorted(line for line in lines if line.startswith("pkg/vae.py"))
    assert [line.split(":")[1] for line in vae] == ["12", "8"], vae


def test_a_held_local_lightning_module(tmp_path):
    local = VAE + LDM.replace("from pkg.vae import VAE\n", "").replace("import torch\n    from lightning import LightningModule\n", "", 1)
    lines = _lines(tmp_path, {"pkg/ldm.py": local.replace("VAE.load_from_checkpoint(path)", "VAE()")})
    ldm = sorted(line for line in lines if line.startswith("pkg/ldm.py"))
    assert [line.split(":")[1] for line in ldm] == ["8"], ldm
