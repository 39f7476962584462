"""GNN013 messages true to the code: how often a per-step sync runs, and in which
loop (semantic/step_guards.py, semantic/steps.py)."""
from gnnlint.config import Settings
from gnnlint.engine import lint_source


def _messages(tmp_path, source: str, name: str = "train.py") -> dict[int, str]:
    path = tmp_path / name
    path.write_text(source)
    return {f.line: f.message for f in lint_source(source, str(path), Settings(), use_cache=False)
            if f.code == "GNN013"}


FIRST_EPOCH = """\
import torch
def first_pass_check(loss):
    print(loss.item())
def train(model, loader, opt, epochs, datasets):
    model = torch.compile(model)
    for epoch in range(epochs):
        for batch in loader:
            loss = model(batch).sum()
            loss.backward()
            opt.step()
            if epoch == 0:
                print(float(loss))
                first_pass_check(loss)
            if batch is None:
                print(float(loss))
    for name in datasets:
        for batch in loader:
            loss = model(batch).sum()
            loss.backward()
            opt.step()
            if name == "qm9":
                print(float(loss))
"""


def test_a_sync_on_the_first_epoch_only_says_so(tmp_path):
    """`if epoch == 0:` in the batch loop compares the counter of the loop around it:
    a sync on every step of the first pass, not on every step (also in a helper
    called only there)."""
    messages = _messages(tmp_path, FIRST_EPOCH)
    assert "on the steps where `epoch == 0` holds, in a training loop" in messages[12], messages[12]
    assert "on the steps where `epoch == 0` holds, in a training loop" in messages[3], messages[3]
    assert "on every batch of a training loop" in messages[15], messages[15]  # not a counter
    assert "on every batch of a training loop" in messages[22], messages[22]  # not a counter's loop


LIGHTNING_SHARED_STEP = """\
import torch
import lightning
class Lit(lightning.LightningModule):
    def __init__(self, model):
        super().__init__()
        self.model = torch.compile(model)
    def shared_step(self, batch):
        out = self.model(batch)
        self.log("n", float((out > 0).sum().item()))
        return out.sum()
    def metrics(self, out):
        return out.cpu()
    def training_step(self, batch, batch_idx):
        return self.shared_step(batch)
    def validation_step(self, batch, batch_idx):
        self.metrics(self.model(batch))
        return self.shared_step(batch)
"""


def test_a_helper_of_training_step_runs_in_training(tmp_path):
    """`shared_step`, called by `training_step` (and `validation_step`), runs on every
    training step: not "an evaluation loop"; a helper only `validation_step` calls is."""
    messages = _messages(tmp_path, LIGHTNING_SHARED_STEP, "lit.py")
    assert "every step of a training loop" in messages[9], messages[9]
    assert "every step of an evaluation loop" in messages[12], messages[12]


EARLY_EXIT = """\
import torch
class Cb:
    def log_now(self, step):
        return step % 10 == 0
    def on_batch(self, loss, step):
        if not self.log_now(step):
            return
        print(loss.item())
def train(model, loader, opt, log_every):
    cb = Cb()
    model = torch.compile(model)
    for step, batch in enumerate(loader):
        loss = model(batch).sum()
        loss.backward()
        opt.step()
        cb.on_batch(loss, step)
        if step % log_every != 0:
            continue
        print(float(loss))
    for step, batch in enumerate(loader):
        loss = model(batch).sum()
        loss.backward()
        opt.step()
        if batch is None:
            continue
        print(float(loss))
"""


def test_an_early_exit_on_a_step_test_is_a_guard(tmp_path):
    """`if step % N != 0: continue` / `if not self.log_now(step): return` before the sync:
    it runs on the steps where the test fails (said with the test negated)."""
    messages = _messages(tmp_path, EARLY_EXIT)
    assert "on the steps where `self.log_now(step)` holds, in a training loop" in messages[8], messages[8]
    assert "on the steps where `step % log_every == 0` holds, in a training loop" in messages[19], messages[19]
    assert "on every batch of a training loop" in messages[26], messages[26]  # not a step test


VAL_AFTER_TRAIN = """\
import torch
def run(model, train_loader, val_loader, opt, epochs):
    step = torch.compile(model)
    for epoch in range(epochs):
        for batch in train_loader:
            loss = step(batch).sum()
            loss.backward()
            opt.step()
        scores = []
        with torch.no_grad():
            for batch in val_loader:
                scores.append(step(batch).cpu())
            for batch in val_loader:
                for t in range(3):
                    scores.append(step(batch[t]).cpu())
"""


def test_a_validation_loop_beside_the_training_loop_is_evaluation(tmp_path):
    # the epoch loop's body trains (its inner loop steps the optimizer), but the validation
    # loops and the timestep loop inside one are not part of a training step (labelled-g tgn)
    messages = _messages(tmp_path, VAL_AFTER_TRAIN)
    assert set(messages) == {12, 15}, messages
    assert "evaluation loop" in messages[12] and not any("training" in m for m in messages.values()), messages
