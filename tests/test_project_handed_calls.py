"""A script that compiles its model and only hands it, every step, to a helper
of another project file (``for q, d in apply_step(net, p, v):``) runs the
compiled model through that call (semantic/handed_calls.py): the loop drives
compiled code. A helper whose name says it only stores or inspects the model
(``save_checkpoint(net, path)``) runs nothing."""
from __future__ import annotations

from tests.project_files import finding_keys

STEPS = """\
    import torch


    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(3, 3)

        def forward(self, p):
            return self.lin(p)


    def apply_step(net, p, v, dt):
        for _ in range(2):
            v = v + net(p) * dt
            p = p + v * dt
            yield p, v


    def save_checkpoint(net, path):
        torch.save(net.state_dict(), path)
"""

TRAIN = """\
    import torch
    from pkg.steps import Net, apply_step, save_checkpoint

    net = Net().cuda()
    opt = torch.optim.Adam(net.parameters())
    net = torch.compile(net)
    p0 = torch.randn(10, 3, device="cuda")
    for it in range(1000):
        loss = 0.0
        for q, d in apply_step(net, p0, torch.zeros_like(p0), 0.1):
            loss = loss + q.pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(loss.item())
"""


def _lines(tmp_path, train: str) -> set[str]:
    return set(finding_keys(tmp_path, {"pkg/__init__.py": "", "pkg/steps.py": STEPS, "train.py": train}))


def test_loop_handing_the_compiled_model_to_a_project_helper_drives_it(tmp_path):
    assert "train.py:15:11: GNN013" in _lines(tmp_path, TRAIN)  # loss.item()


def test_helper_that_only_saves_the_model_does_not_run_it(tmp_path):
    train = TRAIN.replace("apply_step(net, p0, torch.zeros_like(p0), 0.1)", "[(p0 * 2, p0)]") \
        .replace("        opt.step()\n", "        opt.step()\n        save_checkpoint(net, 'm.pt')\n")
    assert not any(line.startswith("train.py") for line in _lines(tmp_path, train))
