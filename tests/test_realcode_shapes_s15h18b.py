"""heldout18 shapes (BrandonGel/Path-Planning, mrdmnd/dbtransformer, tufts-ml/G2PT):

- a script using Python 3.12's f-strings (PEP 701: ``f"{name}{"_c" if c else ""}"``) was GNN000 under an
  older interpreter and never linted, so nothing knew it compiled the model it hands the training
  loops of another file (parsing.py ``newer_syntax``: libcst decides);
- ``self.pool = POOLS[name]`` with a module-level table of PyG aggregation *instances* (or
  ``AGGRS[name]()`` of a table of classes), called ``self.pool(x, batch)`` in a compiled forward:
  each runs ``Aggregation.__call__`` without ``dim_size`` (callables.py, GNN009);
- ``to_hetero(model, meta)`` / ``DataParallel(model)`` around a model an imported factory builds: the
  compiled wrapper runs the factory's classes (choices.py through ``classes.wraps_module``);
- sequences padded or cut to the longest of each batch -- a tokenizer's ``padding=True`` per call, a
  ``collate_fn`` cutting to ``lengths.max()`` or calling ``pad_sequence`` -- feed a compiled model
  a new sequence length each time (padded_batches.py; GNN007, and GNN006 for CUDA graphs).
Each shape is tested in two spellings, with an INVALID twin where a near miss must stay silent."""
from __future__ import annotations

import sys

import pytest

from tests.project_files import finding_keys

PYPROJECT = "[project]\nname = 'demo'\n\n[tool.gnnlint]\n"

# ---------------------------------------------------------------- PEP 701 f-strings
TRAIN_LOOPS = """\
    import torch


    def train(loader, model, optimizer):
        losses = []
        for batch in loader:
            optimizer.zero_grad()
            loss = model(batch.x, batch.edge_index).sum()
            loss.backward()
            optimizer.step()
            losses.append(float(loss.item()))
        return losses
"""


def _pep701(tmp_path, script: str) -> list:
    return finding_keys(tmp_path, {
        "pyproject.toml": PYPROJECT,
        "demo/__init__.py": "",
        "demo/loops.py": TRAIN_LOOPS,
        "scripts/run.py": script,
    })


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="the running compiler knows PEP 701 itself")
def test_a_script_with_pep701_fstrings_is_linted_and_its_compile_reaches_the_loops(tmp_path):
    found = _pep701(tmp_path, """\
        import torch
        from demo.loops import train


        def main(net, loader, use_compile):
            model = torch.compile(net, dynamic=True) if use_compile else net
            opt = torch.optim.Adam(model.parameters())
            folder = f"{type(net).__name__}{"_compile" if use_compile else ""}"
            return train(loader, model, opt), folder
    """)
    assert not any(line.endswith("GNN000") for line in found), found
    assert "demo/loops.py:11:29: GNN013" in found, found


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="the running compiler knows PEP 701 itself")
def test_a_method_with_a_pep701_subscript_fstring_is_linted(tmp_path):
    # another spelling: the same quotes inside a subscript, in a method of a runner class
    found = _pep701(tmp_path, """\
        import torch
        from demo.loops import train


        class Runner:
            def __init__(self, cfg, net):
                self.cfg = cfg
                self.model = torch.compile(net, dynamic=True)

            def fit(self, loader, opt):
                print(f"fitting {self.cfg["name"]} with {len(loader)} batches")
                return train(loader, self.model, opt)
    """)
    assert not any(line.endswith("GNN000") for line in found), found
    assert "demo/loops.py:11:29: GNN013" in found, found


def test_a_broken_fstring_is_still_gnn000(tmp_path):
    found = _pep701(tmp_path, 'import torch\nname = f"{a}}"\nmodel = torch.compile(net)\n')
    assert any(line.startswith("scripts/run.py:") and line.endswith("GNN000") for line in found), found


