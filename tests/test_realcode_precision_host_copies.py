"""heldout5 MeshGraphNets ``training_loop.py:438/449`` (s13h15): ``.item()`` after
``if hasattr(sid, "cpu"): sid = sid.cpu()``. A tensor always has ``cpu``, so the
value read after the ``if`` is the host copy; ``.cpu()`` of a value whose kind is not
known (``getattr(batch, "sample_id", None)``) is a host copy too -- of a tensor, a
batch or a module alike. Two spellings: the guarded copy, and a plain re-binding."""
from __future__ import annotations

from tests.project_files import finding_lines, run, write_project

LOOP = """\
    import torch


    def evaluate(model, loader, device):
        model = torch.compile(model)
        with torch.no_grad():
            for batch in loader:
                batch = batch.to(device)
                out = model(batch)
                sid = getattr(batch, "sample_id", None)
                COPY
                if hasattr(sid, "item"):
                    print(sid.item(), out.shape)
"""


def _lines(tmp_path, copy: str) -> set:
    root = write_project(tmp_path, {"pyproject.toml": "[project]\nname = 'demo'\n", "t.py": LOOP.replace("COPY", copy)})
    return {":".join(line.split(":")[:2]) for line in
            finding_lines(run(["check", ".", "--no-cache", "--output-format", "concise"], root).output)}


def test_item_of_a_host_copy_under_a_hasattr_test(tmp_path):
    for i, copy in enumerate(('if hasattr(sid, "cpu"):\n                    sid = sid.cpu()',
                              "sid = sid.cpu()")):
        found = _lines(tmp_path / str(i), copy)
        assert "t.py:13" not in found, (copy, found)


def test_item_of_the_device_value_is_still_a_sync(tmp_path):
    # INVALID twin: no copy -- `sid` is the moved batch's field
    found = _lines(tmp_path, "pass")
    assert "t.py:13" in found, found
