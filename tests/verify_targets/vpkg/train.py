"""A package target: the model lives in a sibling module, imported relatively,
and compiled here with dynamic=False; the train loop syncs every batch."""
import torch

from .models import Scorer


def train(model, batches, optimizer):
    total = 0.0
    for x in batches:
        optimizer.zero_grad()
        loss = model(x).square().mean()
        loss.backward()
        optimizer.step()
        total += float(loss)
    return total


def main():
    model = torch.compile(Scorer(4), dynamic=False)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    batches = [torch.randn(n, 4) for n in (16, 32, 48)]
    for _ in range(3):
        train(model, batches, optimizer)


def gnnlint_example():
    model = Scorer(4)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    batches = [torch.randn(n, 4) for n in (5, 7, 9)]
    return model, batches, {"run": lambda compiled: train(compiled, batches, optimizer)}
