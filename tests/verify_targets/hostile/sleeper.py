"""Calls a compiled function, then sleeps in a loop (the time budget or
Ctrl-C must end it); its finally block records that it ran."""
import os
import sys
import time

import torch

marker = sys.argv[1]
f = torch.compile(lambda x: x + 1)
with open(marker + ".pid", "w") as out:
    out.write(str(os.getpid()))
try:
    while True:
        f(torch.ones(3))
        time.sleep(0.05)
finally:
    with open(marker, "w") as out:
        out.write("finally ran\n")