# ---------------------------------------------------------------- aggregation instances through a table
POOL_MODEL = """\
    import torch
    import torch_geometric as pyg

    POOLS = {
        "mean": pyg.nn.aggr.MeanAggregation(),
        "max": pyg.nn.aggr.MaxAggregation(),
    }


    class Net(torch.nn.Module):
        def __init__(self, pooling=None):
            super().__init__()
            self.lin = torch.nn.Linear(4, 4)
            self.pooling = POOLS[pooling] if pooling is not None else None

        def forward(self, x, batch=None):
            x = self.lin(x)
            if self.pooling is not None and batch is not None:
                x = self.pooling(CALL)
            return x


    class Deep(Net):
        pass


    def get_model(kind, **kwargs):
        if kind == "net":
            return Net(**kwargs)
        return Deep(**kwargs)
"""
POOL_TRAIN = """\
    import torch
    from torch_geometric.nn import to_hetero
    from demo.model import get_model


    def build(cfg, sample):
        model = get_model(kind=cfg["kind"], **cfg["model"])
        model = to_hetero(model, sample.metadata(), aggr="sum").to("cuda")
        if cfg["compile"]:
            model = torch.compile(model, dynamic=True)
        return model
"""


def _pool(tmp_path, model: str, train: str = POOL_TRAIN, call: str = "x, batch") -> list:
    return finding_keys(tmp_path, {
        "pyproject.toml": PYPROJECT,
        "demo/__init__.py": "",
        "demo/model.py": model.replace("CALL", call),
        "demo/train.py": train,
    })


def test_an_aggregation_instance_picked_from_a_table_in_a_hetero_compiled_forward(tmp_path):
    found = _pool(tmp_path, POOL_MODEL)
    assert "demo/model.py:19:17: GNN009" in found, found


def test_an_aggregation_class_picked_from_a_table_and_built_in_init(tmp_path):
    # another spelling: a table of classes built `AGGRS[name]()`, through `from ... import aggr`,
    # compiled by an imported factory's result handed to DataParallel in a method of another file
    model = POOL_MODEL.replace("""POOLS = {
        "mean": pyg.nn.aggr.MeanAggregation(),
        "max": pyg.nn.aggr.MaxAggregation(),
    }""", """from torch_geometric.nn import aggr

    READOUTS = {"sum": aggr.SumAggregation, "mean": aggr.MeanAggregation}""").replace(
        "POOLS[pooling] if pooling is not None else None", "READOUTS[pooling]()")
    train = """\
        import torch
        from demo.model import get_model


        class Engine:
            def __init__(self, cfg):
                net = torch.nn.DataParallel(get_model(cfg.kind, pooling=cfg.readout))
                self.net = torch.compile(net, dynamic=True)
    """
    found = _pool(tmp_path, model, train)
    assert "demo/model.py:18:17: GNN009" in found, found


def test_an_aggregation_from_a_table_given_its_size_is_silent(tmp_path):
    found = _pool(tmp_path, POOL_MODEL, call="x, batch, dim_size=int(x.size(0))")
    assert not any(line.endswith("GNN009") for line in found), found


def test_a_table_of_other_modules_is_silent(tmp_path):
    model = POOL_MODEL.replace("pyg.nn.aggr.MeanAggregation()", "torch.nn.Identity()") \
        .replace("pyg.nn.aggr.MaxAggregation()", "torch.nn.Tanh()")
    found = _pool(tmp_path, model, call="x")
    assert not any(line.endswith("GNN009") for line in found), found


# ---------------------------------------------------------------- sequences padded to each batch's longest
EMBEDDER = """\
    import torch
    from transformers import AutoModel, AutoTokenizer


    class TextEncoder:
        def __init__(self, name):
            self.tokenizer = AutoTokenizer.from_pretrained(name)
            self.model = AutoModel.from_pretrained(name).to("cuda").eval()
            self.model = torch.compile(self.model, mode="reduce-overhead")

        @torch.inference_mode()
        def embed(self, texts):
            batch = self.tokenizer(texts, padding=PADDING, truncation=True, return_tensors="pt").to("cuda")
            out = self.model(**batch)
            return out.last_hidden_state[:, -1]
"""


def test_a_model_run_on_a_tokenizer_batch_padded_per_call(tmp_path):
    found = finding_keys(tmp_path, {"pyproject.toml": PYPROJECT, "demo/__init__.py": "",
                                    "demo/embed.py": EMBEDDER.replace("PADDING", "True")})
    assert "demo/embed.py:9:22: GNN006" in found and "demo/embed.py:9:22: GNN007" in found, found


