"""Reach shapes of heldout7-10 (s11reachB), each a small project that fails without its change:

- a helper another file annotates ``-> th.Tensor`` returns a tensor at its call sites in compiled
  code (``returned_tensors.py``; FraGNNet's ``scatter_reduce`` sizes for ``repeat_interleave``);
- ``model_dp = model`` in ``main()`` names the module-level compiled model, handed to another file's
  training loop (``ref_aliases.py``; the EDM-style ``train_test.train_epoch(..., model_dp, ...)``);
- ``model = {"gnn": torch.compile(gnn), ...}``: ``model["gnn"](...)`` runs compiled code
  (``flow.py``; TGN's dict of modules), so the loops calling it drive compiled code;
- ``self.register_buffer("flag", torch.tensor(True))``: ``if self.flag:`` tests a tensor (``model.py``);
- ``import utils`` then ``utils.gradient_clipping(model, q)`` in a step loop: the helper runs every
  step (``steps.py``; before, only ``from pkg import utils`` was followed).
Each has a VALID twin that stays quiet."""
from __future__ import annotations

from tests.project_files import whole_tree_lines, write_project

_PYPROJECT = "[project]\nname = 'demo'\n\n[tool.gnnlint]\n"


def _lines(tmp_path, files: dict) -> set[str]:
    return whole_tree_lines(write_project(tmp_path, files), "--output-format", "concise")


# -- a helper annotated to return a tensor, in another file ------------------------------------
_HELPERS = """\
    import torch as th


    def scatter_count(index: th.Tensor, dim_size: int) -> th.Tensor:
        out = th.zeros(dim_size, dtype=th.long, device=index.device)
        return out.scatter_add_(0, index, th.ones_like(index))


    def count_list(index: th.Tensor, dim_size: int) -> list:
        return [0] * dim_size
"""
_MODEL = """\
    import torch
    from demo.utils import {helper}


    class Net(torch.nn.Module):
        def forward(self, x, index, n: int):
            sizes = {helper}(index, n)
            return torch.repeat_interleave(x, sizes, dim=0)


    model = torch.compile(Net(), dynamic=True)
"""


def test_a_helper_annotated_to_return_a_tensor_gives_tensor_repeats(tmp_path):
    lines = _lines(tmp_path, {"pyproject.toml": _PYPROJECT, "demo/__init__.py": "", "demo/utils.py": _HELPERS,
                              "demo/model.py": _MODEL.format(helper="scatter_count")})
    assert {line.split(":")[1] for line in lines if "GNN004" in line} == {"8"}, lines


def test_a_helper_imported_in_a_parenthesised_list_still_returns_a_tensor(tmp_path):
    # `from demo.utils import (\n    count_list,\n    scatter_count,\n)`: the import spans lines
    model = _MODEL.format(helper="scatter_count").replace(
        "from demo.utils import scatter_count", "from demo.utils import (\n        count_list,\n        scatter_count,\n    )")
    lines = _lines(tmp_path, {"pyproject.toml": _PYPROJECT, "demo/__init__.py": "", "demo/utils.py": _HELPERS,
                              "demo/model.py": model})
    assert {line.split(":")[1] for line in lines if "GNN004" in line} == {"11"}, lines


def test_a_helper_annotated_to_return_a_list_is_not_a_tensor(tmp_path):
    lines = _lines(tmp_path, {"pyproject.toml": _PYPROJECT, "demo/__init__.py": "", "demo/utils.py": _HELPERS,
                              "demo/model.py": _MODEL.format(helper="count_list")})
    assert not [line for line in lines if "GNN004" in line], lines


# -- `model_dp = model` in a function reading the module-level compiled model -------------------
_SCRIPT = """\
    import torch
    from demo.net import Net
    from demo import steps

    model = Net()
    model = torch.compile(model)


    def main(loader, parallel):
        if parallel:
            model_dp = torch.nn.DataParallel(Net())
        else:
            model_dp = {alias}
        steps.train_epoch(loader, model_dp)
"""
_STEPS = """\
    def train_epoch(loader, net):
        for data in loader:
            loss = net(data).sum()
            loss.backward()
            print(loss.item())
"""
_NET = """\
    import torch


    class Net(torch.nn.Module):
        def forward(self, x):
            return x * 2
"""


def test_a_plain_alias_of_the_global_compiled_model_is_handed_on(tmp_path):
    lines = _lines(tmp_path, {"pyproject.toml": _PYPROJECT, "demo/__init__.py": "", "demo/net.py": _NET,
                              "demo/steps.py": _STEPS, "demo/train.py": _SCRIPT.format(alias="model")})
    assert {line.split(":")[1] for line in lines if line.startswith("demo/steps.py") and "GNN013" in line} \
        == {"5"}, lines


