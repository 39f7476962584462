"""Prints a lot on stdout and stderr, around a compiled call."""
import sys

import torch

line = "x" * 1023 + "\n"
for _ in range(20_000):  # 20 MB
    sys.stdout.write(line)
f = torch.compile(lambda x: x + 1)
f(torch.ones(3))
print("chatty: last line on stderr", file=sys.stderr)
