"""verify target whose example raises (a per-target error, exit 2)."""


def gnnlint_example():
    raise ValueError("boom: the example cannot build its model")
