"""gnnlint verify on the user's own programs, unchanged: scripts with a main
guard and argparse, a package run with -m, the user's pytest tests, a long
training run stopped by the budget, sys.exit, a checkpoint, DataLoader
workers; and hostile ones (a detached child, a memory hog, lots of output,
Ctrl-C). The programs live in tests/verify_targets/programs and hostile/;
each test run copies them to a temporary directory and runs them there.
"""
from __future__ import annotations

import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from verify_shared import settings, shared

from gnnlint.verify import CONFIRMED, NOT_EXERCISED, verify

ROOT = Path(__file__).resolve().parents[1]
PROGRAMS = Path(__file__).resolve().parent / "verify_targets" / "programs"
HOSTILE = Path(__file__).resolve().parent / "verify_targets" / "hostile"

HAVE_TORCH = importlib.util.find_spec("torch") is not None and importlib.util.find_spec("torch_geometric") is not None
pytestmark = [pytest.mark.skipif(not HAVE_TORCH, reason="gnnlint[verify] (torch, torch_geometric) not installed"),
              pytest.mark.slow]

PROGRAM_TARGETS = ["long_train.py", "exits.py", "checkpoint.py", "workers.py", "fullbatch_log.py"]
MODULE_TARGETS = ["trainpkg.train", "pytest"]


def _copy_programs(dest: Path) -> Path:
    shutil.copytree(PROGRAMS, dest)
    # the user's test file (stored under another name so gnnlint's own
    # pytest run does not collect it)
    (dest / "model_train_tests.py").rename(dest / "test_model_train.py")
    return dest


@pytest.fixture(scope="module")
def programs(tmp_path_factory):
    def compute():
        work = _copy_programs(tmp_path_factory.mktemp("programs") / "proj")
        report = verify(PROGRAM_TARGETS, modules=MODULE_TARGETS, settings=settings(ROOT), backend="eager",
                        device="cpu", timeout=90, cwd=work, jobs=2)
        files = {name: (work / name).read_text() if (work / name).exists() else None
                 for name in ("long_train.done",)}
        files["model.pt"] = (work / "model.pt").exists()
        return str(work), {t.spec: t for t in report.targets}, files

    return shared(tmp_path_factory, "programs", compute)


def _ok(t):
    assert t.error is None, (t.error, t.log_path)
    return t


def _verdicts(t) -> dict[tuple[str, int, str], str]:
    return {(Path(v.finding.path).name, v.finding.line, v.finding.code): v.verdict for v in t.verdicts}


def test_argparse_script_runs_as_python_would(tmp_path):
    """gnnlint verify train.py -- ARGS: the program's own argv, __file__ and
    __name__, a sibling import; verdicts on its own lines; output in a log."""
    work = _copy_programs(tmp_path / "proj")
    out = subprocess.run(
        [sys.executable, "-m", "gnnlint", "verify", "argparse_train.py", "--output-format", "json",
         "--max-seconds", "90", "--", "--epochs", "4", "--report", "report.json"],
        cwd=work, capture_output=True, text=True, timeout=300)
    assert out.returncode == 1, out.stderr  # a finding was confirmed
    entries = json.loads(out.stdout)  # the program's prints never reach the report
    report = json.loads((work / "report.json").read_text())
    assert report == {"argv_epochs": 4, "losses": 4, "acc": report["acc"],
                      "file": str(work / "argparse_train.py"), "name": "__main__"}
    (run,) = [e for e in entries if e["verdict"] == "run"]
    assert run["program"] == {"status": "completed"}
    assert run["compiled"][0]["calls"] == 5  # 4 training steps + evaluation
    assert Path(run["log"]).is_file()
    assert run["benign"].get("grad-mode recompiles (training, then evaluation under no_grad)", 0) >= 1
    got = {(e["location"]["row"], e["code"]): e["verdict"] for e in entries if e.get("filename")}
    assert got[(20, "GNN001")] == CONFIRMED  # .item() in the compiled forward: a graph break
    assert got[(50, "GNN013")] == CONFIRMED  # loss.item() every step: a host sync
    assert got[(52, "GNN013")] == NOT_EXERCISED  # only with --debug
    # no grad-mode recompile is shown as evidence
    for e in entries:
        for ev in e.get("evidence") or []:
            assert "grad_mode" not in ev["reason"]


