"""s12 loops: a timestep loop inside the training batch loop (heldout14 Waymo-GNN).

- ``frames = batch_dict["batch"]``, then ``frames[t] = frames[t].to(device)`` for every item, then
  ``for t, g in enumerate(frames):`` running the compiled model per timestep: the items were replaced
  by device copies, so reading them is a device sync (semantic/devices.py ``_items_moved``), not the
  loader's host batch; a ``.to("cpu")`` re-store keeps them host copies.
- that inner loop is part of the training step the outer iteration takes (it steps the optimizer after
  the rollout): its syncs are "of a training loop", not of an evaluation loop (semantic/steps.py
  ``_inside_training_iteration``); an inner loop under an outer loop that never trains is an inference loop.
Each VALID case has an INVALID twin that keeps the finding."""
from __future__ import annotations

from tests.project_files import finding_lines, run, write_project

TRAIN = """\
    import torch


    def train_epoch(model, loader, optimizer, device):
        for batch_idx, batch_dict in enumerate(loader):
            frames = batch_dict["batch"]
            for t in range(len(frames)):
                frames[t] = frames[t].to(MOVE)
            optimizer.zero_grad()
            total = torch.zeros((), device=device)
            for t, g in enumerate(frames):
                if torch.isnan(g.x).any():
                    continue
                out = model(g.x, g.edge_index)
                total = total + ((out - g.y) ** 2).mean()
            total.backward()
            optimizer.step()


    def main(loader, device):
        model = torch.compile(torch.nn.Linear(2, 2))
        opt = torch.optim.Adam(model.parameters())
        train_epoch(model, loader, opt, device)
"""

# another spelling: a method, the sequence an attribute of the batch, a `.cuda()` re-store, a while loop
ROLLOUT = """\
    import torch


    class Trainer:
        def __init__(self, net, optimizer):
            self.net = torch.compile(net)
            self.optimizer = optimizer

        def fit(self, loader):
            for batch in loader:
                steps = batch.steps
                for i in range(len(steps)):
                    steps[i] = steps[i].MOVE
                self.optimizer.zero_grad()
                loss = 0.0
                k = 0
                while k < len(steps):
                    frame = steps[k]
                    if not torch.any(frame.mask):
                        k += 1
                        continue
                    loss = loss + self.net(frame.x).mean()
                    k += 1
                loss.backward()
                self.optimizer.step()
"""


def _lines(tmp_path, name: str, text: str) -> list:
    root = write_project(tmp_path, {
        "pyproject.toml": "[project]\nname = 'demo'\n\n[tool.gnnlint]\n",
        "demo/__init__.py": "",
        f"demo/{name}": text,
    })
    return sorted(finding_lines(run(["check", ".", "--no-cache", "--output-format", "full"], root).output))


def _at(found: list, prefix: str) -> list:
    return [line for line in found if line.startswith(prefix)]


def test_items_moved_in_place_are_device_values_in_the_timestep_loop(tmp_path):
    found = _lines(tmp_path, "train.py", TRAIN.replace("MOVE", "device, non_blocking=True"))
    hits = _at(found, "demo/train.py:12:")
    assert hits and "GNN013" in hits[0] and "training loop" in hits[0], found


def test_items_copied_to_the_cpu_stay_host_values(tmp_path):
    found = _lines(tmp_path, "train.py", TRAIN.replace("MOVE", '"cpu"'))
    assert not _at(found, "demo/train.py:12:"), found


def test_a_while_rollout_in_a_method_over_an_attribute_sequence(tmp_path):
    found = _lines(tmp_path, "trainer.py", ROLLOUT.replace("MOVE", "cuda()"))
    hits = _at(found, "demo/trainer.py:19:")
    assert hits and "GNN013" in hits[0] and "training loop" in hits[0], found


def test_a_while_rollout_over_host_copies_reads_nothing_from_the_device(tmp_path):
    found = _lines(tmp_path, "trainer.py", ROLLOUT.replace("MOVE", 'to("cpu")'))
    assert not _at(found, "demo/trainer.py:19:"), found


