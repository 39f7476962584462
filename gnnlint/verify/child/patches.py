"""The verify child's hooks into torch and dynamo, one per thing it watches,
installed in this order by :func:`install_patches`: ``torch.compile`` (every
compile the user's code makes gets a record), ``OptimizedModule.__call__``
(its calls counted) and ``.state_dict`` (its keys' prefix), ``Optimizer.__init__`` (where each optimizer was made,
its lr's type), dynamo's compile-start callback (which compiled object a
compile belongs to, the live user stack), ``GraphCompileReason`` (graph
breaks) and ``starts_line`` (the user lines dynamo traced, for coverage)."""
from __future__ import annotations

import functools
import weakref
from typing import Any

from gnnlint.verify.child.frames import live_user_frames


def install_patches(harness: Any) -> None:
    torch = harness.torch
    _patch_compile(harness, torch)
    _patch_optimizer(harness, torch)
    _patch_dynamo(harness, torch)


def _patch_compile(harness: Any, torch) -> None:
    """``torch.compile`` and compiled modules' calls go through the harness."""
    orig_compile = torch.compile
    harness.orig_compile = orig_compile
    from torch._dynamo.eval_frame import OptimizedModule

    harness.OptimizedModule = OptimizedModule
    harness.module_recs = weakref.WeakKeyDictionary()

    @functools.wraps(orig_compile)
    def compile(model=None, **kw):
        if model is None:
            return lambda m: compile(m, **kw)
        frames = live_user_frames(2)
        site = frames[0] if frames else None
        return harness.compile_with_record(model, kw, site=site, origin="user")

    torch.compile = compile

    orig_call = OptimizedModule.__call__

    def om_call(self_, *args, **kwargs):
        rec = harness.module_recs.get(self_)
        return harness.run_compiled(rec, functools.partial(orig_call, self_), args, kwargs)

    OptimizedModule.__call__ = om_call

    orig_state_dict = OptimizedModule.state_dict

    def om_state_dict(self_, *args, **kwargs):
        # GNN018's evidence: the keys of what the user's line takes carry the wrapper's prefix
        frames = live_user_frames(2, limit=1)
        if frames:
            harness.add_event("compiled_state_dict",
                              "`state_dict()` of a compiled module: its keys start with `_orig_mod.`",
                              frames, rec=harness.module_recs.get(self_), extra={"confirm_only": True})
        return orig_state_dict(self_, *args, **kwargs)

    OptimizedModule.state_dict = om_state_dict


def _patch_optimizer(harness: Any, torch) -> None:
    """Where each optimizer was created and what its lr is (GNN002's evidence)."""
    opt_init = torch.optim.Optimizer.__init__

    def optimizer_init(self_, params, defaults, *a, **k):
        lr = defaults.get("lr") if isinstance(defaults, dict) else None
        frames = live_user_frames(2)
        harness.optimizers[id(self_)] = {
            "frames": frames, "cls": type(self_).__name__,
            "lr_kind": "tensor" if isinstance(lr, torch.Tensor) else type(lr).__name__,
            "lr": float(lr) if isinstance(lr, (int, float)) else None,
            "ref": self_,
        }
        return opt_init(self_, params, defaults, *a, **k)

    torch.optim.Optimizer.__init__ = optimizer_init


def _patch_dynamo(harness: Any, torch) -> None:
    """dynamo hooks: compile start (live stack), graph breaks, traced lines."""
    from torch._dynamo.callback import callback_handler

    def on_start(args):
        try:
            cid = str(args.compile_id)
            rec = harness.active[-1] if harness.active else None
            harness.compile_ctx[cid] = {
                "frames": live_user_frames(2, limit=6),
                "rec": rec,
                "sparse": list(harness.current_sparse_frames),
            }
            if rec is not None:
                rec["frames_tried"].add(cid.split("/")[0])
        except Exception:
            pass

    callback_handler.register_start_callback(on_start)
    _keep_callback_across_reset(torch, callback_handler, on_start)

    from torch._dynamo import output_graph, symbolic_convert

    gcr = output_graph.GraphCompileReason
    orig_post = gcr.__post_init__

    def post_init(self_):
        orig_post(self_)
        if self_.graph_break:
            try:
                harness.on_graph_break(self_.reason, self_.user_stack)
            except Exception:
                pass

    gcr.__post_init__ = post_init

    orig_starts_line = symbolic_convert.InstructionTranslatorBase.starts_line
    cov = harness.coverage

    def starts_line(self_, lineno):
        try:
            cov.add(self_.f_code.co_filename, lineno)
        except Exception:
            pass
        return orig_starts_line(self_, lineno)

    symbolic_convert.InstructionTranslatorBase.starts_line = starts_line


def _keep_callback_across_reset(torch, callback_handler, on_start) -> None:
    """``torch._dynamo.reset()`` (GNN015's fix for a sweep: one per
    configuration; ``torch.compiler.reset()`` calls it) clears dynamo's
    callbacks, so verify would stop seeing which compiled object a compile
    belongs to and count its calls as eager. Register ours again after it."""
    orig_reset = torch._dynamo.reset

    def reset(*args, **kwargs):
        out = orig_reset(*args, **kwargs)
        callback_handler.register_start_callback(on_start)
        return out

    reset.__wrapped__ = orig_reset  # type: ignore[attr-defined]
    torch._dynamo.reset = reset
