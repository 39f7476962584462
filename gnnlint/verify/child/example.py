"""Example mode of the verify child: call ``gnnlint_example()``, compile its
model the way the project does (the compile site the project index links to
the model's class), then run it on the example's inputs with the optimizer
step, scheduler and loss it gave (or its own ``run(compiled)`` loop)."""
from __future__ import annotations

import inspect
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gnnlint.verify.child.frames import USER, TargetError, real_path, short_reason, tb_user_frames
from gnnlint.verify.child.harness import sparse_frames
from gnnlint.verify.child.metrics import cudagraph_events
from gnnlint.verify.child.result import finish
from gnnlint.verify.child.target import call_args, find_sites, import_target, project_files
from gnnlint.verify.child.values import iter_tensors, mark_varying_dims, move_to_device, unwrap

if TYPE_CHECKING:
    from gnnlint.verify.child.harness import Harness


def call_example(h: Harness, target: dict, budget) -> tuple[Any, Path, str]:
    """Import the target and call its example function within --max-seconds:
    (what it returned, the target's path, the function's name)."""
    from gnnlint.verify._program import BudgetStop

    budget.arm()
    h.modes_enter()
    h.coverage.start()
    try:
        mod, fn, path = import_target(h, target)
        raw = fn()
    except BudgetStop:
        raise TargetError("timeout", f"the example did not return within --max-seconds "
                          f"{budget.max_seconds:g} s; it was stopped") from None
    finally:
        h.coverage.stop()
    return raw, path, fn.__name__


def run_example(h: Harness, job: dict, result: dict, ex: dict, path: Path, t0: float, lap) -> dict:
    """Compile the example's model as the project does, run it, and finish the result."""
    model = ex["model"]
    inputs = [move_to_device(i, h.device) for i in ex["inputs"]]
    if h.device != "cpu" and hasattr(model, "to"):
        model = model.to(h.device)

    files = project_files(h, path, model)
    site, step_site, anything = find_sites(files, model, path)
    result["model_site"] = site
    lap("sites")
    result["step_site"] = step_site
    compiled, how = compile_model(h, model, site, anything, inputs)
    result["model_compile"] = how
    if site and site.get("mode") == "reduce-overhead" and h.device == "cpu":
        h.notes.append("mode='reduce-overhead' uses CUDA graphs: re-recordings can only be observed on CUDA")
    step_call = step_callable(h, ex, step_site)
    n_steps = run_steps(h, job, ex, model, compiled, inputs, step_call)
    lap("run")
    if h.device == "cuda":
        cudagraph_events(h)
    return finish(h, result, t0, lap, steps=n_steps if ex.get("run") is None else "the example's run()",
                  rare=ex.get("run") is not None)


def compile_model(h: Harness, model, site: dict | None, anything: bool, inputs: list) -> tuple[Any, str]:
    """The model compiled the way the user's code does: (compiled, how)."""
    torch = h.torch
    already = isinstance(model, h.OptimizedModule) or getattr(model, "_gnnlint_rec", None) is not None \
        or getattr(model, "_compiled_call_impl", None) is not None
    if already:
        return model, "given compiled by the example"
    if site is not None:
        kw: dict[str, Any] = {"fullgraph": bool(site.get("fullgraph"))}
        if site.get("dynamic") is not None:
            kw["dynamic"] = site["dynamic"]
        if site.get("mode"):
            kw["mode"] = site["mode"]
        if site.get("options"):
            kw["options"] = site["options"]
        compiled = h.compile_with_record(model, kw, site=[site["path"], site["line"], "torch.compile"],
                                         origin="project", static_site=site)
        if site.get("mark_dynamic"):
            mark_varying_dims(torch, inputs)
        return compiled, f"compiled as at {Path(site['path']).name}:{site['line']}"
    if not anything:
        compiled = h.compile_with_record(model, {}, site=None, origin="default")
        return compiled, "compiled with torch's defaults (the code compiles nothing)"
    return model, "run eagerly (the code compiles other things, not this model)"


def step_callable(h: Harness, ex: dict, step_site: dict | None):
    """The example's own step, else the optimizer's step (compiled as the
    project compiles it, when it does), else None."""
    opt = ex.get("optimizer")
    user_step = ex.get("step")
    if user_step is not None:
        return user_step
    if opt is None:
        return None
    if step_site is None:
        return opt.step
    kw = {}
    if step_site.get("dynamic") is not None:
        kw["dynamic"] = step_site["dynamic"]
    if step_site.get("fullgraph"):
        kw["fullgraph"] = True
    return h.compile_with_record(opt.step, kw, site=[step_site["path"], step_site["line"], "torch.compile"],
                                 origin="project")


