"""The verify child's result: what the harness saw turned into the JSON the
parent reads (:func:`finish`), written atomically, an error result for a
target that failed, and leaving without interpreter teardown."""
from __future__ import annotations

import json
import os
import sys
import time
import traceback
from typing import TYPE_CHECKING, Any

from gnnlint.verify.child.frames import TargetError, real_path, tb_user_frames
from gnnlint.verify.child.metrics import (
    cover_code,
    mark_rare_syncs,
    aggregate,
    collect_metrics,
    compiled_stats,
)
from gnnlint.verify.child.values import jsonable

if TYPE_CHECKING:
    from gnnlint.verify.child.harness import Harness


def finish(h: Harness, result: dict, t0: float, lap, *, steps: Any, rare: bool = True) -> dict:
    """Turn what the harness saw into the result: metrics, events, coverage."""
    collect_metrics(h)
    for r in h.compiles:
        # a torch.compile in the user's code whose result never ran: the
        # compile was discarded (GNN010). Evidence only, never "unexpected"
        # (an example may build compiled objects it does not use).
        if r["origin"] == "user" and r["calls"] == 0 and r["site"]:
            h.add_event("compile_unused", f"the result of this compile of `{r['target']}` was never called",
                        [r["site"]], rec=r, extra={"confirm_only": True})
    for code in h.skipped:
        cover_code(h, code)

    if rare:
        mark_rare_syncs(h)
    result["events"] = aggregate(h.events)
    result["internal"] = aggregate(h.internal)
    result["coverage"] = h.coverage.as_json()
    result["loops"] = h.coverage.loops.as_json(real_path)
    stats = compiled_stats(h)
    result["compiles"] = [{
        "site": r["site"], "origin": r["origin"], "target": r["target"], "options": r["options"],
        "backend": r["backend"], "calls": r["calls"], "distinct_shapes": len(r["shapes"]), **stats[i],
    } for i, r in enumerate(h.compiles)]
    result["optimizers"] = [{k: v for k, v in o.items() if k != "ref"} for o in h.optimizers.values()]
    result["steps"] = steps
    result["notes"] = h.notes
    result["benign"] = dict(h.benign)
    budget = result.get("budget")
    if budget is not None and not isinstance(budget, dict):
        result["budget"] = budget.as_json()
    result["seconds"] = round(time.time() - t0, 2)
    return result


def give_up(h: Harness, job: dict, result: dict, t0: float) -> None:
    """The program kept running after repeated budget interrupts: report what
    was seen so far and leave (called from the SIGALRM handler)."""
    budget = h.budget
    try:
        h.coverage.stop()
        h.modes_exit()
        h.recording = False
        result["program"] = {"status": "stopped", "by": budget.stopped_by if budget else "max-seconds",
                             "detail": (budget.detail if budget else "") +
                             "; the program did not stop when interrupted, so verify ended it"}
        out = finish(h, result, t0, lambda name: None, steps="the program's own")
    except BaseException as e:  # noqa: BLE001 - anything here must still leave
        out = {"target": job["target"], "error": {
            "kind": "timeout", "message": f"the program did not stop when its budget was spent ({e})"}}
    try:
        write_result(job, out)
    finally:
        leave(0)


def limit_memory(limit: int | None, device: str | None = None) -> None:
    """``--max-memory``: the address space the target may map (RLIMIT_AS).
    An allocation past it raises MemoryError (or torch's "can't allocate
    memory"), which is reported as a target error. CUDA reserves far more
    address space than it uses, so there the data segment is limited
    instead (RLIMIT_DATA)."""
    if not limit:
        return
    try:
        import resource

        which = resource.RLIMIT_DATA if device == "cuda" else resource.RLIMIT_AS
        soft, hard = resource.getrlimit(which)
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)
        resource.setrlimit(which, (limit, hard))
    except (ImportError, ValueError, OSError, AttributeError):
        pass


def write_result(job: dict, result: dict) -> None:
    tmp = job["result_path"] + ".tmp"
    with open(tmp, "w") as f:
        json.dump(result, f, default=jsonable)
    os.replace(tmp, job["result_path"])


def leave(code: int = 0) -> None:
    """Flush what the program wrote and leave without interpreter teardown
    (a process that ran many compiles can hang there on torch 2.13)."""
    try:
        import logging

        logging.shutdown()
    except Exception:
        pass
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass
    os._exit(code)


def error_result(job: dict, e: BaseException) -> dict:
    from gnnlint.verify._program import BudgetStop, is_memory_error

    if isinstance(e, TargetError):
        return {"target": job["target"], "error": {"kind": e.kind, "message": e.message, "traceback": e.tb}}
    tb = traceback.format_exc()
    frames = tb_user_frames(e.__traceback__)
    where = f" at {frames[0][0]}:{frames[0][1]}" if frames else ""
    if isinstance(e, BudgetStop):
        return {"target": job["target"], "error": {
            "kind": "timeout", "message": f"stopped by the budget before verify could report ({e})",
            "traceback": tb}}
    if is_memory_error(e):
        return {"target": job["target"], "error": {"kind": "memory", "message": memory_message(job, e, where),
                                                    "traceback": tb}}
    return {"target": job["target"], "error": {
        "kind": "exception", "message": f"{type(e).__name__}: {e}{where}", "traceback": tb}}


def memory_message(job: dict, e: BaseException, where: str = "") -> str:
    gb = (job.get("max_memory") or 0) / 2**30
    limit = f" (--max-memory {gb:.1f} GB)" if gb else ""
    return f"the target ran out of memory{limit}: {type(e).__name__}: {str(e)[:300]}{where}"
