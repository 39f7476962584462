"""Train MolNet on synthetic multi-task molecules.  python -m pkg_molnet.train"""
import argparse
import random

import torch
import torch.nn.functional as F

from torch_geometric.data import Batch, Data
from torch_geometric.loader import DataLoader

from .layers import check_graph
from .models import MolNet

NUM_TASKS = 12


def random_molecule(i, rng):
    n = rng.randint(6, 45)
    chain = torch.stack([torch.arange(n - 1), torch.arange(1, n)])
    edge_index = torch.cat([chain, torch.randint(0, n, (2, n // 2))], dim=1)
    y = torch.randint(0, 2, (1, NUM_TASKS)).float()
    y[torch.rand(1, NUM_TASKS) < 0.2] = float('nan')  # missing labels
    return Data(x=torch.randn(n, 16), edge_index=edge_index,
                edge_attr=torch.randn(edge_index.size(1), 6), y=y,
                mol_id=torch.tensor([i]))


def masked_bce(logits, y):
    is_labelled = ~torch.isnan(y)
    return F.binary_cross_entropy_with_logits(logits[is_labelled], y[is_labelled])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--epochs', type=int, default=40)
    parser.add_argument('--batch_size', type=int, default=128)
    parser.add_argument('--hidden', type=int, default=128)
    args = parser.parse_args()
    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
    rng = random.Random(7)
    molecules = [random_molecule(i, rng) for i in range(3000)]
    for mol in molecules:
        check_graph(mol)
    atom_counts = torch.tensor([m.num_nodes for m in molecules])

    train_loader = DataLoader(molecules[:2500], batch_size=args.batch_size, shuffle=True)
    val_loader = DataLoader(molecules[2500:], batch_size=500)
    model = MolNet(16, 6, args.hidden, NUM_TASKS, atom_counts).to(device)
    model = torch.compile(model, dynamic=True)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-5)

    for epoch in range(1, args.epochs + 1):
        model.train()
        epoch_loss, skipped = [], 0
        for batch in train_loader:
            batch = batch.to(device)
            optimizer.zero_grad()
            logits = model(batch.x, batch.edge_index, batch.edge_attr,
                           batch.batch, batch.num_graphs)
            loss = masked_bce(logits, batch.y)
            if not torch.isfinite(loss):
                skipped += 1
                continue
            loss.backward()
            optimizer.step()
            epoch_loss.append(loss.detach())
        mean_loss = torch.stack(epoch_loss).mean().item()

        model.eval()
        per_task_correct = torch.zeros(NUM_TASKS, device=device)
        per_task_count = torch.zeros(NUM_TASKS, device=device)
        with torch.no_grad():
            for batch in val_loader:
                batch = batch.to(device)
                logits = model(batch.x, batch.edge_index, batch.edge_attr,
                               batch.batch, batch.num_graphs)
                labelled = ~torch.isnan(batch.y)
                hits = ((logits > 0).float() == batch.y) & labelled
                per_task_correct += hits.sum(dim=0)
                per_task_count += labelled.sum(dim=0)
        task_acc = (per_task_correct / per_task_count.clamp(min=1)).tolist()
        print(f'epoch {epoch:03d} loss {mean_loss:.4f} skipped {skipped} '
              f'mean task acc {sum(task_acc) / NUM_TASKS:.4f}')

    held_out = Batch.from_data_list(molecules[2500:2600]).to(device)
    probs = model.predict_proba(held_out)
    print('first molecule:', [round(p, 3) for p in probs[0].tolist()])


if __name__ == '__main__':
    main()
