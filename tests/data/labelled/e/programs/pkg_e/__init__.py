"""Node classification package: `model` builds and compiles, `train` trains.

    python -m pkg_e.train --epochs 20
"""
