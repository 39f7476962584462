"""E20: does `torch.compile(..., mode="max-autotune")` turn on CUDA graphs, like `mode="reduce-overhead"`?
(GNN006, real-code label metatrain experimental/space/trainer.py:105: `mode="max-autotune"`, `dynamic=True`,
the compiled module run on every training batch.)

What a mode sets is inductor's own table, readable on a CPU-only install: `list_mode_options(mode)`.
`mode="max-autotune"` sets `triton.cudagraphs: True` (plus autotuning), exactly the setting
`mode="reduce-overhead"` is made of (E19), so it records CUDA-graph trees the same way: one recording per
distinct input shape, even with `dynamic=True` (https://pytorch.org/docs/stable/torch.compiler_cudagraph_trees.html).
`mode="max-autotune-no-cudagraphs"` is the same tuning without them. The cost itself needs a GPU and is not
measured here.

Run: python bench/evidence/e21_max_autotune_cudagraphs.py  (needs torch). Output: out/e21_max_autotune_cudagraphs.txt
"""
import torch
import torch._inductor

print(f"torch {torch.__version__}")
options = torch._inductor.list_mode_options("max-autotune")
print(f"'max-autotune': {options}")
assert options.get("triton.cudagraphs") is True
print("max-autotune turns on triton.cudagraphs: yes")
no_graphs = torch._inductor.list_mode_options("max-autotune-no-cudagraphs")
print(f"'max-autotune-no-cudagraphs': {no_graphs}")
assert not no_graphs.get("triton.cudagraphs")
print("max-autotune-no-cudagraphs turns it on: no")
print(f"dynamic=True turns it off: no (the mode's options do not depend on dynamic=; "
      f"'max-autotune' with dynamic: {torch._inductor.list_mode_options('max-autotune', dynamic=True)})")
