"""A pass over a loader of its own whose loop reads a wrapped loader through
a name (``iterator = enumerate(valid_loader)``; ``if tty: iterator =
tqdm(iterator)``; ``for i, batch in iterator:``) is a pass, like ``for batch
in valid_loader:``: what it runs after its loop (averaging the losses with
``.cpu().item()``, a helper finalising metrics) runs once per evaluation, not
every step of the training loop calling it every ``val_freq`` steps. Its own
loop stays per-step code (it runs the compiled model per batch).

The same shape in another file (a prediction pass handed the compiled model,
called from the validation cycle) is a pass too. Its loop only calls a
method reached by attribute on the compiled wrapper
(``model_module.predict_particles(X)``, whose ``self.forward(X)`` is the
original module's): that runs eagerly
(bench/evidence/e26_wrapper_method_self_call.py), so the loop drives no
compiled code and its ``.cpu()`` copies are not GNN013 findings.

A per-step helper whose loop walks a name bound to something else
(``names = sorted(losses)``) is no pass: its lines stay per step."""
from __future__ import annotations

from tests.project_files import whole_tree_lines, write_project

PROJECT = {
    "pyproject.toml": "[project]\nname = 'demo'\n\n[tool.gnnlint]\n",
    "demo/__init__.py": "",
    "demo/model.py": """\
        import torch


        class Net(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = torch.nn.Linear(4, 4)

            def forward(self, x):
                return self.lin(x)

            def predict_particles(self, x):
                out = self.forward(x)
                return {"cls": out.argmax(-1)}
    """,
    "demo/inference.py": """\
        import sys

        import torch
        import tqdm


        def predict_one_batch(model, batch):
            model_module = model.module if hasattr(model, "module") else model
            ypred = model_module.predict_particles(batch.x)
            return ypred["cls"].cpu().numpy()


        @torch.no_grad()
        def run_predictions(model, loader):
            iterator = enumerate(loader)
            if sys.stdout.isatty():
                iterator = tqdm.tqdm(iterator, total=len(loader))
            for i, batch in iterator:
                predict_one_batch(model, batch)
    """,
    "demo/train.py": """\
        import sys

        import torch
        import tqdm

        from demo.inference import run_predictions
        from demo.model import Net


        def finalize(accum):
            out = {}
            for key, value in accum.items():
                out[key] = value.cpu().item()
            return out


        def train_step(model, optimizer, batch):
            loss = model(batch.x).sum()
            loss.backward()
            optimizer.step()
            losses = {"total": loss.detach()}
            names = sorted(losses)
            for name in names:
                losses[name] = losses[name].cpu().item()
            return losses


        def evaluate(model, valid_loader, step):
            eval_loss = 0.0
            iterator = enumerate(valid_loader)
            if sys.stdout.isatty():
                iterator = tqdm.tqdm(iterator, desc=f"step {step}")
            for ival, batch in iterator:
                loss = model(batch.x).sum()
                print(loss.item())
                eval_loss += loss
            total = eval_loss.cpu().item()
            return finalize({"total": total})


        def train_all_steps(model, optimizer, train_loader, valid_loader, test_loader, num_steps, val_freq):
            train_iterator = iter(train_loader)
            for step in range(num_steps):
                batch = next(train_iterator)
                train_step(model, optimizer, batch)
                if step % val_freq == 0:
                    evaluate(model, valid_loader, step)
                    run_predictions(model, test_loader)


        def run(train_loader, valid_loader, test_loader):
            model = torch.compile(Net())
            optimizer = torch.optim.Adam(model.parameters())
            train_all_steps(model, optimizer, train_loader, valid_loader, test_loader, 100, 10)
    """,
}


def _where(tmp_path, files):
    root = write_project(tmp_path / "proj", files)
    found = whole_tree_lines(root, "--select", "GNN013")
    return {(line.split(":")[0], int(line.split(":")[1])) for line in found}, found


def test_code_after_an_own_pass_loop_through_a_name_is_not_per_step(tmp_path):
    where, found = _where(tmp_path, PROJECT)
    assert ("demo/train.py", 24) in where, found  # train_step: per step (its loop walks names, no loader)
    assert ("demo/train.py", 35) in where, found  # evaluate's own loop runs the compiled model per batch
    assert ("demo/train.py", 37) not in where, found  # after evaluate's loop: once per evaluation
    assert ("demo/train.py", 13) not in where, found  # finalize, called after that loop: once per evaluation
    assert not any(path == "demo/inference.py" for path, _ in where), found  # a pass running eager methods only


def test_a_name_bound_to_something_else_is_no_pass(tmp_path):
    # the INVALID side: evaluate's loop walks a list it built, not a loader -- it is a
    # per-step helper of the training loop, so its lines after the loop stay per step
    files = dict(PROJECT)
    files["demo/train.py"] = PROJECT["demo/train.py"].replace(
        "iterator = enumerate(valid_loader)", "iterator = enumerate([next(iter(valid_loader))])")
    where, found = _where(tmp_path, files)
    assert ("demo/train.py", 37) in where, found
    assert ("demo/train.py", 13) in where, found


def test_the_prediction_pass_forward_call_runs_compiled(tmp_path):
    # contrast: calling the wrapper itself in the pass runs the compiled forward (e26): its loop
    # drives compiled code and the `.cpu()` per batch is reported
    files = dict(PROJECT)
    files["demo/inference.py"] = PROJECT["demo/inference.py"].replace(
        "ypred = model_module.predict_particles(batch.x)", "ypred = {\"cls\": model(batch.x).argmax(-1)}")
    where, found = _where(tmp_path, files)
    assert ("demo/inference.py", 10) in where, found
