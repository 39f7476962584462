"""gnnlint verify: runtime verdicts for the fixtures, error targets, output.

The runtime tests run every fixture with a gnnlint_example() in its own
process (forked from one pre-warmed process per worker, two workers) with
the eager backend on CPU: one verification run for all fixtures, shared by the
tests, and one for the helper targets in tests/verify_targets/.
"""
from __future__ import annotations

import dataclasses
import importlib.util
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from verify_shared import settings, shared

from gnnlint.finding import Finding
from gnnlint.verify import CONFIRMED, NOT_EXERCISED, NOT_REPRODUCED, UNEXPECTED, VerifyReport, verify
from gnnlint.verify._runner import Target, resolve_targets
from gnnlint.verify._verdicts import guess_code, judge

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"
TARGETS = Path(__file__).resolve().parent / "verify_targets"

HAVE_TORCH = importlib.util.find_spec("torch") is not None and importlib.util.find_spec("torch_geometric") is not None
needs_torch = pytest.mark.skipif(not HAVE_TORCH, reason="gnnlint[verify] (torch, torch_geometric) not installed")

# Runtime verdicts on torch 2.13 / PyG 2.8.1, CPU, eager backend: for each
# hazard fixture, the verdict every finding of that code must get (and at
# least one such finding must exist).
HAZARD_VERDICTS: dict[str, dict[str, str]] = {
    "item_in_forward_hazard.py": {"GNN001": CONFIRMED},  # .item()/float()/tolist() -> graph breaks
    "float_lr_compiled_step_hazard.py": {"GNN002": CONFIRMED},  # lr guard recompile
    "loader_not_dynamic_hazard.py": {"GNN007": CONFIRMED},  # size-mismatch recompile
    # dynamic=False on varying sizes -> recompiles; CUDA graphs cannot be seen on CPU
    "reduce_overhead_hazard.py": {"GNN007": CONFIRMED, "GNN006": NOT_REPRODUCED},
    "repeat_interleave_hazard.py": {"GNN004": CONFIRMED},
    "sparse_adj_hazard.py": {"GNN005": CONFIRMED},  # sparse graph break + GCNConv crash
    "data_dependent_shape_hazard.py": {"GNN008": CONFIRMED, "GNN009": CONFIRMED},
    "lazy_module_hazard.py": {"GNN012": CONFIRMED},
    "compile_discarded_hazard.py": {"GNN010": CONFIRMED},  # compiled object never called
    # the example's run() drives train()/test(): a host sync per batch at each finding
    "train_loop_sync_hazard.py": {"GNN013": CONFIRMED},
    # nothing failed to compile in this run, so nothing was hidden
    "hidden_errors_hazard.py": {"GNN011": NOT_REPRODUCED},
    # default GCNConv/GATConv and dropout_edge break inside the layer loop
    "layer_graph_break_hazard.py": {"GNN014": CONFIRMED},
    # data.num_nodes in the compiled forward: dynamo skips the frame
    "data_size_hazard.py": {"GNN016": CONFIRMED},
    # every storm, each in its own model: int attribute (+= in forward, set by
    # the loop), list append, float dropout p, a model compiled per configuration
    "recompile_storm_hazard.py": {"GNN015": CONFIRMED},
    # CUDA graphs cannot be seen on CPU
    "max_autotune_hazard.py": {"GNN006": NOT_REPRODUCED},
    # the shorter last chunk: a size-mismatch recompile
    "range_chunks_hazard.py": {"GNN007": CONFIRMED},
    # the example's run() drives the trainer's own loop, which compiles the held model's forward
    "held_compile_sync_hazard.py": {"GNN013": CONFIRMED},
}

# Runtime events in clean twins that are real on torch 2.13 and not a
# verify bug: to_hetero's GraphModule specialises one edge dimension even with
# dynamic=True, so the second input size recompiles once.
KNOWN_CLEAN_EVENTS: dict[str, set[tuple[str, str | None]]] = {
    "lazy_module_clean.py": {("recompile", "GNN007")},
    # the baseline recompile on the second input size, at the compile site
    "layer_graph_break_clean.py": {("recompile", "GNN007")},
}


def _example_files() -> list[Path]:
    return sorted(p for p in FIXTURES.glob("*.py") if "def gnnlint_example" in p.read_text(encoding="utf-8"))


def _settings(**overrides):
    return settings(ROOT, **overrides)


def _shared(tmp_path_factory, name: str, compute):
    return shared(tmp_path_factory, name, compute)


