"""A compiled function fed the slices of a chunked `range` loop
(`for start in range(0, n, size): x[start:end]`) sees two sizes: the chunk
size and a shorter last chunk (semantic/chunks.py, GNN007)."""
from __future__ import annotations

from gnnlint.engine import lint_source

CHUNKED = """\
import torch
from tqdm import trange


@torch.compile
def score(model, h_src, h_dst):
    return model.predictor(h_src * h_dst)


def predict(model, emb, src, dst, size):
    out = torch.empty(src.shape[0])
    for start in trange(0, src.shape[0], size, desc="eval"):
        end = min(start + size, src.shape[0])
        h_src = emb[src[start:end]]
        out[start:end] = score(model, h_src, emb[dst[start:end]])
    return out
"""


def _gnn007(source: str) -> list:
    return [f for f in lint_source(source, "chunks.py", project_facts=False, use_cache=False) if f.code == "GNN007"]


def test_chunks_of_a_range_are_variable_size():
    found = _gnn007(CHUNKED)
    assert [f.line for f in found] == [5], found
    assert "a shorter last one" in found[0].message and "`for start in trange(0, src.shape[0], size" \
        in found[0].message


def test_dynamic_true_or_unsliced_steps_are_not_reported():
    assert not _gnn007(CHUNKED.replace("@torch.compile", "@torch.compile(dynamic=True)"))
    # one row per step: `emb[src[start]]` is not a slice
    assert not _gnn007(CHUNKED.replace("src[start:end]", "src[start]").replace("dst[start:end]", "dst[start]"))
    # a step of 1: every slice has one row
    assert not _gnn007(CHUNKED.replace("trange(0, src.shape[0], size, desc=\"eval\")", "range(0, src.shape[0], 1)"))