def test_package_module_run_with_dash_m(programs):
    _, targets, _ = programs
    t = _ok(targets["-m trainpkg.train"])
    assert t.program == {"status": "completed"}
    v = _verdicts(t)
    assert v[("models.py", 13, "GNN008")] == CONFIRMED  # boolean mask in the compiled forward
    assert v[("models.py", 14, "GNN009")] == CONFIRMED  # global_mean_pool without size
    assert v[("train.py", 18, "GNN007")] == CONFIRMED  # variable-size batches recompile
    assert t.data["compiles"][0]["calls"] == 4


def test_users_pytest_tests(programs):
    _, targets, _ = programs
    t = _ok(targets["-m pytest"])
    assert t.program["status"] == "exit" and t.program["exit_code"] == 0  # both tests passed
    assert t.data["compiles"][0]["calls"] == 5
    # GCNConv's default self-loop handling breaks the graph inside PyG
    # (utils/loop.py): GNN014 points at the constructors, and the breaks
    # reached from the forward's calls of self.conv1/self.conv2 confirm them
    v = _verdicts(t)
    assert v[("test_model_train.py", 12, "GNN014")] == CONFIRMED
    assert v[("test_model_train.py", 13, "GNN014")] == CONFIRMED
    assert not [u for u in t.unexpected if u.event["kind"] == "graph_break"]
    # the forward is unrolled: every call still ran (partly) compiled
    assert t.data["compiles"][0]["calls_compiled"] == 5


def test_budget_stops_a_long_training_run_cleanly(programs):
    _, targets, files = programs
    t = _ok(targets["long_train.py"])
    assert t.program["status"] == "stopped" and t.program["by"] == "max-calls"
    assert t.budget["stopped_by"] == "max-calls"
    # 1 compiling call + 50 more, then the next call is stopped
    assert t.data["compiles"][0]["calls"] == 51
    # the program's finally block ran; its `except Exception` did not swallow the stop
    assert files["long_train.done"] == "finally ran after step 51\n"
    assert "must not swallow" not in Path(t.log_path).read_text()
    assert t.budget["detail"].startswith("--max-calls 50:"), t.budget


def test_conditional_logging_in_a_full_batch_loop_is_a_per_step_sync(programs):
    """`if epoch % 5 == 0: print(loss.item())` syncs once every 5 compiled calls;
    the finding's step loop (the epoch loop, one compiled call per iteration)
    makes it a per-step sync under a condition, not a once-per-epoch read."""
    _, targets, _ = programs
    t = _ok(targets["fullbatch_log.py"])
    (v,) = [v for v in t.verdicts if v.finding.code == "GNN013"]
    assert (v.finding.line, v.finding.step_loop, v.verdict) == (30, 24, CONFIRMED)
    assert v.evidence[0]["count"] == 8 and v.evidence[0]["line"] == 30
    assert "8 times in 40 iterations of the step loop at line 24, each running 1 compiled call" in v.note
    # the repeat_interleave in the setup, before any compiled code ran, confirms GNN004 (which
    # flags it wherever it runs) and is no unexpected event
    assert _verdicts(t)[("fullbatch_log.py", 21, "GNN004")] == CONFIRMED
    assert not [u for u in t.unexpected if u.line == 21]


def test_program_exit_status_is_reported_not_an_error(programs):
    _, targets, _ = programs
    t = _ok(targets["exits.py"])
    assert t.program == {"status": "exit", "exit_code": 3}
    assert _verdicts(t)[("exits.py", 15, "GNN013")] == CONFIRMED  # if tensor.any(): every step


def test_checkpoint_is_written(programs):
    work, targets, files = programs
    t = _ok(targets["checkpoint.py"])
    assert t.program == {"status": "completed"}
    assert files["model.pt"]
    assert t.data["compiles"][0]["calls"] == 3
    # the wrapper's state_dict() ran at the finding's line: confirmed (a new user's trial got
    # "not reproduced" for a checkpoint whose keys were all `_orig_mod.`-prefixed)
    assert _verdicts(t)[("checkpoint.py", 24, "GNN018")] == CONFIRMED
    assert not [u for u in t.unexpected if u.event["kind"] == "compiled_state_dict"]


def test_dataloader_worker_processes(programs):
    _, targets, _ = programs
    t = _ok(targets["workers.py"])
    assert t.program == {"status": "completed"}
    assert t.data["compiles"][0]["calls"] == 8  # 2 epochs x 4 batches
    assert _verdicts(t)[("workers.py", 18, "GNN001")] == CONFIRMED
    log = Path(t.log_path).read_text()
    assert "total" in log


