"""python -m trainpkg.train: graph classification on mini-batches."""
import sys

import torch
import torch.nn.functional as F
from torch_geometric.loader import DataLoader

from .models import GraphClassifier
from graphs import random_graph


def main(argv):
    steps = int(argv[argv.index("--steps") + 1]) if "--steps" in argv else 4
    graphs = [random_graph(10 + i, seed=i) for i in range(16)]
    for i, g in enumerate(graphs):
        g.y = torch.tensor([i % 3])
    loader = DataLoader(graphs, batch_size=4, shuffle=False)
    model = torch.compile(GraphClassifier(8, 16, 3))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    done = 0
    while done < steps:
        for batch in loader:
            optimizer.zero_grad()
            loss = F.cross_entropy(model(batch.x, batch.edge_index, batch.batch), batch.y)
            loss.backward()
            optimizer.step()
            done += 1
            if done >= steps:
                break


if __name__ == "__main__":
    main(sys.argv[1:])
