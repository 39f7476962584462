"""cpu_only.pins_cpu: a script whose only device is the CPU (GNN013 reads
nothing per step from a device there); any other device, or a device a
caller chooses, keeps the answer no."""
from __future__ import annotations

import pytest

from tests.file_contexts import context_of

SCRIPT = """
import torch
{DEVICE}
model = torch.compile(Net().to(device))
"""


@pytest.mark.parametrize("device,pinned", [
    ('device = torch.device("cpu")', True),
    ("device = 'cpu'", True),
    ("# if torch.cuda.is_available():\n#     device = torch.device('cuda')\ndevice = torch.device('cpu')", True),
    ('torch.cuda.manual_seed(0)\ntorch.cuda.manual_seed_all(0)\ndevice = torch.device("cpu")', True),
    ('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', False),
    ('device = torch.device("cpu")\nif torch.cuda.is_available():\n    pass', False),
    ("device = torch.device(args.device)", False),
    ('device = torch.device("cpu")\ndef run(model, device):\n    return model.to(device)', False),
    ("", False),
])
def test_pins_cpu(device, pinned):
    assert context_of(SCRIPT.replace("{DEVICE}", device)).pins_cpu() is pinned