@pytest.fixture(scope="module")
def fixture_reports(tmp_path_factory):
    if not HAVE_TORCH:
        pytest.skip("torch not installed")
    files = _example_files()
    if not files:
        pytest.skip("no fixtures with gnnlint_example() yet")
    report = _shared(tmp_path_factory, "fixtures", lambda: verify(
        [str(p) for p in files], settings=_settings(), backend="eager", device="cpu",
        timeout=240, cwd=ROOT, jobs=2))
    out = {}
    for t in report.targets:
        out[Path(t.result.target.path or t.spec).name] = t
    return out


@pytest.fixture(scope="module")
def helper_report(tmp_path_factory):
    if not HAVE_TORCH:
        pytest.skip("torch not installed")
    specs = [
        str(TARGETS / "vpkg" / "train.py"),  # file inside a package
        "vpkg.train:gnnlint_example",  # module:function (cwd = verify_targets)
        str(TARGETS / "lr_limit.py"),
        str(TARGETS / "raising.py"),
        str(TARGETS / "hanging.py"),
        str(TARGETS / "no_example.py"),
        str(TARGETS / "does_not_exist.py"),
        "no_such_module_xyz:gnnlint_example",
    ]
    report = _shared(tmp_path_factory, "helpers", lambda: verify(
        specs, settings=_settings(), backend="eager", device="cpu", timeout=30, cwd=TARGETS, jobs=2))
    return {t.spec: t for t in report.targets}


def _ok(t):
    assert t.error is None, t.error
    return t


# ------------------------------------------------------------------ fixtures
@needs_torch
@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(HAZARD_VERDICTS))
def test_hazard_fixture_verdicts(fixture_reports, name):
    if name not in fixture_reports:
        pytest.skip(f"{name} not present")
    t = _ok(fixture_reports[name])
    for code, want in HAZARD_VERDICTS[name].items():
        got = [v for v in t.verdicts if v.finding.code == code]
        assert got, f"{name}: no static {code} finding to judge"
        for v in got:
            assert v.verdict == want, (name, code, v.finding.line, v.verdict, v.evidence)
            if want == CONFIRMED:
                assert v.evidence and all(e["line"] for e in v.evidence)
    assert t.data["versions"]["torch"].startswith("2.")


@needs_torch
@pytest.mark.slow
@pytest.mark.parametrize("name, ran_compiled", [
    ("data_size_hazard.py", "none"),  # data.num_nodes: the whole forward frame is skipped
    ("layer_graph_break_hazard.py", "some"),  # breaks: frames resume eagerly after the layer
])
def test_compiled_calls_count_backs_the_new_rules(fixture_reports, name, ran_compiled):
    # issue 15: verify says how much really ran compiled, with the user line
    # that made a frame fall back to eager
    t = _ok(fixture_reports[name])
    compiled = t.data["compiles"]
    assert compiled and all(c["calls"] >= 2 for c in compiled)
    skipped = [f for c in compiled for f in c["frames_skipped"]]
    assert skipped and all(f["file"].endswith(name) and f["line"] for f in skipped)
    if ran_compiled == "none":
        assert all(c["calls_compiled"] == 0 for c in compiled)


@needs_torch
@pytest.mark.slow
def test_each_recompile_storm_is_confirmed_by_its_own_guard(fixture_reports):
    # issue 15: verify reproduces every GNN015 variant, each with the guard
    # that names its value, and reports the silent eager fallback it ends in
    t = _ok(fixture_reports["recompile_storm_hazard.py"])
    guards = {v.finding.line: " | ".join(e["reason"] for e in v.evidence)
              for v in t.verdicts if v.finding.code == "GNN015"}
    assert "self.calls ==" in guards[42]
    assert "self.history" in guards[65]
    assert "p ==" in guards[71]
    assert "self.epoch ==" in guards[101]  # set by the loop, guarded where forward reads it
    assert "Guard failed on a parameter" in guards[115]  # a new model per configuration
    assert not t.unexpected, [(u.line, u.event["reason"]) for u in t.unexpected]
    stats = t.data["compiles"]
    storms = [c for c in stats if c["recompile_limit"]]
    assert {c["target"] for c in storms} >= {"CountingSAGE", "WarmupSAGE", "ProbedSAGE", "DropSAGE", "SAGE"}
    for c in storms:
        if c["target"] != "SAGE":  # 8 of 12 calls compiled, then eager
            assert c["calls_compiled"] < c["calls"], c
    sweep = [c for c in stats if c["target"] == "SAGE"]
    assert len(sweep) == 10 and sweep[-1]["calls_compiled"] == 0  # the last configurations run eagerly


