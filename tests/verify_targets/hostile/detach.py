"""Leaves a detached grandchild behind (its own session), then exits."""
import os
import sys
import time

pid = os.fork()
if pid == 0:
    os.setsid()
    if os.fork() == 0:
        with open(sys.argv[1], "w") as f:
            f.write(str(os.getpid()))
        time.sleep(600)
    os._exit(0)
os.waitpid(pid, 0)
while not os.path.exists(sys.argv[1]):
    time.sleep(0.05)
