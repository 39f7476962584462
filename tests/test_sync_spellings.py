"""Syncs spelled other ways (census E2; bench/evidence/e29_sync_spellings.py on torch 2.13):

- ``"%.3f" % loss`` / ``fmt % (step, loss)`` (a format string bound to a name) and ``x in t``: dynamo gives
  up on the whole frame (GNN001); once per step in eager code they read the value on the host (GNN013);
- ``"{:.3f}".format(loss)`` and builtin ``max(loss, 0.5)`` / ``min(a, b)`` / ``max(t)``: traced or deferred
  under compile (no break, like a bare f-string, e28), so GNN013 only;
- ``self.print(loss)`` in a LightningModule is Lightning's print, reported like ``print(loss)``.
Look-alikes stay quiet: ``"%d" % len(x)``, ``f"{epoch:03d}"``, ``max(a, b)`` of Python numbers,
``k in dict`` / ``k not in out`` / ``k not in out.keys()`` of a model's (dict) output, ``loss % 2`` (a tensor modulo, no string)."""
from __future__ import annotations

from gnnlint.engine import LintOptions, lint_bytes
from gnnlint.rules import all_rules


def _lines(source: str, code: str) -> list[int]:
    rules = [r for r in all_rules() if r.code == code]
    opts = LintOptions(codes=frozenset({code}))
    return sorted(f.line for f in lint_bytes("pkg/train.py", source.encode(), opts, rules=rules).findings)


COMPILED = """\
import torch
class Net(torch.nn.Module):
    def forward(self, x, ids):
        s = x.sum()
        msg = "sum %.3f" % s
        header = "%d nodes, %s" % (x.size(0), s)
        text = "sum {:.3f}".format(s)
        m = max(s, 0.5)
        if 3 in x.argmax(dim=1):
            x = x + 1
        n = "%d" % len(x)
        k = max(x.size(0), 2)
        d = {"a": 1}
        if "a" in d:
            x = x * 2
        r = x % 2
        assert 3 in ids, "a parameter: a dict as often as a tensor"
        return x * m
model = torch.compile(Net())
"""


def test_percent_format_and_membership_break_a_compiled_forward():
    # `str.format` and builtin max() are traced: no break (e29)
    assert _lines(COMPILED, "GNN001") == [5, 6, 9]


LOOP = """\
import torch
def train(model, loader, optimizer, pbar):
    model = torch.compile(model)
    fmt = "   %11.2e"
    for epoch in range(3):
        for i, batch in enumerate(loader):
            loss = model(batch)
            loss.backward()
            optimizer.step()
            line = fmt % loss
            both = "%d %.3f" % (i, loss)
            pbar.set_description("loss {:.3f}".format(loss))
            print("step %d loss %.3f" % (i, loss))
            best = max(loss, 1.0)
            ids = batch.y.unique()
            if i in ids:
                pass
            out = model(batch)
            extra = {k: v for k, v in batch.items() if k not in out.keys()}
            for k, v in batch.items():
                if k not in out:
                    out[k] = v
            tag = f"{epoch:03d}"
            k = "%d" % len(batch)
            big = max(i, 3)
            mod = loss % 2
"""


def test_every_spelling_is_a_sync_once_per_step():
    assert _lines(LOOP, "GNN013") == [10, 11, 12, 13, 14, 16]


def test_a_format_name_rebound_to_a_non_string_is_not_read_as_a_format():
    source = LOOP.replace('fmt = "   %11.2e"', 'fmt = torch.tensor(3.0)')
    assert 10 not in _lines(source, "GNN013")


LIGHTNING = """\
import torch
import lightning as L
class Lit(L.LightningModule):
    def __init__(self, net):
        super().__init__()
        self.model = torch.compile(net)
    def training_step(self, batch, batch_idx):
        loss = self.model(batch).sum()
        self.print(loss)
        self.print("epoch %d" % self.current_epoch)
        self.print("loss %.4f" % loss)
        return loss
"""


def test_lightning_self_print_of_a_tensor_is_a_print():
    assert _lines(LIGHTNING, "GNN013") == [9, 11]


def test_self_print_of_a_plain_class_is_not_lightning():
    source = LIGHTNING.replace("class Lit(L.LightningModule):", "class Lit(torch.nn.Module):")
    assert 9 not in _lines(source, "GNN013")
