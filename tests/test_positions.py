"""The per-statement position path gives exactly libcst's whole-file positions."""
from __future__ import annotations

import pytest

from gnnlint import engine
from gnnlint.engine import LintOptions, lint_bytes
from gnnlint.rules import all_codes

OPTIONS = LintOptions(codes=frozenset(all_codes()), assume_compiled="modules")

HEADER = "import torch\nimport torch_geometric\n"
SNIPPETS = {
    "plain": "class M(torch.nn.Module):\n    def forward(self, x):\n        return x.sum().item()\n",
    "non_ascii": "class M(torch.nn.Module):\n    def forward(self, x):\n        é = 'ünï'; return x.sum().item()  # ça\n",
    "tabs": "class M(torch.nn.Module):\n\tdef forward(self, x):\n\t\tif x.sum() > 0:\n\t\t\treturn x.tolist()\n\t\treturn x\n",
    "crlf": "class M(torch.nn.Module):\r\n    def forward(self, x):\r\n        return int(x.max())\r\n",
    "multiline": ("class M(torch.nn.Module):\n    def forward(self, x, batch):\n        y = torch.repeat_interleave(\n"
                  "            x,\n            batch.bincount(),\n        )\n        return y[x > 0]\n"),
    "paren_test": "class M(torch.nn.Module):\n    def forward(self, x):\n        if (x.sum() > 0):\n            x = -x\n        return x\n",
    "elif_try": ("class M(torch.nn.Module):\n    def forward(self, x):\n        try:\n            n = 1\n        except ValueError:\n"
                 "            n = 2\n        else:\n            n = 3\n        finally:\n            pass\n        if n == 1:\n            pass\n"
                 "        elif x.any():\n            x = x.nonzero()\n        return x\n"),
    "decorated": "@torch.compile(dynamic=False)\ndef f(x):\n    return x[x > 0].cpu()\ntorch.compile(f)\n",
    "semicolons": "def f(x):\n    return x\nmodel = f; torch.compile(model); torch_geometric.compile(model)\n",
    "with_for": ("class M(torch.nn.Module):\n    def forward(self, xs):\n        with torch.no_grad():\n"
                 "            for x in xs.unique():\n                print(x)\n        return xs\n"),
}


def _slow(module, data, context, reports):
    positions = engine.node_positions(module)
    return positions, lambda stmt: positions[stmt].start.line if stmt in positions else None


@pytest.mark.parametrize("name", sorted(SNIPPETS))
def test_fast_positions_match_libcst(name, monkeypatch):
    code = (HEADER + SNIPPETS[name]).encode()
    fast = lint_bytes("x.py", code, OPTIONS).findings
    monkeypatch.setattr(engine, "_report_positions", _slow)
    slow = lint_bytes("x.py", code, OPTIONS).findings
    assert fast, "the snippet must produce findings to compare"
    assert fast == slow