@needs_torch
@pytest.mark.slow
def test_a_reset_per_configuration_keeps_every_call_compiled(fixture_reports):
    # the clean twin calls torch._dynamo.reset() per configuration: verify
    # still counts each model's calls (reset clears dynamo's callbacks)
    t = _ok(fixture_reports["recompile_storm_clean.py"])
    stats = t.data["compiles"]
    assert len(stats) == 14
    for c in stats:
        assert c["calls_compiled"] == c["calls"] and not c["recompile_limit"], c


@needs_torch
@pytest.mark.slow
@pytest.mark.parametrize("name", ["layer_graph_break_clean.py", "data_size_clean.py", "recompile_storm_clean.py",
                                  "compiled_checkpoint_clean.py", "compiled_train_step_clean.py"])
def test_clean_twins_of_the_new_rules_skip_no_frame(fixture_reports, name):
    # issue 15: the clean twins of GNN014-GNN020 show 0 skipped frames and no
    # recompile-limit hit, and every compiled object's calls ran compiled
    t = _ok(fixture_reports[name])
    stats = t.data["compiles"]
    assert stats, name
    for c in stats:
        assert not c["frames_skipped"] and not c["recompile_limit"], (name, c)
        assert c["calls_compiled"] == c["calls"], (name, c)


@needs_torch
@pytest.mark.slow
def test_clean_twins_have_no_confirmed_and_no_unexpected(fixture_reports):
    cleans = [n for n in fixture_reports if n.endswith("_clean.py")]
    assert cleans
    for name in cleans:
        t = _ok(fixture_reports[name])
        assert not t.by_verdict(CONFIRMED), (name, [(v.finding.code, v.finding.line) for v in t.verdicts])
        got = {(u.event["kind"], u.code) for u in t.unexpected}
        assert got <= KNOWN_CLEAN_EVENTS.get(name, set()), (name, [(u.code, u.line, u.event["reason"])
                                                                   for u in t.unexpected])


@needs_torch
@pytest.mark.slow
def test_known_clean_event_is_the_to_hetero_recompile(fixture_reports):
    t = fixture_reports.get("lazy_module_clean.py")
    if t is None:
        pytest.skip("fixture not present")
    for u in _ok(t).unexpected:
        assert u.event["kind"] == "recompile" and "size mismatch" in u.event["reason"]
        assert u.event.get("dynamic") is True


@needs_torch
@pytest.mark.slow
def test_item_in_forward_graph_breaks_are_at_the_lines(fixture_reports):
    t = _ok(fixture_reports["item_in_forward_hazard.py"])
    confirmed = t.by_verdict(CONFIRMED)
    assert len(confirmed) >= 2
    for v in confirmed:
        kinds = {e["kind"] for e in v.evidence}
        assert "graph_break" in kinds
        assert any(e["line"] == v.finding.line for e in v.evidence)
    # the model was compiled with the fixture's own options (dynamic=True)
    assert t.data["model_site"]["dynamic"] is True


@needs_torch
@pytest.mark.slow
def test_float_lr_recompiles_once_on_the_lr_guard_and_tensor_twin_is_clean(fixture_reports):
    t = _ok(fixture_reports["float_lr_compiled_step_hazard.py"])
    (v,) = [v for v in t.verdicts if v.finding.code == "GNN002"]
    (ev,) = v.evidence
    assert ev["kind"] == "recompile"
    assert "param_groups[0]['lr']" in ev["reason"]
    # torch 2.13, default dynamic=None: exactly one recompile, then lr is dynamic
    assert ev["count"] == 1 and ev["dynamic"] is None
    assert any(o["lr_kind"] == "float" for o in t.data["optimizers"])
    clean = _ok(fixture_reports["float_lr_compiled_step_clean.py"])
    assert not clean.by_verdict(CONFIRMED) and not clean.unexpected
    assert all(o["lr_kind"] == "tensor" for o in clean.data["optimizers"])
    # the compiled optimizer step was run compiled, with the user's site
    assert any("step" in c["target"] and c["calls"] >= 2 for c in clean.data["compiles"])


@needs_torch
@pytest.mark.slow
def test_dynamic_false_recompiles_per_size(fixture_reports):
    t = _ok(fixture_reports["reduce_overhead_hazard.py"])
    (v,) = [v for v in t.verdicts if v.finding.code == "GNN007"]
    ev = v.evidence[0]
    assert ev["kind"] == "recompile" and ev["dynamic"] is False
    assert ev["count"] >= 2  # one per new input size
    assert "size mismatch" in ev["reason"]


