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


# The guard travels with the call: a helper called per step only under a step-counter test
# syncs on those steps, in this file and in another (the `stepped` facts carry the test).
HELPER_SOURCE = """\
import torch
from debug import debug_check_gradients, report
def check_local(model):
    for p in model.parameters():
        print(p.grad.abs().max().item())
def nested(model):
    check_local(model)
def sometimes(loss):
    print(loss.item())
def every(loss):
    print(loss.item())
def train(model, loader, opt, pbar, ode):
    model = torch.compile(model)
    for N in pbar:
        for batch in loader:
            loss = model(batch).sum()
            loss.backward()
            opt.step()
            if ode and N % 500 == 0:
                nested(model)
                debug_check_gradients(model, loss)
                sometimes(loss)
                report(loss)
            every(loss)
            sometimes(loss)
    every(loss)
"""
DEBUG_SOURCE = """\
def debug_check_gradients(model, loss):
    print(loss.item())
def report(loss):
    print(loss.item())
"""
# a second training file calls `report` on every step: no one guard holds for it
OTHER_SOURCE = """\
import torch
from debug import report
def fit(model, loader, opt):
    model = torch.compile(model)
    for batch in loader:
        loss = model(batch).sum()
        loss.backward()
        opt.step()
        report(loss)
"""
GUARD = "on the steps where `ode and N % 500 == 0` holds, in a training loop"


def _project(tmp_path, other: bool):
    from tests.project_files import write_project

    files = {"train.py": HELPER_SOURCE, "debug.py": DEBUG_SOURCE}
    if other:
        files["other.py"] = OTHER_SOURCE
    return write_project(tmp_path, files)


def _lines(lines, name):
    return {int(line.split(":")[1]): line for line in lines if line.startswith(name + ":") and " GNN013 " in line}


def test_a_helper_called_only_under_a_step_guard_syncs_on_those_steps(tmp_path):
    from tests.project_files import assert_one_file_agrees

    root = _project(tmp_path, other=False)
    train = _lines(assert_one_file_agrees(root, "train.py", nonempty=True), "train.py")
    assert GUARD in train[5], train[5]  # through a per-step helper that calls it every time
    assert "on every batch of a training loop" in train[9], train[9]  # also called on every step
    assert "on every batch of a training loop" in train[11], train[11]
    debug = _lines(assert_one_file_agrees(root, "debug.py", nonempty=True, stdin=True), "debug.py")
    assert GUARD + " (train.py, through `debug_check_gradients`)" in debug[2], debug[2]
    assert GUARD + " (train.py, through `report`)" in debug[4], debug[4]


def test_another_file_calling_the_helper_every_step_drops_the_guard(tmp_path):
    from tests.project_files import assert_one_file_agrees

    root = _project(tmp_path, other=True)
    debug = _lines(assert_one_file_agrees(root, "debug.py", nonempty=True, stdin=True), "debug.py")
    assert GUARD in debug[2], debug[2]
    assert "every" in debug[4] and "on the steps where" not in debug[4], debug[4]
