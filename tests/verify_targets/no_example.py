"""verify target without a gnnlint_example() function."""


def main():
    return None
