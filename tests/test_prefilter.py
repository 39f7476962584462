"""The byte prefilter's region test (gnnlint.facts.possible_regions) is a
heuristic: it must never say "no compiled region / no hot loop" for a file in
which the FileContext finds one, or every region rule goes quiet there."""
from pathlib import Path

import libcst as cst
import pytest

from gnnlint.context import FileContext
from gnnlint.facts import compiles_anything, possible_regions
from gnnlint.rules import all_rules

FIXTURES = sorted((Path(__file__).parent.parent / "fixtures").glob("*.py"))
EXAMPLES = [(rule.code, i, example.code) for rule in all_rules()
            for i, example in enumerate(tuple(rule.VALID) + tuple(rule.INVALID))]


def _regions_found(code: str) -> set:
    context = FileContext(cst.parse_module(code), "example.py")
    found = set()
    if context.compiled_funcs:
        found |= {"compiled", "compiled_or_hot"}
    if context.hot_loops or context.hot_funcs:
        found.add("compiled_or_hot")
    return found


@pytest.mark.parametrize("path", FIXTURES, ids=[p.name for p in FIXTURES])
def test_prefilter_keeps_every_region_of_the_fixtures(path: Path):
    data = path.read_bytes()
    assert _regions_found(data.decode()) <= possible_regions(data)


@pytest.mark.parametrize("code", [e[2] for e in EXAMPLES], ids=[f"{c}-{i}" for c, i, _ in EXAMPLES])
def test_prefilter_keeps_every_region_of_the_rule_examples(code: str):
    assert _regions_found(code) <= possible_regions(code.encode())


@pytest.mark.parametrize("code", [
    "for batch in train_loader:\n    out = model(batch.x, batch.edge_index)\n    print(out.sum().item())\n",
    "for epoch in range(100):\n    pred = self.gnn(x, edge_index)\n",
    "for i, data in enumerate(tqdm(loader)):\n    y = net.forward(data)\n",
    "def evaluate(encoder, batches):\n    for b in batches:\n        z = encoder(b)\n",
])
def test_loop_calling_a_model_is_a_possible_hot_loop(code: str):
    assert "compiled_or_hot" in possible_regions(code.encode())


@pytest.mark.parametrize("code", [
    '"""Use a DataLoader to feed the model; see Net."""\nfor conv in self.convs:\n    x = conv(x)\n',
    "for data in data_list:\n    data = self.pre_transform(data)\n\n" + "\n" * 30 + "model = Net()\n",
])
def test_words_alone_are_not_a_hot_loop(code: str):
    assert possible_regions(code.encode()) == frozenset()


@pytest.mark.parametrize("code, sweeps", [
    (b"from train_utils import run_config\nfor hidden in (16, 32):\n    run_config(hidden, data)\n", True),
    (b"from a import (\n    x,\n    run as go,\n)\nfor i, h in enumerate(z):\n    y = 1\n    go(h)\n", True),
    (b"from a import run\nfor h in z:\n    print(h)\n", False),  # print is not imported
    (b"from a import run\nfor h in z:\n    run(1)\n", False),  # the loop's value is not passed
    (b"import a\nfor h in z:\n    a.run(h)\n", False),  # an attribute call: not a from-import
])
def test_a_loop_calling_an_imported_function_may_export_a_sweep(code, sweeps):
    from gnnlint.facts import may_export_sweep

    assert may_export_sweep(code) is sweeps



def test_a_sweep_names_the_module_it_would_tell():
    from gnnlint.facts import may_export_sweep, sweep_modules

    code = b"from ..train import run as go\nfrom . import helper\nfor h in z:\n    go(h)\n    helper(h)\n"
    assert sweep_modules(code) == (("train", 2, "run"), ("", 1, "helper"))
    # a sweep matters only to a file that compiles: told none, the file need not be parsed for it
    assert may_export_sweep(code, lambda module, level, name: False) is False
    assert may_export_sweep(code, lambda module, level, name: name == "helper") is True


def _compiling(tmp_path, files: dict):
    from gnnlint.compiling_files import CompilingImports

    paths = []
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        paths.append(str(path))
    return CompilingImports(paths, lambda p: Path(p).read_bytes()).for_importer(str(tmp_path / "sweep.py"))


def test_a_package_init_answers_for_the_file_it_re_exports_a_name_from(tmp_path):
    # `from pkg import run` lands on pkg/__init__.py, which hands a fact about
    # `run` on to pkg/train.py: that file decides, not "any __init__ may"
    compiles = _compiling(tmp_path, {
        "sweep.py": "",
        "pkg/__init__.py": "from .train import run, other as alias\nfrom .eager import plain\n",
        "pkg/train.py": "import torch\ndef run(h):\n    return torch.compile(Net(h))\n",
        "pkg/eager.py": "def plain(h):\n    return Net(h)\n",
        "pkg/sub/__init__.py": "",
        "pkg/leaf.py": "def f(h):\n    return h\n",
    })
    assert compiles("pkg", 0, "run") is True
    assert compiles("pkg", 0, "alias") is True  # bound as `alias`, defined as `other` in train.py
    assert compiles("pkg", 0, "plain") is False
    assert compiles("pkg", 0, "undefined_here") is False  # nothing binds it: no file would receive the fact
    assert compiles("pkg", 0, "leaf") is False  # a submodule: its own bytes
    assert compiles("pkg", 0, "sub") is True  # a subpackage: may be anything
    assert compiles("elsewhere", 0, "run") is False  # not one of the run's files


def test_a_re_export_chain_through_plain_modules_is_followed(tmp_path):
    compiles = _compiling(tmp_path, {
        "sweep.py": "",
        "api.py": "from impl import run\n",
        "impl.py": "from core import run\n",
        "core.py": "import torch\nrun = torch.compile(step)\n",
        "cycle_a.py": "from cycle_b import f\n",
        "cycle_b.py": "from cycle_a import f\n",
    })
    assert compiles("api", 0, "run") is True
    assert compiles("cycle_a", 0, "f") is False  # a cycle ends, it does not loop


@pytest.mark.parametrize("code, hot", [
    (b"class F(torch.autograd.Function):\n    def forward(ctx, x):\n        ctx.save_for_backward(x)\n", False),
    (b"class M(L.LightningModule):\n    def training_step(self, b, i):\n        self.manual_backward(loss)\n", True),
    (b"class T(Base):\n    def fit(self):\n        for b in data:\n            self._backward(loss)\n", True),
    (b"class C(Callback):\n    def on_after_backward(self, trainer, module):\n        pass\n", True),
])
def test_an_autograd_functions_save_for_backward_is_no_step(code, hot):
    assert ("compiled_or_hot" in possible_regions(code)) is hot


@pytest.mark.parametrize("code, compiles", [
    # a package __init__ re-exporting the name compiles nothing itself (importers follow the import)
    (b"from ._compile import compile, is_compiling\n__all__ = ['compile', 'is_compiling']\n", False),
    (b"from torch import compile\nx = 1\n", False),
    (b"from torch import compile\nmodel = compile(model)\n", True),
    (b"from torch import compile\n@compile\ndef step(x):\n    return x\n", True),
    (b"from torch import compile\nfast = partial(compile, dynamic=True)\n", True),
    (b"from torch import compile as tc\nmodel = tc(model)\n", True),
])
def test_an_imported_compile_is_a_compile_site_only_where_the_file_uses_it(code, compiles):
    assert ("compiled" in possible_regions(code)) is compiles
    assert compiles_anything(code) is compiles