@needs_torch
@pytest.mark.slow
def test_sparse_adjacency_is_confirmed_at_its_creation(fixture_reports):
    t = _ok(fixture_reports["sparse_adj_hazard.py"])
    (v,) = [v for v in t.verdicts if v.finding.code == "GNN005"]
    kinds = {e["kind"] for e in v.evidence}
    assert kinds & {"graph_break", "compile_error"}
    assert any("sparse" in e["reason"].lower() for e in v.evidence)
    # attributed to the line that builds the adjacency, i.e. the finding
    assert any(e["line"] == v.finding.line for e in v.evidence)


@needs_torch
@pytest.mark.slow
def test_tuple_moduledict_key_is_not_reproduced_on_torch_213(fixture_reports):
    t = _ok(fixture_reports["tuple_moduledict_key_hazard.py"])
    # the rule knows the hazard is gone on torch 2.13: no finding by default ...
    assert not [v for v in t.verdicts if v.finding.code == "GNN003"]
    # ... and the runtime agrees: nothing breaks at those subscripts
    assert not t.unexpected
    # linted for an old torch (where the rule fires), the same run judges it
    from gnnlint.engine import lint_paths

    files = sorted(t.data["coverage"])
    old = [f for f in lint_paths([Path(f) for f in files], _settings(torch_version="2.1.0"))
           if f.code == "GNN003"]
    assert old
    verdicts, unexpected = judge(old, t.data["events"], t.data["coverage"], t.data["versions"])
    assert {v.verdict for v in verdicts} == {NOT_REPRODUCED}
    assert all("2.13" in v.note for v in verdicts)


@needs_torch
@pytest.mark.slow
def test_report_outputs(fixture_reports):
    from gnnlint.verify import _output

    hazard = VerifyReport([fixture_reports["item_in_forward_hazard.py"]])
    clean = VerifyReport([fixture_reports["item_in_forward_clean.py"]])
    assert hazard.exit_code == 1 and clean.exit_code == 0
    buf = io.StringIO()
    _output.render(hazard, "json", buf, False)
    entries = json.loads(buf.getvalue())
    assert entries and all(e["verdict"] in (CONFIRMED, NOT_REPRODUCED, NOT_EXERCISED, UNEXPECTED, "run")
                           for e in entries)
    (run,) = [e for e in entries if e["verdict"] == "run"]
    assert run["code"] is None and run["compiled"] and run["compiled"][0]["calls"] >= 2
    conf = [e for e in entries if e["verdict"] == CONFIRMED]
    assert conf
    for e in conf:
        # the check format's keys plus verdict/evidence
        assert {"code", "filename", "location", "end_location", "message", "noqa_row"} <= set(e)
        assert {"kind", "reason", "count", "file", "line"} <= set(e["evidence"][0])
    for e in entries:
        if e["verdict"] == UNEXPECTED:
            assert "code" in e and e["evidence"]
    buf = io.StringIO()
    _output.render(hazard, "sarif", buf, False)
    log = json.loads(buf.getvalue())
    results = log["runs"][0]["results"]
    assert results and all("verdict" in r["properties"] for r in results)
    buf = io.StringIO()
    _output.render(hazard, "full", buf, False)
    text = buf.getvalue()
    assert "confirmed" in text and "item_in_forward_hazard.py" in text and "torch 2." in text


# ------------------------------------------------------------ helper targets
@needs_torch
@pytest.mark.slow
def test_package_target_relative_import_and_sibling_findings(helper_report):
    t = _ok(helper_report[str(TARGETS / "vpkg" / "train.py")])
    by_file = {(Path(v.finding.path).name, v.finding.code): v for v in t.verdicts}
    # .item() in the sibling module's forward, compiled by train.py: a graph break
    v = by_file[("models.py", "GNN001")]
    assert v.verdict == CONFIRMED and v.evidence[0]["kind"] == "graph_break"
    # float(loss) in the user's own train loop (the example's run()): a host sync
    v = by_file[("train.py", "GNN013")]
    assert v.verdict == CONFIRMED and v.evidence[0]["kind"] == "host_sync"
    # compiled with train.py's dynamic=False: recompiles no rule predicted here
    recs = [u for u in t.unexpected if u.event["kind"] == "recompile"]
    assert recs and all(u.code == "GNN007" for u in recs)
    assert all(Path(u.path).name == "train.py" for u in recs)
    assert t.data["model_site"]["dynamic"] is False