def test_an_alias_of_an_eager_model_hands_nothing_compiled(tmp_path):
    lines = _lines(tmp_path, {"pyproject.toml": _PYPROJECT, "demo/__init__.py": "", "demo/net.py": _NET,
                              "demo/steps.py": _STEPS, "demo/train.py": _SCRIPT.format(alias="Net()")})
    assert not [line for line in lines if line.startswith("demo/steps.py")], lines


# -- a dict literal of modules, one entry compiled -----------------------------------------------
_DICT_SCRIPT = """\
    import numpy as np
    import torch
    from demo.net import Net

    memory = Net()
    gnn = Net()
    model = {{"memory": memory, "gnn": {gnn}}}
    optimizer = torch.optim.Adam(gnn.parameters())


    def train(loader):
        total = 0.0
        for batch in loader:
            z = model["memory"](batch)
            loss = model["gnn"](z).sum()
            loss.backward()
            optimizer.step()
            total += float(loss)
        return total


    @torch.no_grad()
    def test(loader):
        scores = []
        for batch in loader:
            y_pred = model["gnn"](batch)
            scores.append(np.array(y_pred.cpu()))
        return scores
"""


def test_an_entry_of_a_dict_of_modules_holding_a_compiled_one_runs_compiled_code(tmp_path):
    lines = _lines(tmp_path, {"pyproject.toml": _PYPROJECT, "demo/__init__.py": "", "demo/net.py": _NET,
                              "demo/train.py": _DICT_SCRIPT.format(gnn="torch.compile(gnn)")})
    assert {line.split(":")[1] for line in lines if "GNN013" in line} == {"18", "27"}, lines


def test_a_dict_of_eager_modules_drives_nothing_compiled(tmp_path):
    lines = _lines(tmp_path, {"pyproject.toml": _PYPROJECT, "demo/__init__.py": "", "demo/net.py": _NET,
                              "demo/train.py": _DICT_SCRIPT.format(gnn="gnn")})
    assert not [line for line in lines if "GNN013" in line], lines


# -- a registered buffer is a tensor ----------------------------------------------------------------
_BUFFERS = """\
    import torch


    class Rescale(torch.nn.Module):
        def __init__(self, shift: float):
            super().__init__()
            self.register_buffer("shift", torch.tensor([shift]))
            self.register_buffer("stats", None)
            self.use_e0 = {flag}

        def set_e0(self):
            self.register_buffer("use_e0", torch.tensor(True))

        def forward(self, x):
            if self.use_e0:
                x = x + 1
            if self.stats is not None:
                x = x * 2
            return x + self.shift


    model = torch.compile(Rescale(1.0))
"""


def test_a_bool_buffer_tested_in_the_compiled_forward_is_tensor_truthiness(tmp_path):
    lines = _lines(tmp_path, {"pyproject.toml": _PYPROJECT, "demo/__init__.py": "",
                              "demo/rescale.py": _BUFFERS.replace("            self.use_e0 = {flag}\n", "")})
    assert {line.split(":")[1] for line in lines if "GNN001" in line} == {"14"}, lines


def test_a_python_flag_tested_in_the_compiled_forward_is_no_sync(tmp_path):
    lines = _lines(tmp_path, {"pyproject.toml": _PYPROJECT, "demo/__init__.py": "",
                              "demo/rescale.py": _BUFFERS.replace(
                                  '            self.register_buffer("use_e0", torch.tensor(True))',
                                  "            self.use_e0 = True").replace("{flag}", "False")})
    assert not [line for line in lines if "GNN001" in line], lines


# -- a per-step helper of a plainly imported module (`import utils`) -----------------------------------
_PLAIN_IMPORT = {
    "pyproject.toml": _PYPROJECT,
    "utils.py": """\
        import torch


        def gradient_clipping(model, limit):
            norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=limit)
            if float(norm) > limit:
                print("clipped")
            return norm
    """,
    "net.py": _NET,
    "train.py": """\
        import torch
        import utils
        from net import Net

        model = torch.compile(Net())
        optimizer = torch.optim.Adam(model.parameters())


        def train(loader):
            for batch in loader:
                loss = model(batch).sum()
                loss.backward()
                utils.gradient_clipping(model, 1.0)
                optimizer.step()
    """,
}


def test_a_helper_of_a_plainly_imported_module_runs_every_step(tmp_path):
    lines = _lines(tmp_path, _PLAIN_IMPORT)
    assert {line.split(":")[1] for line in lines if line.startswith("utils.py") and "GNN013" in line} == {"6"}, lines


def test_the_helper_of_an_eager_program_is_not_a_per_step_sync(tmp_path):
    files = dict(_PLAIN_IMPORT)
    files["train.py"] = _PLAIN_IMPORT["train.py"].replace("torch.compile(Net())", "Net()")
    assert not [line for line in _lines(tmp_path, files) if line.startswith("utils.py")]
