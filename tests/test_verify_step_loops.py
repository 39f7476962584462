"""A per-step sync's verdict counts what its finding predicts (issue 11): the
finding names its step loop (Finding.step_loop, from the static loop
analysis), the verify child counts each loop's iterations and the compiled
calls each ran, and a sync that ran less often than the compiled code is
judged by that loop -- per step under a condition when each iteration runs a
step's worth of compiled calls, once per epoch when an iteration runs a
whole batch loop. No torch needed."""
from __future__ import annotations

import os
import sys
import textwrap

from gnnlint.engine import lint_source
from gnnlint.finding import Finding
from gnnlint.verify._verdicts import CONFIRMED, NOT_REPRODUCED, judge, step_loop_calls
from gnnlint.verify.child import frames
from gnnlint.verify.child.loops import Iterations, loop_header_lines

VERSIONS = {"torch": "2.13.0", "torch_geometric": "2.8.1"}

FULL_BATCH = """\
import torch

model = torch.compile(Net())
for epoch in range(200):
    opt.zero_grad()
    loss = model(x, edge_index).sum()
    loss.backward()
    opt.step()
    if epoch % 10 == 0:
        print(loss.item())
"""

MINI_BATCH = """\
import torch

model = torch.compile(Net())


def train(loader):
    total = 0.0
    for data in loader:
        loss = model(data.x, data.edge_index).sum()
        loss.backward()
        total += loss.item()
    return total
"""


def test_gnn013_names_its_step_loop(tmp_path):
    (f,) = [f for f in lint_source(FULL_BATCH, str(tmp_path / "t.py")) if f.code == "GNN013"]
    assert (f.line, f.step_loop) == (10, 4)  # the full-batch epoch loop
    (f,) = [f for f in lint_source(MINI_BATCH, str(tmp_path / "m.py")) if f.code == "GNN013"]
    assert (f.line, f.step_loop) == (11, 8)  # the batch loop
    # other rules name no loop
    assert all(g.step_loop == 0 for g in lint_source(MINI_BATCH, str(tmp_path / "m.py")) if g.code != "GNN013")


def test_loop_header_lines(tmp_path):
    src = tmp_path / "p.py"
    src.write_text("for i in range(3):\n    pass\nwhile (\n    x\n):\n    pass\nasync def f():\n"
                   "    async for y in z:\n        pass\n")
    assert loop_header_lines(str(src)) == {1, 3, 4, 8}
    assert loop_header_lines(str(tmp_path / "missing.py")) == frozenset()


def test_iterations_count_compiled_calls_per_iteration():
    it = Iterations()
    clock = [0]
    it.clock = lambda: clock[0]
    for _epoch in range(3):  # an epoch loop (line 1) around a batch loop (line 2) of 4 compiled calls
        it.hit("/x/p.py", 1)
        for _batch in range(4):
            it.hit("/x/p.py", 2)
            clock[0] += 1
        it.hit("/x/p.py", 2)  # the batch loop's exit
    it.hit("/x/p.py", 7)  # reached once, around no compiled code
    out = it.as_json(lambda p: p)
    assert out == {"/x/p.py": {"1": {"hits": 3, "calls": {"4": 2}},
                               "2": {"hits": 15, "calls": {"1": 12}}}}


def test_coverage_tracer_reports_loop_iterations(tmp_path):
    src = tmp_path / "prog.py"
    src.write_text(textwrap.dedent("""\
        def run(step, n):
            for i in range(n):
                step()
                step()
            return n
        """))
    frames.USER.add_root(str(tmp_path))
    ns: dict = {}
    exec(compile(src.read_text(), str(src), "exec"), ns)
    clock = [0]

    def step():
        clock[0] += 1

    cov = frames.Coverage()
    cov.loops.clock = lambda: clock[0]
    old = sys.gettrace()
    cov.start()
    try:
        ns["run"](step, 5)
    finally:
        cov.stop()
        sys.settrace(old)
    real = os.path.realpath(str(src))
    assert cov.as_json()[real] == [1, 2, 3, 4, 5]
    # 5 iterations and the exit: 2 compiled calls each
    assert cov.loops.as_json(os.path.realpath) == {real: {"2": {"hits": 6, "calls": {"2": 5}}}}