@needs_torch
@pytest.mark.slow
def test_float_lr_dynamic_false_recompiles_until_the_limit(helper_report):
    t = _ok(helper_report[str(TARGETS / "lr_limit.py")])
    (v,) = [v for v in t.verdicts if v.finding.code == "GNN002"]
    assert v.verdict == CONFIRMED
    (ev,) = [e for e in v.evidence if e["kind"] == "recompile"]
    # 12 lr changes, recompile_limit 8: 8 recompiles, then the step runs eagerly
    assert ev["dynamic"] is False and ev["limit_hit"] and ev["count"] == 8
    assert "runs eagerly" in ev["summary"]


@needs_torch
@pytest.mark.slow
def test_module_function_target(helper_report):
    t = _ok(helper_report["vpkg.train:gnnlint_example"])
    assert {v.verdict for v in t.verdicts if v.finding.code == "GNN001"} == {CONFIRMED}


@needs_torch
@pytest.mark.slow
def test_raising_target_is_a_clear_error(helper_report):
    t = helper_report[str(TARGETS / "raising.py")]
    assert t.error["kind"] == "exception"
    assert "ValueError: boom" in t.error["message"] and "raising.py:5" in t.error["message"]


@needs_torch
@pytest.mark.slow
def test_hanging_target_times_out(helper_report):
    t = helper_report[str(TARGETS / "hanging.py")]
    assert t.error["kind"] == "timeout" and "30 s" in t.error["message"]
    # the child's --max-seconds budget stopped it (not the parent's hard kill)
    assert "it was stopped" in t.error["message"], t.error


@needs_torch
@pytest.mark.slow
def test_missing_targets_are_not_found(helper_report):
    for spec in (str(TARGETS / "does_not_exist.py"), "no_such_module_xyz:gnnlint_example"):
        t = helper_report[spec]
        assert t.error and t.error["kind"] == "not-found", (spec, t.error)
        assert spec in t.error["message"]
    report = VerifyReport(list(helper_report.values()))
    assert report.exit_code == 2


@needs_torch
@pytest.mark.slow
def test_file_without_example_runs_as_a_script(helper_report):
    # no gnnlint_example(): the file is the program; this one defines main()
    # but never calls it, so nothing compiled ran and nothing is judged
    t = _ok(helper_report[str(TARGETS / "no_example.py")])
    assert t.result.target.kind == "script"
    assert t.program == {"status": "completed"}
    assert t.data["compiles"] == [] and t.verdicts == []


@needs_torch
@pytest.mark.slow
def test_run_verify_exit_code_and_json_for_errors():
    from gnnlint.verify import run_verify

    buf = io.StringIO()
    code = run_verify([str(TARGETS / "does_not_exist.py"), str(TARGETS / "no_such_dir" / "x.py")],
                      settings=_settings(), backend="eager", device="cpu", timeout=60,
                      output_format="json", out=buf, color=False)
    assert code == 2
    entries = json.loads(buf.getvalue())
    assert [e["verdict"] for e in entries] == ["error", "error"]
    assert all(e["code"] is None and e["message"] for e in entries)