def test_an_inner_loop_under_an_outer_loop_that_never_trains_stays_evaluation(tmp_path):
    evaluate = TRAIN.replace("MOVE", "device").replace("            total.backward()\n", "") \
        .replace("            optimizer.step()\n", "")
    hits = _at(_lines(tmp_path, "train.py", evaluate), "demo/train.py:12:")
    assert hits and "inference loop" in hits[0], hits


# heldout5 mlcg: `_Simulation.simulate` loops `for t in range(n_timesteps)` calling `self.timestep(data, forces)`,
# `raise NotImplementedError` in the base, whose class compiles its own `self.model` (`compile_model`): the
# overrides take each step with the compiled model, so the loop is a step loop (hot_loops.py `_abstract_step`)
# and its per-step helpers' syncs are per-step; `self.coords = torch.zeros(...)` buffers stay on the host.
SIM = """\
    import torch


    class Simulation:
        def __init__(self, model, n_steps, every):
            self.model = model
            self.n_steps = n_steps
            self.every = every

        def compile_model(self):
            self.model = torch.compile(self.model)

        def forces(self, data):
            return self.model(data)

        def timestep(self, data, forces):
            raise NotImplementedError

        def save(self, data, t):
            self.coords[t // self.every] = data.detach()
            if torch.isnan(data).any():
                raise RuntimeError("blew up")

        def export(self):
            return self.coords.cpu().numpy()

        def simulate(self, data):
            self.coords = torch.zeros(BUFFER)
            self.compile_model()
            forces = self.forces(data)
            for t in range(self.n_steps):
                data, forces = self.timestep(data, forces)
                if t % self.every == 0:
                    self.save(data, t)
                    self.export()
"""

# another spelling: a `while` loop, an abstract `step` with a docstring, the override in another file
AGENT = """\
    import torch


    class Runner:
        def __init__(self, policy):
            self.policy = torch.compile(policy)

        def step(self, obs):
            \"\"\"Take one step; subclasses decide how.\"\"\"

        def run(self, env):
            obs, done = env.reset(), False
            while not done:
                obs, done = self.step(obs)
"""
GREEDY = """\
    import torch
    from demo.runner import Runner


    class Greedy(Runner):
        def step(self, obs):
            act = self.policy(obs).argmax()
            return obs, bool(act.item() == 0)
"""


def test_a_loop_calling_an_abstract_step_of_a_class_compiling_its_model_is_a_step_loop(tmp_path):
    found = _lines(tmp_path, "sim.py", SIM.replace("BUFFER", "self.n_steps, 3"))
    hits = _at(found, "demo/sim.py:21:")
    assert hits and "GNN013" in hits[0] and "inference loop" in hits[0], found
    assert not _at(found, "demo/sim.py:25:"), found  # `self.coords` is a host buffer: its copy waits for nothing


def test_a_device_buffer_copied_per_step_is_a_sync(tmp_path):
    found = _lines(tmp_path, "sim.py", SIM.replace("BUFFER", "self.n_steps, 3, device=data.device"))
    assert _at(found, "demo/sim.py:25:"), found


def test_an_abstract_step_of_a_class_compiling_nothing_runs_no_compiled_step(tmp_path):
    found = _lines(tmp_path, "sim.py", SIM.replace("BUFFER", "self.n_steps, 3")
                   .replace("self.model = torch.compile(self.model)", "self.model = self.model.eval()"))
    assert not _at(found, "demo/sim.py:21:"), found


def test_an_override_in_another_file_of_an_abstract_while_step_runs_per_step(tmp_path):
    root = write_project(tmp_path, {
        "pyproject.toml": "[project]\nname = 'demo'\n\n[tool.gnnlint]\n",
        "demo/__init__.py": "",
        "demo/runner.py": AGENT,
        "demo/greedy.py": GREEDY,
    })
    found = sorted(finding_lines(run(["check", ".", "--no-cache", "--output-format", "full"], root).output))
    assert _at(found, "demo/greedy.py:8:"), found