def run_steps(h: Harness, job: dict, ex: dict, model, compiled, inputs: list, step_call) -> int:
    """Run the compiled model (or the example's ``run``) with recording on;
    returns the number of steps."""
    torch = h.torch
    budget = h.budget
    from gnnlint.verify._program import BudgetStop

    cuda = h.device == "cuda"
    if cuda:
        try:
            torch.cuda.set_sync_debug_mode("warn")
        except Exception:
            pass
    n_steps = len(inputs)
    if ex.get("optimizer") is not None or ex.get("step") is not None:
        n_steps = max(len(inputs), int(ex.get("steps") or job.get("train_steps") or 4))
    h.recording = True
    h.tracking_sparse = False
    with warnings.catch_warnings(record=True) as wlist:
        warnings.simplefilter("always")
        h.coverage.start()
        try:
            user_run = ex.get("run")
            if user_run is not None:
                # the user's own loop, given the compiled model
                n_steps = 1
                h.program_mode = True
                user_run(compiled)
            for i in range(n_steps if user_run is None else 0):
                _one_step(h, ex, model, compiled, step_call, inputs[i % len(inputs)])
        except BudgetStop:
            h.notes.append(f"stopped early: {budget.detail}")
        finally:
            h.coverage.stop()
            h.recording = False
            h.program_mode = False
            budget.disarm()
    for w in wlist:
        msg = str(w.message)
        if cuda and "synchroniz" in msg.lower():
            fr = [[real_path(w.filename), w.lineno, "?"]] if w.filename in USER else []
            h.add_event("host_sync", f"CUDA sync: {msg[:200]}", fr)
    h.modes_exit()
    return n_steps


def _one_step(h: Harness, ex: dict, model, compiled, step_call, inp) -> None:
    """One forward of the compiled model, then the loss, backward, the
    optimizer step and the scheduler step the example asks for."""
    torch = h.torch
    opt = ex.get("optimizer")
    sched = ex.get("scheduler")
    loss_fn = ex.get("loss_fn")
    user_step = ex.get("step")
    h.current_sparse_frames = sparse_frames(h, inp)
    args, kwargs = call_args(inp, model)
    if opt is not None and hasattr(opt, "zero_grad"):
        opt.zero_grad()
    try:
        out = compiled(*args, **kwargs)
    except Exception as e:  # a compile that raises is evidence
        if compiled is model:
            raise
        out = _compile_failed(h, e, model, compiled, args, kwargs)
    if opt is not None or user_step is not None:
        if user_step is None:
            loss = _loss(torch, loss_fn, out, inp)
            if loss is not None and loss.requires_grad:
                loss.backward()
        if step_call is not None:
            if user_step is not None:
                _call_flex(step_call, compiled, inp)
            else:
                step_call()
        if sched is not None and user_step is None:
            sched.step()
    elif loss_fn is not None:
        _loss(torch, loss_fn, out, inp)


def _compile_failed(h: Harness, e: Exception, model, compiled, args, kwargs):
    """The compiled call raised: record it as a compile error at the user's
    line and run the step eagerly (without recording) so the run goes on."""
    chain = tb_user_frames(e.__traceback__)
    frames = chain[:1] + h.current_sparse_frames
    rec = h.module_recs.get(compiled) if isinstance(compiled, h.OptimizedModule) else \
        getattr(compiled, "_gnnlint_rec", None)
    ctx = chain[1:] + ([rec["site"]] if rec and rec.get("site") else [])
    h.add_event("compile_error", f"{type(e).__name__}: {short_reason(str(e))}", frames,
                context=ctx, rec=rec)
    h.raised.append(f"{type(e).__name__}: {e}")
    eager = unwrap(model)
    was, h.recording = h.recording, False
    try:
        with h.modes_suspended():
            return eager(*args, **kwargs)
    finally:
        h.recording = was


def _call_flex(fn, model, inp):
    try:
        n = len(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        n = 0
    if n >= 2:
        return fn(model, inp)
    if n == 1:
        return fn(inp)
    return fn()


def _loss(torch, loss_fn, out, inp):
    if loss_fn is not None:
        try:
            n = len(inspect.signature(loss_fn).parameters)
        except (TypeError, ValueError):
            n = 2
        return loss_fn(out) if n == 1 else loss_fn(out, inp)
    tensors = [t for t in iter_tensors(torch, out) if isinstance(t, torch.Tensor) and t.is_floating_point()]
    if not tensors:
        return None
    return sum(t.float().sum() for t in tensors)
