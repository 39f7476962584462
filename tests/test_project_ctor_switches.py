"""A default-``False`` constructor switch that no construction in the project turns on (heldout13
NeuralCrush: ``Normalizer(..., magnitude_zscore=False, scale_by_max=False)`` built in model.py with
neither, the model compiled by train.py): the branches behind ``if self.scale_by_max:`` never run,
and the submodule built only under ``if magnitude_zscore:`` never exists, so neither is compiled
code (semantic/default_off_flags.py, gnnlint/constructions.py). Any file that may turn the switch on
-- a keyword, enough positional arguments, ``**kwargs``, a subclass, a registry string naming the
class, the construction in the defining file itself -- keeps the findings."""
from __future__ import annotations

from gnnlint.constructions import switch_maybe_on
from tests.project_files import assert_one_file_agrees, finding_keys, write_project

NETS = """\
    import torch


    class MagnitudeNorm(torch.nn.Module):
        def forward(self, x, mask):
            active = ~mask
            if active.sum() > 0:
                x = x / x[active].abs().max()
            return x


    class Normalizer(torch.nn.Module):
        def __init__(self, size=None, zscore=False, magnitude=False, scale_by_max=False):
            super().__init__()
            self.size = size
            self.mag = None
            if magnitude:
                self.mag = MagnitudeNorm()
            self.scale_by_max = scale_by_max

        def forward(self, x, mask):
            if self.scale_by_max:
                active = ~mask
                if active.sum() > 0:
                    x = x / x[active].abs().max()
            if self.mag is not None:
                x = self.mag(x, mask)
            return x * 2
"""
MODEL = """\
    import torch
    from demo.nets import Normalizer


    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.norm = NORMALIZER
            self.lin = torch.nn.Linear(4, 4)

        def forward(self, x, mask):
            return self.lin(self.norm(x, mask))
"""
TRAIN = """\
    import torch
    from demo.model import Net


    def main(loader):
        model = torch.compile(Net(), dynamic=True)
        for x, mask in loader:
            model(x, mask).sum().backward()
"""
# the tensor tests and masks of both branches: scale_by_max's, and the MagnitudeNorm forward
FOUND = sorted(["demo/nets.py:7:12: GNN001", "demo/nets.py:8:21: GNN008",
                "demo/nets.py:24:16: GNN001", "demo/nets.py:25:25: GNN008"])


def _findings(tmp_path, normalizer: str, extra: dict | None = None, nets: str = NETS) -> list:
    root = write_project(tmp_path, {
        "pyproject.toml": "[project]\nname = 'demo'\n\n[tool.gnnlint]\n",
        "demo/__init__.py": "",
        "demo/nets.py": nets,
        "demo/model.py": MODEL.replace("NORMALIZER", normalizer),
        "demo/train.py": TRAIN,
        **(extra or {}),
    })
    found = finding_keys(root, containing="nets.py")
    if not found:
        assert_one_file_agrees(root, "demo/nets.py")
    return found


def test_switches_no_construction_turns_on_are_not_compiled(tmp_path):
    assert _findings(tmp_path, "Normalizer(size=4, zscore=True)") == []


def test_a_construction_passing_the_keyword_keeps_the_findings(tmp_path):
    assert _findings(tmp_path, "Normalizer(size=4, scale_by_max=True, magnitude=True)") == FOUND


def test_positional_arguments_reaching_the_switch_keep_the_findings(tmp_path):
    assert _findings(tmp_path, "Normalizer(4, True, True, True)") == FOUND


def test_keyword_unpacking_keeps_the_findings(tmp_path):
    assert _findings(tmp_path, "Normalizer(**{'size': 4})") == FOUND


def test_another_file_naming_the_switch_keeps_the_findings(tmp_path):
    # a kwargs bag reaches a construction only through `**` (s14h17a: the word alone, handed to another
    # class or kept in an unused bag, turns nothing on -- test_realcode_shapes_s14h17a.py)
    extra = {"demo/build.py": "from demo.nets import Normalizer\n\nBIG = dict(scale_by_max=True, magnitude=True)\n"
                              "\n\ndef big():\n    return Normalizer(**BIG)\n"}
    assert _findings(tmp_path, "Normalizer(size=4)", extra) == FOUND
    setter = {"demo/build.py": "def big(net):\n    net.norm.scale_by_max = True\n    net.norm.magnitude = True\n"}
    assert _findings(tmp_path / "set", "Normalizer(size=4)", setter) == FOUND  # set after construction


def test_a_subclass_or_a_registry_keeps_the_findings(tmp_path):
    subclass = {"demo/sub.py": "from demo.nets import Normalizer\n\n\nclass Big(Normalizer):\n    pass\n"}
    assert _findings(tmp_path, "Normalizer(size=4)", subclass) == FOUND


def test_the_defining_file_turning_it_on_keeps_the_findings(tmp_path):
    nets = NETS + "\n\n    DEFAULT = Normalizer(4, False, True, True)\n"
    assert _findings(tmp_path, "Normalizer(size=4)", nets=nets) == FOUND


def test_the_byte_reader():
    data = b'from demo.nets import (\n    Normalizer,\n)\nprint("Node Normalizer", x)\n# Normalizer(1, 2, 3)\n' \
           b'n = Normalizer(size=4, transforms=[f(1, 2)], zscore=True)\n'
    assert not switch_maybe_on(data, "Normalizer", "scale_by_max", 3)
    assert switch_maybe_on(data + b"m = Normalizer(1, 2, 3, 4)\n", "Normalizer", "scale_by_max", 3)
    assert switch_maybe_on(data + b"REG = {'norm': 'demo.nets.Normalizer'}\n", "Normalizer", "scale_by_max", 3)
    assert switch_maybe_on(data + b"make = partial(Normalizer, size=2)\n", "Normalizer", "scale_by_max", 3)
    assert switch_maybe_on(data + b"m = Normalizer(*args)\n", "Normalizer", "scale_by_max", 3)
    assert not switch_maybe_on(data + b"m = Normalizer(1, 2, 3)\n", "Normalizer", "scale_by_max", 3)


def test_a_hydra_config_naming_the_class_keeps_the_findings(tmp_path):
    config = {"configs/norm/big.yaml": "_target_: demo.nets.Normalizer\nsize: 4\nscale_by_max: true\nmagnitude: true\n"}
    assert _findings(tmp_path, "Normalizer(size=4)", config) == FOUND
