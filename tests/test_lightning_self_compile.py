"""A LightningModule whose steps take PyG batches and that compiles its own
method or submodule in ``setup()`` (``self.encode = torch.compile(self.encode)``)
feeds the compiled code each batch's data: GNN007 without ``dynamic=``
(heldout3 ADiT ``vae_module.py:667-670``, ``ldm_module.py:682``). A compiled
submodule the class never calls (only ``.encode(...)`` on the wrapper, which
runs eagerly: bench/evidence/e22) is not fed."""
from __future__ import annotations

from tests.project_files import finding_lines, run, write_project

LIT = """\
    import torch
    from lightning import LightningModule
    from torch_geometric.data import Data


    class VAE(LightningModule):
        def __init__(self, encoder, autoencoder, compile: bool):
            super().__init__()
            self.encoder = encoder
            self.autoencoder = autoencoder
            self.quant_conv = torch.nn.Linear(4, 8)

        def encode(self, batch):
            return self.quant_conv(self.encoder(batch))

        def training_step(self, batch: STEP_ANNOTATION, batch_idx: int):
            z = self.autoencoder.encode(batch)
            return self.encode(batch).sum() + z.sum()

        def setup(self, stage):
            if self.hparams.compile and stage == "fit":
                self.encode = torch.compile(self.encode)
                self.quant_conv = torch.compile(self.quant_conv)
                self.autoencoder = torch.compile(self.autoencoder)
                self.encoder = torch.compile(self.encoder, dynamic=True)
"""


def _lines(tmp_path, annotation: str) -> list[str]:
    root = write_project(tmp_path / annotation.replace(".", "_"),
                         {"lit.py": LIT.replace("STEP_ANNOTATION", annotation)})
    out = run(["check", "--isolated", "--no-cache", "--select", "GNN007", "."], root).output
    return sorted(finding_lines(out))


def test_methods_and_submodules_compiled_in_setup_are_fed_the_steps_graph_batches(tmp_path):
    lines = _lines(tmp_path, "Data")
    assert [line.split(":")[1] for line in lines] == ["22", "23"], lines  # encode, quant_conv
    assert all("runs in the steps Lightning feeds; `VAE.training_step` takes `Data` (PyG graph batches)"
               in line for line in lines), lines


def test_steps_not_known_to_take_graph_batches_feed_nothing(tmp_path):
    assert _lines(tmp_path, "dict") == []
