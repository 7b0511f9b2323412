"""PyG's own full-batch reference on ACM (datasets/acm), the figure `python -m graphtier.train acm`
is compared with in docs/benchmarks.md: to_hetero(GraphSAGE) over learned 64-d embeddings of every
node type (ACM has no features), trained on a seeded 20/10/70 split of the labelled papers; the
test accuracy of the epoch with the best validation accuracy. Runs in a torch 2.x environment with
PyTorch Geometric (scripts/setup-torch2.sh):

    python bench/train/acm_pyg_reference.py [--seeds 0,1,2,3,4] [--split DATASET_DIR]

The model is PyG's GraphSAGE example with its dropout as nn.Dropout modules, so that evaluation
runs without it (--traced-dropout: as the example writes it, F.dropout(training=self.training),
which to_hetero's trace fixes at True). Seed S seeds the model and, without --split, the split (torch.randperm of the 4,019 papers);
--split takes the train/valid/test ids of a converted dataset (`graphtier convert typed-edge-list`,
types p, a, s in that order) instead, so both trainers see the same papers.
"""

import argparse
import gzip
import json
import os
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch_geometric.data import HeteroData
from torch_geometric.nn import SAGEConv, to_hetero

ACM = Path(__file__).resolve().parents[2] / "datasets" / "acm"
TYPES = {"p": "p", "a": "a", "s": "s"}


def load_acm():
    data = HeteroData()
    counts = {"p": 0, "a": 0, "s": 0}
    edges = {}
    with gzip.open(ACM / "edge.txt.gz", "rt") as f:
        for line in f:
            src, dst, kind, _ = line.split()
            a, b = kind.split("-")
            src, dst = int(src), int(dst)
            counts[a] = max(counts[a], src + 1)
            counts[b] = max(counts[b], dst + 1)
            edges.setdefault((a, "to", b), []).append((src, dst))
    labels = {}
    with gzip.open(ACM / "label.txt.gz", "rt") as f:
        for line in f:
            if line.strip():
                node, cls = line.split()
                labels[int(node[1:])] = int(cls)
    for t, n in counts.items():
        data[t].num_nodes = n
    for key, pairs in sorted(edges.items()):
        data[key].edge_index = torch.tensor(pairs, dtype=torch.int64).t().contiguous()
    y = torch.full((counts["p"],), -1, dtype=torch.int64)
    for v, c in labels.items():
        y[v] = c
    data["p"].y = y
    return data


def split_from(directory: str):
    manifest = json.loads(Path(directory, "manifest.json").read_text())
    out = []
    for name in ("train", "valid", "test"):
        path = Path(directory, manifest["files"][name]["path"])
        out.append(torch.from_numpy(np.fromfile(path, dtype=np.int64)))  # papers are ids [0, 4019)
    return out


class SAGE(nn.Module):
    """PyG's GraphSAGE example. to_hetero traces forward() with torch.fx, which reads
    `self.training` once, at trace time (True): `F.dropout(..., training=self.training)` then stays
    on in evaluation too. nn.Dropout modules are copied per type and follow eval(); `traced_dropout`
    keeps the functional form, as PyG's examples write it."""

    def __init__(self, hidden, out, dropout, traced_dropout=False):
        super().__init__()
        self.conv1 = SAGEConv((-1, -1), hidden)
        self.conv2 = SAGEConv((-1, -1), out)
        self.dropout = dropout
        self.traced_dropout = traced_dropout
        self.drop1, self.drop2 = nn.Dropout(dropout), nn.Dropout(dropout)

    def forward(self, x, edge_index):
        if self.traced_dropout:
            x = F.dropout(x, p=self.dropout, training=self.training)
            x = F.relu(self.conv1(x, edge_index))
            x = F.dropout(x, p=self.dropout, training=self.training)
            return self.conv2(x, edge_index)
        x = F.relu(self.conv1(self.drop1(x), edge_index))
        return self.conv2(self.drop2(x), edge_index)


class Model(nn.Module):
    def __init__(self, data, hidden, out, dropout, traced_dropout=False, embedding_dim=64):
        super().__init__()
        self.emb = nn.ModuleDict({t: nn.Embedding(data[t].num_nodes, embedding_dim) for t in data.node_types})
        self.gnn = to_hetero(SAGE(hidden, out, dropout, traced_dropout), data.metadata(), aggr="sum")

    def forward(self, data):
        x = {t: self.emb[t].weight for t in data.node_types}
        return self.gnn(x, data.edge_index_dict)["p"]


def run(data, seed, args):
    torch.manual_seed(seed)
    if args.split:
        train, valid, test = split_from(args.split)
    else:
        perm = torch.randperm(data["p"].num_nodes, generator=torch.Generator().manual_seed(seed))
        n_train, n_valid = int(0.2 * perm.numel()), int(0.1 * perm.numel())
        train, valid, test = perm[:n_train], perm[n_train:n_train + n_valid], perm[n_train + n_valid:]
    y = data["p"].y
    model = Model(data, args.hidden, int(y.max()) + 1, args.dropout, args.traced_dropout)
    with torch.no_grad():
        model(data)  # materialises the lazy SAGEConv shapes
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)
    best_val, best_test = -1.0, 0.0
    for _ in range(args.epochs):
        model.train()
        optimizer.zero_grad()
        loss = F.cross_entropy(model(data)[train], y[train])
        loss.backward()
        optimizer.step()
        model.eval()
        with torch.no_grad():
            pred = model(data).argmax(-1)
        val = float((pred[valid] == y[valid]).float().mean())
        if val > best_val:
            best_val, best_test = val, float((pred[test] == y[test]).float().mean())
    return best_test


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seeds", default="0,1,2,3,4")
    p.add_argument("--split", default=None, help="a converted dataset whose splits to use")
    p.add_argument("--epochs", type=int, default=100)
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--weight-decay", type=float, default=5e-4)
    p.add_argument("--dropout", type=float, default=0.5)
    p.add_argument("--traced-dropout", action="store_true",
                   help="F.dropout(training=self.training) as PyG's examples write it: to_hetero bakes in "
                        "training=True, so evaluation runs with dropout (the issue's 0.727 +- 0.011)")
    args = p.parse_args()
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    data = load_acm()
    accs = [run(data, int(s), args) for s in args.seeds.split(",")]
    print("test accuracy per seed:", ", ".join(f"{a:.3f}" for a in accs))
    print(f"mean {np.mean(accs):.3f} +- {np.std(accs):.3f}")


if __name__ == "__main__":
    main()
