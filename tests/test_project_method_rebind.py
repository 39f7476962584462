"""A bound method compiled and assigned back onto its object
(``model.step = torch.compile(model.step)``, semantic/method_refs.py): every
``model.step(...)`` runs compiled code -- a loop calling it drives compiled
code, and so does the rollout loop of a helper in another file the object is
handed to -- while ``model(x)`` still runs the eager forward."""
from __future__ import annotations

from tests.project_files import finding_keys, run, write_project

DYN = """\
    import torch


    class Dyn(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(3, 3)

        def step(self, p, edge_index):
            return p + self.lin(p)[edge_index[0]].sum()


    def rollout(model, p, edge_index, steps):
        out = [p]
        for i in range(steps):
            p = model.step(p, edge_index)
            out.append(p.detach().cpu())
        return out
"""

TRAIN = """\
    import torch
    from pkg.dyn import Dyn, rollout


    def main():
        model = Dyn().cuda()
        model.step = torch.compile(model.step)
        opt = torch.optim.Adam(model.parameters())
        p0 = torch.randn(10, 3, device="cuda")
        ei = torch.randint(10, (2, 30), device="cuda")
        for step in range(1000):
            p_seq = rollout(model, p0, ei, 10)
            loss = p_seq[-1].sum() + model.step(p0, ei).sum()
            if not torch.isfinite(loss):
                continue
            loss.backward()
            opt.step()
            print(loss.item())
"""


def _lines(tmp_path, train: str) -> set[str]:
    return set(finding_keys(tmp_path, {"pkg/__init__.py": "", "pkg/dyn.py": DYN, "train.py": train}))


def test_loop_calling_a_compiled_method_drives_compiled_code(tmp_path):
    lines = _lines(tmp_path, TRAIN)
    assert "train.py:14:12: GNN013" in lines  # if not torch.isfinite(loss)
    assert "train.py:18:15: GNN013" in lines  # loss.item()
    assert "pkg/dyn.py:17:20: GNN013" in lines  # the helper's rollout loop runs the handed model.step


def test_message_names_the_compiled_method(tmp_path):
    root = write_project(tmp_path, {"pkg/__init__.py": "", "pkg/dyn.py": DYN, "train.py": TRAIN})
    out = run(["check", "train.py", "--no-cache"], root).output
    assert "runs compiled `model.step`" in out
    # the helper's rollout loop is part of the training step that calls it, not an evaluation loop
    helper = run(["check", ".", "--no-cache"], root).output
    assert "pkg/dyn.py:17:20: GNN013 warning: `.cpu()` syncs the device every step of a training loop " \
           "(train.py, through `rollout`) that runs compiled `model.step`" in helper


def test_eager_forward_of_an_object_with_a_compiled_method_is_not_compiled(tmp_path):
    # only model(x) runs in the loop: the forward is eager, the compiled step never runs there
    train = TRAIN.replace("p_seq = rollout(model, p0, ei, 10)", "p_seq = [model(p0)]") \
        .replace(" + model.step(p0, ei).sum()", "")
    lines = _lines(tmp_path, train)
    assert not any(line.startswith("train.py") for line in lines), lines


def test_a_compiled_attribute_of_another_name_is_not_the_method(tmp_path):
    # `model.step = torch.compile(other.step)`: not this object's method re-bound in place
    train = TRAIN.replace("model.step = torch.compile(model.step)", "model.step = torch.compile(Dyn().step)") \
        .replace("p_seq = rollout(model, p0, ei, 10)", "p_seq = [model(p0)]")
    lines = _lines(tmp_path, train)
    assert not any(line.startswith("pkg/dyn.py") for line in lines), lines