def test_a_function_padding_to_the_longest_feeds_a_global_compiled_model(tmp_path):
    # another spelling: a module-level compiled model, a function of two parameters, `padding="longest"`
    found = finding_keys(tmp_path, {"pyproject.toml": PYPROJECT, "demo/__init__.py": "", "demo/score.py": """\
        import torch
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        tok = AutoTokenizer.from_pretrained("bert-base-uncased")
        clf = torch.compile(AutoModelForSequenceClassification.from_pretrained("bert-base-uncased"))


        def score(questions, answers):
            enc = tok(questions, answers, padding="longest", return_tensors="pt")
            logits = clf(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"]).logits
            return logits.softmax(-1)
    """})
    assert "demo/score.py:5:7: GNN007" in found, found


def test_a_tokenizer_padding_to_a_fixed_length_is_silent(tmp_path):
    found = finding_keys(tmp_path, {"pyproject.toml": PYPROJECT, "demo/__init__.py": "",
                                    "demo/embed.py": EMBEDDER.replace("PADDING", '"max_length"')})
    assert not any(line.endswith(("GNN006", "GNN007")) for line in found), found


SEQ_TRAIN = """\
    import torch
    from torch.nn.utils.rnn import pad_sequence
    from transformers import default_data_collator


    COLLATE


    def main(model, train_dataset, use_compile):
        loader = torch.utils.data.DataLoader(train_dataset, batch_size=32, shuffle=True, collate_fn=collate)
        if use_compile:
            model = torch.compile(model)
        opt = torch.optim.AdamW(model.parameters())
        for data in loader:
            logits, loss = model(data["input_ids"], data["labels"])
            loss.backward()
            opt.step()
"""


def _seq(tmp_path, collate: str) -> list:
    import textwrap

    body = SEQ_TRAIN.replace("    COLLATE\n", textwrap.indent(textwrap.dedent(collate), "    "))
    return finding_keys(tmp_path, {"pyproject.toml": PYPROJECT, "demo/__init__.py": "", "demo/train.py": body})


def test_a_collate_cutting_each_batch_to_its_longest_feeds_variable_lengths(tmp_path):
    found = _seq(tmp_path, """\
        def collate(features):
            features = default_data_collator(features)
            max_len = features["attention_mask"].sum(-1).max()
            return {k: v[..., :max_len] for k, v in features.items()}
    """)
    assert any(line.startswith("demo/train.py:") and line.endswith("GNN007") for line in found), found


def test_a_collate_padding_with_pad_sequence_feeds_variable_lengths(tmp_path):
    found = _seq(tmp_path, """\
        def collate(samples):
            ids = pad_sequence([s["input_ids"] for s in samples], batch_first=True)
            labels = pad_sequence([s["labels"] for s in samples], batch_first=True, padding_value=-100)
            return {"input_ids": ids, "labels": labels}
    """)
    assert any(line.startswith("demo/train.py:") and line.endswith("GNN007") for line in found), found


def test_a_collate_padding_to_a_fixed_length_is_silent(tmp_path):
    found = _seq(tmp_path, """\
        def collate(samples):
            ids = torch.stack([torch.nn.functional.pad(s["input_ids"], (0, 512 - len(s["input_ids"])))
                               for s in samples])
            return {"input_ids": ids[..., :512], "labels": ids}
    """)
    assert not any(line.endswith("GNN007") for line in found), found


def test_a_wrapped_factory_model_runs_its_classes_compiled(tmp_path):
    # the wrapper alone (no table): `DataParallel(build(cfg))` of an imported factory, compiled in a method
    model = """\
        import torch


        class Small(torch.nn.Module):
            def forward(self, x):
                if x.sum() > 0:
                    return x
                return -x


        def build(cfg):
            return Small()
    """
    train = """\
        import torch
        from demo.model import build


        class Engine:
            def __init__(self, cfg):
                self.net = torch.compile(torch.nn.DataParallel(build(cfg)), dynamic=True)
    """
    found = _pool(tmp_path, model, train)
    assert "demo/model.py:6:12: GNN001" in found, found
