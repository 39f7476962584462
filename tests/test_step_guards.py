"""GNN013 on conditional logging: a sync under `if step % N == 0:` in a hot loop
costs a sync on those steps, not on every one, and the message says which
(semantic/step_guards.py)."""
from gnnlint.config import Settings
from gnnlint.engine import lint_source

SOURCE = """\
import torch
def train(model, loader, opt, cfg):
    model = torch.compile(model)
    for step, batch in enumerate(loader):
        loss = model(batch).sum()
        loss.backward()
        opt.step()
        if step % 100 == 0:
            print(loss.item())
        else:
            last = loss.item()
        if cfg.verbose:
            print(float(loss))
        if global_step <= 10 or loss_is_logged(step):
            print(loss.detach().cpu())
        if self.metrics_logger is not None:
            logged = loss.item()
"""


def _messages(tmp_path) -> dict[int, str]:
    path = tmp_path / "train.py"
    path.write_text(SOURCE)
    return {f.line: f.message for f in lint_source(SOURCE, str(path), Settings(), use_cache=False)
            if f.code == "GNN013"}


def test_a_sync_on_logging_steps_names_the_condition(tmp_path):
    messages = _messages(tmp_path)
    assert "on the steps where `step % 100 == 0` holds, in a training loop" in messages[9]
    assert "on the steps where `global_step <= 10 or loss_is_logged(step)` holds" in messages[15]


def test_other_branches_and_other_conditions_keep_every_step(tmp_path):
    messages = _messages(tmp_path)
    assert "on every batch of a training loop" in messages[11]  # the `else:` runs on the other steps
    assert "on every batch of a training loop" in messages[13]  # not a step counter: a setting
    # a logger's presence is a setting too, however the name reads ("log")
    assert "on every batch of a training loop" in messages[17], messages[17]
