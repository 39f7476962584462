"""A runner that imports the user's submission by path and calls its
``update_params`` every step with the compiled model (a plugin interface):
the submission's per-step code drives compiled code, although no import line
names it (semantic/entry_points.py, gnnlint/entry_points.py)."""
from __future__ import annotations

from pathlib import Path

from tests.project_files import run, write_project

RUNNER = """\
    import importlib
    import torch


    def train_once(workload, update_params, prepare_for_eval, data_selection, model, queue):
        model = torch.compile(model)
        state = {}
        step = 0
        while step < 1000:
            batch = data_selection(workload, queue, model, step)
            state, model = update_params(workload=workload, current_param_container=model,
                                         batch=batch, global_step=step)
            if step % 100 == 0:
                state, model = prepare_for_eval(workload=workload, current_param_container=model,
                                                global_step=step)
            step += 1


    def score(path, workload, model, queue):
        submission = importlib.import_module(path)
        update_params = submission.update_params
        train_once(workload, update_params, submission.prepare_for_eval, submission.data_selection,
                   model, queue)
"""

SUBMISSION = """\
    import torch


    def data_selection(workload, queue, model, step):
        return next(queue)


    def update_params(workload, current_param_container, batch, global_step, rng=None):
        model = current_param_container
        loss = model(batch["x"]).mean()
        loss.backward()
        if global_step % 500 == 0:
            print(loss.item())
        return {}, model


    def prepare_for_eval(workload, current_param_container, global_step):
        model = current_param_container
        print(model.weight.sum().item())
        return {}, model
"""

PROJECT = {
    "runner.py": RUNNER,
    "algorithms/sgd/submission.py": SUBMISSION,
    # a JAX submission (no torch import) and one whose update_params takes other keywords
    "algorithms/jax_sgd/submission.py": """\
        import jax


        def update_params(workload, current_param_container, batch, global_step):
            loss = jax.numpy.sum(batch)
            print(loss.item())
            return {}, current_param_container
    """,
    "tools/other.py": """\
        import torch


        def update_params(params, grads, lr):
            for p, g in zip(params, grads):
                print(g.norm().item())
                p.sub_(lr * g)
    """,
}


def _check(root: Path) -> set[str]:
    out = run(["check", ".", "--no-cache", "--isolated", "--output-format", "concise"], root).output
    return {line for line in out.splitlines() if " GNN" in line}


def test_entry_point_called_every_step_with_the_compiled_model(tmp_path):
    root = write_project(tmp_path / "p", PROJECT)
    found = _check(root)
    # INVALID: the conditional per-step logging in update_params (called unconditionally every step)
    assert {line.split(" ")[0] for line in found} == {"algorithms/sgd/submission.py:13:15:"}, found
    line = found.pop()
    # the logging block runs on some steps: the message names its condition (step_guards.py)
    assert " GNN013 " in line and "on the steps where `global_step % 50" in line
    assert "in a training loop (runner.py, through `update_params`)" in line
    assert "compiled `model`" in line


def test_entry_point_of_a_runner_that_never_compiles(tmp_path):
    # VALID: the same runner without torch.compile: a per-step sync is no compile hazard
    root = write_project(tmp_path / "p", {**PROJECT, "runner.py": RUNNER.replace("model = torch.compile(model)",
                                                                          "model = model.cuda()")})
    assert not _check(root)


def test_entry_point_of_a_static_import_is_not_delivered_by_name(tmp_path):
    # VALID: a function taken from an ordinary module object is not a run-time import
    runner = RUNNER.replace("submission = importlib.import_module(path)", "import types\n"
                            "        submission = types.SimpleNamespace(**path)")
    root = write_project(tmp_path / "p", {**PROJECT, "runner.py": runner})
    assert not _check(root)
