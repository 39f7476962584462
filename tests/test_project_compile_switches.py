"""A forward's ``if debug:`` block when every compiled call passes ``debug`` as
false whenever the compile happens (MeshGraphNets: setup.py compiles under
``config.get('use_compile')``, returns the model; the training loop, handed the
model, calls ``model(graph, debug=(not use_compile) and batch_idx == 0)``): the
block runs only eagerly (semantic/compile_switches.py). A compiled call passing
``debug=True``, a value not tied to the compile flag, or a flag the compile
does not run under keeps the findings."""
from __future__ import annotations

from tests.project_files import assert_one_file_agrees, finding_keys

MODEL = """\
    import torch


    class Processor(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(4, 4)

        def forward(self, x, debug=False):
            return self._flat(x, debug)

        def _flat(self, x, debug):
            x = self.lin(x)
            if debug:
                print(f"std={x.std().item():.4f}")
            return x


    class Simulator(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = Processor()

        def forward(self, x, debug=False, add_noise=None):
            out = self.model(x, debug=debug)
            if debug and out.numel() > 0:
                print(out.mean().item())
            if add_noise is None:
                add_noise = self.training
            if add_noise:
                out = out + out.std().item()
            return out
"""
SETUP = """\
    import torch
    from demo.model import Simulator


    def build_model(config, device):
        model = Simulator().to(device)
        if config.get('use_compile', False):
            model = torch.compile(model, dynamic=True)
        return model
"""
LOOP = """\
    import torch


    def train_epoch(model, loader, optimizer, config, epoch):
        use_compile = config.get('use_compile', False)
        for batch_idx, x in enumerate(loader):
            debug_internal = (not use_compile) and (batch_idx == 0 and epoch < 5)
            out = model(x, DEBUG)
            out.sum().backward()
            optimizer.step()


    def validate(model, loader):
        for x in loader:
            model(x, add_noise=False)
"""
MAIN = """\
    import torch
    from demo.setup import build_model
    from demo.loop import train_epoch, validate


    def main(config, loader):
        model = build_model(config, "cuda")
        optimizer = torch.optim.Adam(model.parameters())
        for epoch in range(10):
            train_epoch(model, loader, optimizer, config, epoch)
            validate(model, loader)
"""
# `if add_noise:` after `add_noise = self.training`: the parameter no longer decides (validate passes False)
NOISE = ["demo/model.py:31:25: GNN001"]
FOUND = sorted(["demo/model.py:15:13: GNN020", "demo/model.py:15:26: GNN001", "demo/model.py:27:13: GNN020",
                "demo/model.py:27:19: GNN001"] + NOISE)


def _findings(tmp_path, passed: str, setup: str = SETUP) -> list:
    return finding_keys(tmp_path, {
        "pyproject.toml": "[project]\nname = 'demo'\n\n[tool.gnnlint]\n",
        "demo/__init__.py": "",
        "demo/model.py": MODEL,
        "demo/setup.py": setup,
        "demo/loop.py": LOOP.replace("DEBUG", passed),
        "demo/main.py": MAIN,
    }, containing="model.py")


def test_a_debug_switch_off_whenever_compiled_is_eager_only(tmp_path):
    assert _findings(tmp_path, "debug=debug_internal") == NOISE


def test_not_the_compile_flag_inline_is_eager_only(tmp_path):
    assert _findings(tmp_path, "debug=not config.get('use_compile', False)") == NOISE


def test_a_compiled_call_passing_true_keeps_the_findings(tmp_path):
    assert _findings(tmp_path, "debug=True") == FOUND


def test_a_switch_not_tied_to_the_compile_keeps_the_findings(tmp_path):
    assert _findings(tmp_path, "debug=(batch_idx == 0)") == FOUND


def test_a_flag_the_compile_does_not_run_under_keeps_the_findings(tmp_path):
    setup = SETUP.replace("config.get('use_compile', False)", "config.get('fast', False)")
    assert _findings(tmp_path, "debug=debug_internal", setup) == FOUND


def test_a_positional_switch_keeps_the_findings(tmp_path):
    assert _findings(tmp_path, "debug_internal") == FOUND


def test_a_compile_under_no_flag_keeps_the_findings(tmp_path):
    setup = SETUP + """
    def build_eval_model():
        return torch.compile(Simulator())
"""
    assert _findings(tmp_path, "debug=debug_internal", setup) == FOUND


def test_one_file_agrees_with_the_whole_tree(tmp_path):
    _findings(tmp_path, "debug=True")
    assert_one_file_agrees(tmp_path, "demo/model.py", cached=2, nonempty=True)
    _findings(tmp_path, "debug=debug_internal")
    assert {" ".join(line.split(" ")[:2]) for line in assert_one_file_agrees(tmp_path, "demo/model.py", cached=2)} \
        == set(NOISE)
