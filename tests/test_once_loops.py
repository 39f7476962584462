"""A loop that leaves on its first iteration (``...; break`` at the end of its
body, ``if i == 0: ...; exit(9)`` on the enumerate counter) runs its body once:
its syncs are not per step (semantic/once_loops.py)."""
from __future__ import annotations

import textwrap

import libcst as cst

from gnnlint.context import FileContext
from gnnlint.semantic.once_loops import runs_once
from tests.project_files import whole_tree_lines, write_project

EVAL = """\
    import torch
    from net import Net


    def evaluate(loader):
        model = torch.compile(Net())
        for i, x in enumerate(loader):
            out = model(x)
            host = out.cpu()
            if i == 0:
                print(host.shape)
                exit(9)
"""


def _lines(tmp_path, main: str) -> set[str]:
    net = "import torch\n\nclass Net(torch.nn.Module):\n    def forward(self, x):\n        return x * 2\n"
    root = write_project(tmp_path, {"net.py": net, "main.py": main})
    return {line.split(" ")[0] + line.split(" ")[1] for line in
            whole_tree_lines(root)}


def test_loop_exiting_at_the_first_counter_value_is_not_a_step_loop(tmp_path):
    assert not any(line.startswith("main.py:9") for line in _lines(tmp_path, EVAL))


def test_the_same_loop_without_the_exit_is_one(tmp_path):
    lines = _lines(tmp_path, EVAL.replace("                exit(9)\n", ""))
    assert "main.py:9:16:GNN013" in lines


def _loops(source: str):
    ctx = FileContext(cst.parse_module(textwrap.dedent(source)), "case.py")
    return ctx, [loop for loop in ctx.loops]


def test_runs_once_shapes():
    ctx, loops = _loops("""\
        for batch in loader:
            model(batch)
            break
        for batch in loader:
            if batch is None:
                continue
            model(batch)
            break
        for i, x in enumerate(loader, 1):
            if i == 0:
                exit()
        for i, x in enumerate(loader):
            if i == 0:
                sys.exit(1)
        for x in loader:
            model(x)
        """)
    assert [runs_once(ctx, loop) for loop in loops] == [True, False, False, True, False]
