"""Runs a compiled step, then asks for far more memory than --max-memory allows."""
import torch

step = torch.compile(lambda x: x * 2)
step(torch.ones(4))
big = torch.empty(6 * 2**30, dtype=torch.uint8)
big.fill_(1)
