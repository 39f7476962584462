"""E20: what runs compiled when a compiled LightningModule is given to `Trainer.fit`?
(GNN001/GNN008/GNN009 regions; real-code labels ProteinWorkshop base.py:166/389/390, features/*.py)

Source (lightning `src/lightning/pytorch/utilities/compile.py`, `from_compiled`, since PR #15957,
Dec 2022, i.e. every Lightning 2.x): `Trainer.fit/validate/test/predict` call `_maybe_unwrap_optimized`,
which unwraps the `OptimizedModule` and re-wraps `forward`, `training_step`, `validation_step`,
`test_step` and `predict_step` of the original module in the compile's `dynamo_ctx` (same options,
so `dynamic=` carries over). Every other hook -- `on_after_batch_transfer`, `backward`, the batch
hooks, `configure_optimizers` -- is called on the unwrapped module: eager. The Lightning docs say the
same ("When you pass the LightningModule to the Trainer, it will automatically also compile the
`*_step()` methods", docs/pytorch/stable/advanced/compile).

Measured here: each hook records `torch.compiler.is_compiling()` (True only while dynamo traces it).
A helper called from `training_step` (also from inside a try/except, as ProteinWorkshop's
`_do_step_catch_oom`) is traced, and its boolean mask is a graph break; a submodule whose forward only
`on_after_batch_transfer` calls runs eagerly, and so do `backward` and `on_train_batch_end`.

Run: PYTHONPATH=<dir with lightning, lightning-utilities, torchmetrics> python bench/evidence/e20_lightning_compiled_hooks.py
(CPU, 3 training + 2 validation steps per variant). Output: out/e20_lightning_compiled_hooks.txt
"""
import collections

import lightning as L
import torch
from torch._dynamo.utils import counters

seen = collections.defaultdict(set)


def note(where):
    seen[where].add(torch.compiler.is_compiling())


def helper_called_from_step(x):  # like ProteinWorkshop's get_labels / log_metrics
    note("helper called from training_step")
    return x[x > 0]  # boolean mask: data-dependent shape


class Featuriser(torch.nn.Module):  # a submodule only the eager hook calls
    def forward(self, x):
        note("submodule forward called from on_after_batch_transfer")
        return x + 1


class Lit(L.LightningModule):
    def __init__(self, in_try):
        super().__init__()
        self.lin = torch.nn.Linear(4, 1)
        self.featuriser = Featuriser()
        self.in_try = in_try

    def forward(self, x):
        note("forward")
        return self.lin(x)

    def on_after_batch_transfer(self, batch, dataloader_idx):
        note("on_after_batch_transfer")
        return self.featuriser(batch)

    def training_step(self, batch, batch_idx):
        note("training_step")
        if self.in_try:
            try:
                picked = helper_called_from_step(batch)
            except Exception:
                picked = batch
        else:
            picked = helper_called_from_step(batch)
        return self(batch).sum() + picked.sum()

    def validation_step(self, batch, batch_idx):
        note("validation_step")
        return self(batch).sum()

    def backward(self, loss, *args, **kwargs):
        note("backward (LightningModule hook)")
        loss.backward(*args, **kwargs)

    def on_train_batch_end(self, outputs, batch, batch_idx):
        note("on_train_batch_end")

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


print("torch", torch.__version__, "lightning", L.__version__)
for in_try in (False, True):
    seen.clear()
    counters.clear()
    torch._dynamo.reset()
    data = torch.utils.data.DataLoader(torch.randn(12, 4), batch_size=4)
    model = torch.compile(Lit(in_try))
    trainer = L.Trainer(max_steps=3, limit_val_batches=2, accelerator="cpu", logger=False,
                        enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False)
    trainer.fit(model, train_dataloaders=data, val_dataloaders=data)
    print(f"\n-- helper called {'inside try/except' if in_try else 'directly'} from training_step")
    for where in sorted(seen):
        print(f"{where:55s} traced by dynamo: {True in seen[where]!s:5}  ran eagerly: {False in seen[where]}")
    breaks = {k.split(chr(10))[0]: v for k, v in counters["graph_break"].items()}
    print("graph breaks:", breaks)
