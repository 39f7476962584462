"""E19: is `torch.compile(..., options={"triton.cudagraphs": True})` the CUDA-graph setting of
`mode="reduce-overhead"`? (GNN006, real-code label fairchem escn_exportable.py:216)

What a mode sets is inductor's own table, readable on a CPU-only install: `list_mode_options(mode)`.
`mode="reduce-overhead"` is exactly `{"triton.cudagraphs": True}` and `mode="max-autotune"` includes
it, so the option turns on the same CUDA-graph trees (one recording per distinct input shape, see the
GNN006 rule page and https://pytorch.org/docs/stable/torch.compiler_cudagraph_trees.html). The cost
itself (re-recording per batch size) needs a GPU and is not measured here.

Run: python bench/evidence/e19_cudagraphs_option.py  (needs torch). Output: out/e19_cudagraphs_option.txt
"""
import torch
import torch._inductor

print(f"torch {torch.__version__}")
for mode in ("default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs"):
    print(f"{mode!r}: {torch._inductor.list_mode_options(mode)}")
assert torch._inductor.list_mode_options("reduce-overhead") == {"triton.cudagraphs": True}
print("reduce-overhead == options={'triton.cudagraphs': True}: yes")
