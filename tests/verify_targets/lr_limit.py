"""Float lr + StepLR + compiled optimizer step with dynamic=False: every lr
change recompiles the step until the recompile limit, then it runs eagerly."""
import torch


def build():
    model = torch.nn.Linear(4, 2)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.9)
    step = torch.compile(optimizer.step, dynamic=False)
    return model, optimizer, scheduler, step


def gnnlint_example():
    model, optimizer, scheduler, _ = build()
    inputs = [(torch.randn(3, 4),), (torch.randn(5, 4),)]
    return model, inputs, {"optimizer": optimizer, "scheduler": scheduler, "steps": 12}
