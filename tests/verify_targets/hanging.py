"""verify target whose example never returns (stopped by the timeout)."""
import time


def gnnlint_example():
    while True:
        time.sleep(1)