# ------------------------------------------------------------ fast unit tests
def test_import_does_not_import_torch():
    code = ("import sys, gnnlint.verify, gnnlint.verify._output, gnnlint.verify._sites, "
            "gnnlint.verify._runner, gnnlint.verify._verdicts; print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_resolve_targets(tmp_path):
    (tmp_path / "a.py").write_text("def gnnlint_example():\n    pass\n")
    (tmp_path / "b.py").write_text("x = 1\n")
    items = resolve_targets(["a.py", "a.py:make", str(tmp_path), "pkg.mod:fn", "pkg.mod", "nope.py", "a b"],
                            tmp_path)
    kinds = [(i.kind, i.function) if isinstance(i, Target) else ("error", i.error["kind"]) for i in items]
    assert kinds == [("file", None), ("file", "make"), ("file", None), ("module", "fn"), ("module", None),
                     ("error", "not-found"), ("error", "not-found")]
    # a file without gnnlint_example() (or any file with as_script) is run as
    # a script, with the program's arguments; -m NAME runs a module
    items = resolve_targets(["b.py", "a.py"], tmp_path, modules=["pytest"], argv=["--x", "1"], as_script=False)
    assert [(i.kind, i.argv) for i in items] == [("script", ["--x", "1"]), ("file", ["--x", "1"]),
                                                 ("run_module", ["--x", "1"])]
    (a,) = resolve_targets(["a.py"], tmp_path, as_script=True)
    assert a.kind == "script" and a.runs_program


def test_sites_scan(tmp_path):
    from gnnlint.verify._sites import scan_files

    p = tmp_path / "train.py"
    p.write_text(
        "import torch as T\n"
        "from torch import compile as c\n"
        "model = GCN(3).to('cpu')\n"
        "model = T.compile(model, dynamic=False, mode='reduce-overhead')\n"
        "opt = T.optim.Adam(model.parameters(), lr=0.1)\n"
        "step = c(opt.step)\n"
        "@T.compile(fullgraph=True)\n"
        "def f(x):\n"
        "    return x\n"
        "import re\n"
        "re.compile('x')\n"
    )
    scan = scan_files([p])
    gcn = scan["classes"]["GCN"]
    assert (gcn["line"], gcn["dynamic"], gcn["mode"], gcn["fullgraph"]) == (4, False, "reduce-overhead", False)
    assert scan["step"]["line"] == 6
    assert scan["any"]


def _f(code, line, end_line=None, path="/x/m.py", noqa_line=0):
    return Finding(path=path, line=line, col=1, end_line=end_line or line, end_col=5, code=code,
                   name="n", message="m", noqa_line=noqa_line)


def test_judge_verdicts():
    events = [
        {"kind": "graph_break", "reason": "Unsupported Tensor.item() call", "frames": [["/x/m.py", 10, "f"]],
         "context": [["/x/m.py", 3, "f"]], "count": 1},
        {"kind": "recompile", "reason": "self.param_groups[0]['lr'] == 0.01", "lr_guard": True,
         "frames": [["/x/m.py", 20, "f"], ["/x/m.py", 22, "f"]], "context": [], "count": 1, "dynamic": None},
        {"kind": "host_sync", "reason": "host sync: .item()", "frames": [["/x/m.py", 40, "f"]],
         "context": [], "count": 3},
    ]
    findings = [
        _f("GNN001", 10),  # graph break at its line
        _f("GNN001", 12, noqa_line=11),  # statement 11-12 ran, nothing there
        _f("GNN002", 20),  # lr recompile
        _f("GNN007", 22),  # recompile at its line but an lr guard: not GNN007's
        _f("GNN001", 30),  # never ran
    ]
    coverage = {"/x/m.py": [9, 10, 11, 20, 22, 40]}
    verdicts, unexpected = judge(findings, events, coverage, {"torch": "2.13.0", "torch_geometric": "2.8.1"})
    assert [v.verdict for v in verdicts] == [CONFIRMED, NOT_REPRODUCED, CONFIRMED, NOT_REPRODUCED, NOT_EXERCISED]
    assert "torch 2.13.0" in verdicts[1].note
    assert [(u.code, u.line) for u in unexpected] == [("GNN001", 40)]


def test_judge_once_per_epoch_syncs_are_neither_evidence_nor_unexpected():
    rare = {"kind": "host_sync", "reason": "host sync: .item()", "frames": [["/x/m.py", 50, "train"]],
            "context": [], "count": 2, "rare": True, "steps": 40}
    per_step = {"kind": "host_sync", "reason": "host sync: .item()", "frames": [["/x/m.py", 45, "train"]],
                "context": [], "count": 40}
    verdicts, unexpected = judge([_f("GNN001", 50), _f("GNN001", 45)], [rare, per_step], {"/x/m.py": [45, 50]},
                                 {"torch": "2.13.0", "torch_geometric": "2.8.1"})
    assert [v.verdict for v in verdicts] == [NOT_REPRODUCED, CONFIRMED]
    assert "synced 2 times while the model ran 40 times" in verdicts[0].note
    _, unexpected = judge([], [rare], {}, {})
    assert unexpected == []


def test_guess_code():
    assert guess_code({"kind": "recompile", "reason": "tensor 'x' size mismatch at index 0", "lr_guard": False}) == "GNN007"
    assert guess_code({"kind": "graph_break", "reason": "Attempted to wrap sparse Tensor"}) == "GNN005"
    assert guess_code({"kind": "graph_break", "reason": "Operator `aten.repeat_interleave.Tensor`"}) == "GNN004"
    assert guess_code({"kind": "graph_break", "reason": "Unsupported Tensor.item() call",
                       "origin": ["/site-packages/torch_geometric/utils/_scatter.py", 48]}) == "GNN009"
    assert guess_code({"kind": "host_sync", "reason": "host sync: .item()"}) == "GNN001"
    assert guess_code({"kind": "compile_error", "reason": "IndexError: tuple index out of range"}) is None


def test_targets_from_settings_when_none_given(tmp_path):
    s = _settings()
    s.verify.targets = ["does_not_exist.py", "no_such_dir/x.py"]
    report = verify([], settings=s, cwd=tmp_path)  # both resolve to errors: no process starts
    assert [t.error["kind"] for t in report.targets] == ["not-found", "not-found"]
    assert report.exit_code == 2
    s.verify.targets = []
    report = verify([], settings=s, cwd=tmp_path)
    assert report.exit_code == 2 and "no targets" in report.targets[0].error["message"]


def test_miss_summary_one_line_per_class():
    from gnnlint.verify._verdicts import Unexpected, miss_summary

    lib = "/venv/lib/python3.11/site-packages/torch_geometric/utils/loop.py"
    ev = {"kind": "graph_break", "reason": "Dynamic shape operator", "count": 3, "origin": [lib, 650, "f"]}
    us = [Unexpected("GNN014", ev, "/p/models.py", 41), Unexpected("GNN014", dict(ev, count=2), "/p/models.py", 41),
          Unexpected(None, {"kind": "recompile", "reason": "x", "count": 1}, "/p/train.py", 9)]
    assert miss_summary(us, lambda p: p.rsplit("/", 1)[1]) == [
        "5 graph breaks inside PyG's utils/loop.py (f) reached from models.py:41 [GNN014]",
        "1 recompile reached from train.py:9 [no rule]"]


def test_benign_events_never_confirm_and_are_not_unexpected():
    from gnnlint.verify._verdicts import benign_counts

    grad = {"kind": "recompile", "reason": "GLOBAL_STATE changed: grad_mode", "frames": [["/x/m.py", 5, "f"]],
            "context": [], "count": 2, "dynamic": None}
    req = {"kind": "recompile", "reason": "tensor 'x' requires_grad mismatch. expected requires_grad=1",
           "frames": [["/x/m.py", 5, "f"]], "context": [], "count": 1}
    train = {"kind": "recompile", "reason": "self.training == True", "frames": [["/x/m.py", 5, "f"]],
             "context": [], "count": 1}
    storm = dict(train, count=6)
    verdicts, unexpected = judge([_f("GNN007", 5)], [grad, req, train, storm], {"/x/m.py": [5]}, {})
    assert [v.verdict for v in verdicts] == [NOT_REPRODUCED]  # only the storm is left, and it is no GNN007
    (u,) = unexpected
    assert u.code is None and "every train()/eval() switch (6)" in u.event["reason"]
    counts = benign_counts([grad, req, train, storm])
    assert counts == {"grad-mode recompiles (training, then evaluation under no_grad)": 2,
                      "requires_grad recompiles": 1, "training-flag recompiles (train()/eval() switch)": 1}


def test_layer_and_storm_rules_take_only_their_own_events(tmp_path):
    src = tmp_path / "m.py"
    src.write_text("import torch\nclass Net:\n    def __init__(self):\n        self.conv1 = GCNConv(8, 8)\n"
                   "    def forward(self, x, ei):\n        return self.conv1(x, ei)\n")
    path = str(src.resolve())
    loop = "/venv/site-packages/torch_geometric/utils/loop.py"
    msg = ("`GCNConv(...)` without `add_self_loops=False` breaks the graph on every call of `self.conv1` in the "
           "compiled forward of `Net` (`utils/loop.py:650` (`add_remaining_self_loops`), `nonzero`)")
    layer = Finding(path=path, line=4, col=1, end_line=4, end_col=5, code="GNN014", name="n", message=msg)
    brk = {"kind": "graph_break", "reason": "Dynamic shape operator", "frames": [[path, 6, "forward"]],
           "context": [], "count": 2, "origin": [loop, 650, "add_remaining_self_loops"]}
    err = dict(brk, kind="compile_error", reason="IndexError: tuple index out of range")
    v, _ = judge([layer], [brk], {path: [4, 6]}, {})
    assert v[0].verdict == CONFIRMED  # the break inside PyG, reached through self.conv1
    v, _ = judge([layer], [err], {path: [4, 6]}, {})
    assert v[0].verdict == NOT_REPRODUCED  # an error in the same PyG file is not the layer's break
    storm = _f("GNN015", 9)
    size = {"kind": "recompile", "reason": "tensor 'x' size mismatch at index 0. expected 64, actual 40",
            "frames": [["/x/m.py", 9, "f"]], "context": [], "count": 1, "shape_guard": True, "dynamic": True}
    value = dict(size, reason="self.step == 0", shape_guard=False, count=8, limit_hit=True)
    assert judge([storm], [size], {"/x/m.py": [9]}, {})[0][0].verdict == NOT_REPRODUCED
    assert judge([storm], [value], {"/x/m.py": [9]}, {})[0][0].verdict == CONFIRMED


def test_guard_user_frames_come_from_dynamos_user_stack(tmp_path):
    from gnnlint.verify import _child

    src = tmp_path / "m.py"
    src.write_text("x = 1\n")
    _child.USER.add_root(str(tmp_path))
    reason = ("0/2: len(self.hist) == 2                    # self.hist.append(h)  # m.py:10 in forward\n"
              "User stack trace:\n"
              f'  File "{src}", line 10, in forward\n    self.hist.append(h)\n'
              '  File "/venv/site-packages/torch_geometric/nn/conv/sage_conv.py", line 5, in f\n    y\n')
    assert _child.guard_user_frames(reason) == [[os.path.realpath(str(src)), 10, "forward"]]
    assert _child.guard_user_frames("0/0: tensor 'x' size mismatch at index 0. expected 3, actual 4") == []


def test_storm_findings_take_the_guard_of_their_value(tmp_path):
    from gnnlint.verify._verdicts import guard_subject

    src = tmp_path / "m.py"
    lines = ["import torch"] * 20
    lines[4] = "        h = F.dropout(h, p=p, training=True)"
    lines[9] = "        warm.epoch = epoch"
    src.write_text("\n".join(lines) + "\n")
    path = str(src.resolve())

    def ev(reason, frames, **kw):
        return dict({"kind": "recompile", "reason": reason, "frames": frames, "context": [],
                     "origin": [path, 3, "forward"], "count": 7, "limit_hit": True}, **kw)

    site = [[path, 15, "main"]]
    drop = _f("GNN015", 5, path=path)
    epoch = dataclasses.replace(_f("GNN015", 10, path=path),
                                message="`warm.epoch` is set ... the compiled forward of `Warm` reads `self.epoch`")
    compile_site = _f("GNN015", 15, path=path)
    p_guard = ev("p == 0.4583333333333333", [[path, 12, "main"]])  # an input: dynamo names no line
    epoch_guard = ev("self.epoch == 3", [[path, 4, "forward"]])
    param_guard = ev("tensor 'self._modules['conv1']._parameters['bias']' size mismatch at index 0. "
                     "expected 8, actual 12. Guard failed on a parameter", site, shape_guard=True)
    assert [guard_subject(e) for e in (p_guard, epoch_guard, param_guard)] == ["p", "self.epoch", None]
    assert guard_subject(ev("not self.history", site)) == "self.history"
    assert guard_subject(ev("len(self.history) == 2", site)) == "self.history"
    cov = {path: [5, 10, 15]}
    verdicts, unexpected = judge([drop, epoch], [p_guard, epoch_guard], cov, {})
    assert [v.verdict for v in verdicts] == [CONFIRMED, CONFIRMED] and not unexpected
    assert judge([epoch], [p_guard], cov, {})[0][0].verdict == NOT_REPRODUCED  # another value's storm
    # the per-configuration compile: the parameter guard at its site, not another storm's guard
    assert judge([compile_site], [param_guard], cov, {})[0][0].verdict == CONFIRMED
    assert judge([compile_site], [epoch_guard], cov, {})[0][0].verdict == NOT_REPRODUCED


@pytest.fixture(scope="module")
def storm_targets_report(tmp_path_factory):
    if not HAVE_TORCH:
        pytest.skip("torch not installed")
    storms = TARGETS / "storms"
    report = _shared(tmp_path_factory, "storms", lambda: verify(
        [str(storms / "basic_gnn_norm.py")], settings=_settings(), backend="eager", device="cpu",
        timeout=120, cwd=storms, jobs=1))
    return {Path(t.result.target.path or t.spec).name: t for t in report.targets}


@needs_torch
@pytest.mark.slow
def test_basic_gnn_graph_norm_without_batch_size_runs_the_whole_forward_eagerly(storm_targets_report):
    # GNN009: GraphSAGE(norm="graph_norm") called with batch and no batch_size;
    # the twin model called with batch_size compiles every call
    t = _ok(storm_targets_report["basic_gnn_norm.py"])
    (v,) = [v for v in t.verdicts if v.finding.code == "GNN009"]
    assert v.verdict == CONFIRMED and v.finding.line == 25
    assert any("item()" in e["reason"] for e in v.evidence)
    unsized, sized = sorted(t.data["compiles"], key=lambda c: c["site"][1])
    # the model's own forward (basic_gnn.py) is skipped: no call ran it compiled
    assert unsized["calls_compiled"] == 0 and unsized["calls"] == 3
    assert any(f["file"].endswith("basic_gnn.py") for f in unsized["frames_skipped"])
    assert sized["calls_compiled"] == 3 and not sized["frames_skipped"]
