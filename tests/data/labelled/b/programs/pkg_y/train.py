"""Train the link predictor on LinkNeighborLoader mini-batches.

python -m pkg_y.train
"""
import torch
import torch.nn.functional as F

import torch_geometric.transforms as T
from torch_geometric.datasets import FakeDataset
from torch_geometric.loader import LinkNeighborLoader

from .models import build_encoder, build_scorer

CONFIG = {
    'hidden': 128,
    'lr': 0.002,
    'weight_decay': 1e-5,
    'warmup_epochs': 3,
    'epochs': 15,
    'batch_size': 1024,
}


def get_loaders(train_data, val_data, batch_size):
    train_loader = LinkNeighborLoader(
        train_data, num_neighbors=[10, 5], neg_sampling_ratio=2.0,
        edge_label_index=train_data.edge_label_index,
        edge_label=train_data.edge_label, batch_size=batch_size, shuffle=True)
    val_loader = LinkNeighborLoader(
        val_data, num_neighbors=[10, 5],
        edge_label_index=val_data.edge_label_index,
        edge_label=val_data.edge_label, batch_size=batch_size)
    return train_loader, val_loader


def score(encoder, scorer, batch):
    z = encoder(batch.x, batch.edge_index)
    src, dst = batch.edge_label_index
    return scorer(torch.cat([z[src], z[dst]], dim=-1)).view(-1)


def main(cfg=CONFIG):
    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
    data = FakeDataset(num_graphs=1, avg_num_nodes=20_000, avg_degree=8,
                       num_channels=32, task='node')[0]
    train_data, val_data, _ = T.RandomLinkSplit(
        num_val=0.1, num_test=0.1, add_negative_train_samples=False)(data)
    train_loader, val_loader = get_loaders(train_data, val_data, cfg['batch_size'])

    encoder = build_encoder(train_data, cfg['hidden'], device)
    scorer = build_scorer(cfg['hidden'], device)
    params = list(encoder.parameters()) + list(scorer.parameters())
    optimizer = torch.optim.AdamW(params, lr=cfg['lr'], weight_decay=cfg['weight_decay'])
    warmup = cfg['warmup_epochs']
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lr_lambda=lambda epoch: min(1.0, (epoch + 1) / warmup))
    opt_step = torch.compile(optimizer.step)

    for epoch in range(1, cfg['epochs'] + 1):
        encoder.train()
        scorer.train()
        for batch in train_loader:
            batch = batch.to(device)
            optimizer.zero_grad()
            logits = score(encoder, scorer, batch)
            loss = F.binary_cross_entropy_with_logits(logits, batch.edge_label)
            loss.backward()
            opt_step()
        scheduler.step()

        encoder.eval()
        scorer.eval()
        correct = torch.zeros((), device=device)
        seen = 0
        with torch.no_grad():
            for batch in val_loader:
                batch = batch.to(device)
                pred = score(encoder, scorer, batch) > 0
                correct += (pred.float() == batch.edge_label).sum()
                seen += batch.edge_label.numel()
        print(f'epoch {epoch:02d} val acc {float(correct) / seen:.4f}')


if __name__ == '__main__':
    main()
