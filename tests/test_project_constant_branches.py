"""A branch a module constant switches off (``if debug_mode:`` with ``debug_mode = False`` in this
file or in a settings module it imports) never runs: dynamo guards on the global and never traces
it, and eagerly it never runs either. Nothing in it is reported, compiled (GNN001/GNN020) or per
step (GNN013) (semantic/constant_branches.py). An `on` constant, a function re-binding the name
(``global``), ``if not DEBUG:`` and a constant that is not a literal keep the findings."""
from __future__ import annotations

import re

from tests.project_files import assert_one_file_agrees, finding_keys

CONFIG = """\
    debug_mode = False
    VERBOSE = 0
"""
MODEL = """\
    import torch
    from demo.config import debug_mode
    from demo import config

    DEBUG = False


    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(4, 4)

        def forward(self, x):
            h = self.lin(x)
            if debug_mode:
                print("h", h.sum().item())
            if DEBUG and h.sum().item() > 0:
                print(h.std().item())
            if config.VERBOSE:
                print(h.mean().item())
            return h
"""
TRAIN = """\
    import torch
    from demo.model import Net
    from demo.config import debug_mode

    LOG = None


    def train(loader):
        model = torch.compile(Net(), dynamic=True)
        opt = torch.optim.Adam(model.parameters())
        for x in loader:
            loss = model(x).sum()
            loss.backward()
            opt.step()
            if debug_mode:
                print(loss.item())
            if LOG:
                LOG.info(float(loss))
"""
FILES = {
    "pyproject.toml": "[project]\nname = 'demo'\n",
    "demo/__init__.py": "",
    "demo/config.py": CONFIG,
    "demo/model.py": MODEL,
    "demo/train.py": TRAIN,
}


def _keys(tmp_path, **changes) -> set:
    """``file:line CODE`` of each finding, with ``changes`` (file -> (old, new)) made first."""
    files = dict(FILES)
    for name, (old, new) in changes.items():
        assert old in files[f"demo/{name}.py"]
        files[f"demo/{name}.py"] = files[f"demo/{name}.py"].replace(old, new)
    return {re.sub(r":\d+: ", " ", key) for key in finding_keys(tmp_path, files)}


def test_branches_a_constant_switches_off_are_not_reported(tmp_path):
    assert _keys(tmp_path) == set()


def test_an_imported_constant_that_is_on_keeps_the_findings(tmp_path):
    keys = _keys(tmp_path, config=("debug_mode = False", "debug_mode = True"))
    assert "demo/model.py:16 GNN001" in keys and "demo/train.py:16 GNN013" in keys, keys


def test_a_local_constant_a_function_rebinds_keeps_the_findings(tmp_path):
    keys = _keys(tmp_path, model=("DEBUG = False\n", "DEBUG = False\n\n\n    def enable():\n"
                                                     "        global DEBUG\n        DEBUG = True\n"))
    assert "demo/model.py:22 GNN001" in keys and "demo/model.py:23 GNN001" in keys, keys  # shifted by enable()


def test_the_branch_that_runs_keeps_the_findings(tmp_path):
    keys = _keys(tmp_path, model=("if config.VERBOSE:", "if not config.VERBOSE:"))
    assert "demo/model.py:20 GNN001" in keys, keys


def test_a_constant_that_is_not_a_literal_keeps_the_findings(tmp_path):
    keys = _keys(tmp_path, config=("VERBOSE = 0", "import os\n    VERBOSE = os.environ.get('V')"))
    assert "demo/model.py:20 GNN001" in keys, keys


def test_a_fallback_of_an_optional_import_keeps_the_findings(tmp_path):
    """``try: from ext import HAVE_EXT`` / ``except ImportError: HAVE_EXT = False``: on when the import works."""
    keys = _keys(tmp_path, model=("DEBUG = False\n", "try:\n        from fastops import DEBUG\n    except ImportError:\n"
                                                      "        DEBUG = False\n"))
    assert "demo/model.py:20 GNN001" in keys and "demo/model.py:21 GNN001" in keys, keys


def test_one_file_agrees_with_the_whole_tree(tmp_path):
    _keys(tmp_path, config=("debug_mode = False", "debug_mode = True"))
    assert_one_file_agrees(tmp_path, "demo/train.py", cached=2, nonempty=True, stdin=True)
    _keys(tmp_path)
    assert assert_one_file_agrees(tmp_path, "demo/model.py", cached=1, stdin=True) == set()