# --------------------------------------------------------------- hostile
@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    def compute():
        work = tmp_path_factory.mktemp("hostile") / "proj"
        shutil.copytree(HOSTILE, work)
        pidfile = work / "detached.pid"
        report = verify(["detach.py", "chatty.py"], settings=settings(ROOT), backend="eager", device="cpu",
                        timeout=60, cwd=work, jobs=2, argv=[str(pidfile)])
        hog = verify(["hog.py"], settings=settings(ROOT), backend="eager", device="cpu", timeout=60, cwd=work,
                     max_memory=3 * 2**30)
        return str(work), {t.spec: t for t in report.targets + hog.targets}, pidfile.read_text()

    return shared(tmp_path_factory, "hostile", compute)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ")[1][0] != "Z"
    except OSError:
        return False


def test_detached_grandchild_is_ended(hostile):
    _, targets, pid = hostile
    assert _ok(targets["detach.py"]).program == {"status": "completed"}
    assert not _alive(int(pid))


def test_output_goes_to_the_log_not_the_report(hostile):
    _, targets, _ = hostile
    t = _ok(targets["chatty.py"])
    log = Path(t.log_path)
    assert log.stat().st_size > 20_000_000
    assert "chatty: last line on stderr" in log.read_text()[-200:]


def test_memory_limit_is_a_clear_target_error(hostile):
    _, targets, _ = hostile
    t = targets["hog.py"]
    assert t.error and t.error["kind"] == "memory", t.error
    assert "ran out of memory" in t.error["message"] and "--max-memory 3.0 GB" in t.error["message"]


def test_max_seconds_stops_the_program_and_its_finally_runs(tmp_path):
    shutil.copy(HOSTILE / "sleeper.py", tmp_path)
    # the budget must let the program reach its loop (and its try block) even
    # on a loaded machine; what is asserted is why it stopped, not when
    report = verify(["sleeper.py"], settings=settings(ROOT), backend="eager", device="cpu", timeout=30,
                    cwd=tmp_path, max_calls=None, argv=[str(tmp_path / "marker")])
    (t,) = report.targets
    assert _ok(t).program["status"] == "stopped" and t.program["by"] == "max-seconds"
    # the budget's reason is in the report: the child's own stop, not the parent's kill
    assert t.program["detail"].startswith("--max-seconds 30:"), t.program
    assert t.budget["stopped_by"] == "max-seconds"
    assert (tmp_path / "marker").read_text() == "finally ran\n"
    assert not _alive(int((tmp_path / "marker.pid").read_text()))


def test_ctrl_c_ends_the_target_and_exits_promptly(tmp_path):
    shutil.copy(HOSTILE / "sleeper.py", tmp_path)
    marker = tmp_path / "marker"
    proc = subprocess.Popen([sys.executable, "-m", "gnnlint", "verify", "sleeper.py", "--max-calls", "0",
                             "--", str(marker)], cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    pidfile = tmp_path / "marker.pid"
    deadline = time.time() + 120
    while not pidfile.exists() and time.time() < deadline and proc.poll() is None:
        time.sleep(0.2)
    assert pidfile.exists(), proc.communicate()
    target = int(pidfile.read_text())
    group = os.getpgid(target)
    proc.send_signal(signal.SIGINT)
    try:  # a verify that hangs on Ctrl-C fails here
        _, err = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        pytest.fail("gnnlint verify was still running 30 s after Ctrl-C")
    assert proc.returncode == 130 and "interrupted" in err and "Traceback" not in err
    for _ in range(50):  # killed processes may take a moment to be reaped
        if not _group_members(group):
            break
        time.sleep(0.1)
    assert not _alive(target)
    assert not _group_members(group), "the target's process group outlived verify"


def _group_members(pgid: int) -> list[int]:
    """Live processes in the process group ``pgid``."""
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(") ", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            out.append(int(entry))
    return out


def test_an_interrupt_ends_the_processes_verify_started_even_before_they_joined_a_target(tmp_path):
    # A zygote still starting up when Ctrl-C/SIGTERM came was in no target's
    # tree: it (and what it forked) outlived verify, re-parented to init.
    from gnnlint.verify import _procs

    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"], start_new_session=True)
    _procs.register_child(proc.pid)
    try:
        _procs.end_all()
        proc.wait(timeout=30)  # a survivor fails here
        assert proc.returncode == -signal.SIGKILL
    finally:
        _procs.forget_child(proc.pid)
        if proc.poll() is None:
            proc.kill()