def _finding(line: int, step_loop: int) -> Finding:
    return Finding(path="/x/m.py", line=line, col=1, end_line=line, end_col=5, code="GNN013", name="n",
                   message="m", step_loop=step_loop)


def _seldom_sync(line: int, count: int, steps: int) -> dict:
    """A sync the child judged seldom (it ran less often than the compiled code)."""
    return {"kind": "host_sync", "reason": "host sync: .item()", "frames": [["/x/m.py", line, "main"]],
            "context": [], "count": count, "rare": True, "steps": steps}


def test_a_conditional_sync_in_a_full_batch_step_loop_is_confirmed():
    loops = {"/x/m.py": {"4": {"hits": 40, "calls": {"1": 39}}}}
    (v,), unexpected = judge([_finding(10, 4)], [_seldom_sync(10, 4, 40)], {"/x/m.py": [4, 10]}, VERSIONS,
                             loops=loops)
    assert v.verdict == CONFIRMED and v.evidence[0]["count"] == 4
    assert "4 times in 39 iterations of the step loop at line 4" in v.note
    assert unexpected == []


def test_a_sync_once_per_batch_loop_is_not_per_step():
    # the finding's loop runs 20 compiled calls per iteration: the sync is once per epoch
    loops = {"/x/m.py": {"4": {"hits": 3, "calls": {"20": 2}}}}
    (v,), _ = judge([_finding(10, 4)], [_seldom_sync(10, 3, 50)], {"/x/m.py": [4, 10]}, VERSIONS, loops=loops)
    assert v.verdict == NOT_REPRODUCED
    assert "each iteration of the loop at line 4 ran 20 compiled calls: once per epoch" in v.note


def test_without_a_step_loop_a_seldom_sync_stays_once_per_epoch():
    for finding, loops in ((_finding(10, 0), {"/x/m.py": {"4": {"hits": 40, "calls": {"1": 39}}}}),
                           (_finding(10, 4), {}),  # the loop never ran compiled code
                           (_finding(10, 4), {"/x/m.py": {"4": {"hits": 2, "calls": {"1": 1}}}})):  # one iteration
        (v,), _ = judge([finding], [_seldom_sync(10, 2, 40)], {"/x/m.py": [4, 10]}, VERSIONS, loops=loops)
        assert v.verdict == NOT_REPRODUCED and "while the model ran 40 times" in v.note


def test_step_loop_calls_is_the_median_iteration():
    f = _finding(10, 4)
    assert step_loop_calls(f, {"/x/m.py": {"4": {"hits": 9, "calls": {"1": 5, "21": 3}}}}) == (1.0, 8)
    assert step_loop_calls(f, {"/x/m.py": {"4": {"hits": 9, "calls": {"1": 3, "21": 5}}}}) == (21.0, 8)


def test_setup_syncs_confirm_only_the_rules_that_flag_the_op_anywhere():
    setup = {"kind": "host_sync", "reason": "host sync: repeat_interleave with tensor repeats and no output_size",
             "frames": [["/x/m.py", 7, "main"]], "context": [], "count": 1, "setup": True}
    findings = [Finding(path="/x/m.py", line=7, col=1, end_line=7, end_col=5, code=code, name="n", message="m")
                for code in ("GNN004", "GNN001")]
    verdicts, unexpected = judge(findings, [setup], {"/x/m.py": [7]}, VERSIONS)
    assert [v.verdict for v in verdicts] == [CONFIRMED, NOT_REPRODUCED]
    _, unexpected = judge([], [setup], {"/x/m.py": [7]}, VERSIONS)
    assert unexpected == []  # a setup sync is no miss of the compile rules


def test_a_site_is_setup_only_when_every_occurrence_was():
    from gnnlint.verify.child.metrics import aggregate

    ev = {"kind": "host_sync", "reason": "host sync: repeat_interleave", "frames": [["/x/m.py", 7, "f"]],
          "context": []}
    assert aggregate([dict(ev, setup=True), dict(ev, setup=True)])[0].get("setup") is True
    (g,) = aggregate([dict(ev, setup=True), dict(ev, at_call=3)])
    assert "setup" not in g and g["count"] == 2
