"""PyG's link-prediction example (examples/link_pred.py) on Cora, the figure `python -m
graphtier.train data/cora --task link` is compared with in docs/benchmarks.md, with the knobs that
separate its differences from graphtier's run. Runs in a torch 2.x environment with PyTorch
Geometric (scripts/setup-torch2.sh); full batch, so PyG needs neither pyg-lib nor torch-sparse:

    python bench/train/cora_link_pyg_reference.py [--seeds 0,1,2,3,4] [--conv gcn|sage]
        [--select last|best-val] [--eval-graph full|train] [--epochs 100]

As the example: NormalizeFeatures, RandomLinkSplit(num_val=0.05, num_test=0.1, is_undirected=True,
add_negative_train_samples=False), a two-layer GCN 1433 -> 128 -> 64, dot decoder, Adam 0.01, one
full-batch step per epoch with fresh negatives (negative_sampling over the training graph, one per
positive), 100 epochs. Seed S is torch.manual_seed(S) before the split. The example's "Final Test"
is the last epoch's test AUC (its best_val_auc is never updated, so every epoch overwrites it):
--select last (the default) reproduces that, --select best-val takes the epoch with the best
validation AUC as graphtier does. --eval-graph train passes messages over the training edges only
in validation and test, as graphtier's evaluation does (PyG's test graph also holds the validation
edges). --conv sage swaps GCNConv for SAGEConv (mean aggregator), graphtier's encoder.
"""

import argparse
import os
import statistics
import tempfile
from pathlib import Path

import torch
import torch_geometric.transforms as T
from torch_geometric.datasets import Planetoid
from torch_geometric.nn import GCNConv, SAGEConv
from torch_geometric.utils import negative_sampling

CORA = Path(__file__).resolve().parents[2] / "datasets" / "cora"


def auc(scores: torch.Tensor, labels: torch.Tensor) -> float:
    """sklearn's roc_auc_score (ties count half) without sklearn."""
    order = torch.argsort(scores)
    s, y = scores[order], labels[order] > 0
    _, inverse, counts = torch.unique_consecutive(s, return_inverse=True, return_counts=True)
    ranks = (torch.cumsum(counts, 0).double() - (counts.double() - 1) / 2)[inverse]
    p, n = int(y.sum()), int((~y).sum())
    return float((ranks[y].sum() - p * (p + 1) / 2) / (p * n))


class Net(torch.nn.Module):
    def __init__(self, conv, in_channels, hidden_channels, out_channels):
        super().__init__()
        self.conv1 = conv(in_channels, hidden_channels)
        self.conv2 = conv(hidden_channels, out_channels)

    def encode(self, x, edge_index):
        return self.conv2(self.conv1(x, edge_index).relu(), edge_index)

    @staticmethod
    def decode(z, edge_label_index):
        return (z[edge_label_index[0]] * z[edge_label_index[1]]).sum(dim=-1)


def run(seed: int, args, root: str) -> dict:
    torch.manual_seed(seed)
    transform = T.Compose([T.NormalizeFeatures(),
                           T.RandomLinkSplit(num_val=0.05, num_test=0.1, is_undirected=True,
                                             add_negative_train_samples=False)])
    train_data, val_data, test_data = Planetoid(root, name="Cora", transform=transform)[0]
    conv = {"gcn": GCNConv, "sage": SAGEConv}[args.conv]
    model = Net(conv, train_data.num_features, 128, 64)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    criterion = torch.nn.BCEWithLogitsLoss()

    @torch.no_grad()
    def test(data):
        model.eval()
        graph = train_data.edge_index if args.eval_graph == "train" else data.edge_index
        z = model.encode(data.x, graph)
        return auc(model.decode(z, data.edge_label_index).view(-1).sigmoid(), data.edge_label)

    best_val, chosen = -1.0, None
    for epoch in range(1, args.epochs + 1):
        model.train()
        optimizer.zero_grad()
        z = model.encode(train_data.x, train_data.edge_index)
        neg = negative_sampling(edge_index=train_data.edge_index, num_nodes=train_data.num_nodes,
                                num_neg_samples=train_data.edge_label_index.size(1), method="sparse")
        index = torch.cat([train_data.edge_label_index, neg], dim=-1)
        label = torch.cat([train_data.edge_label, train_data.edge_label.new_zeros(neg.size(1))])
        loss = criterion(model.decode(z, index).view(-1), label)
        loss.backward()
        optimizer.step()
        val_auc, test_auc = test(val_data), test(test_data)
        if args.select == "last" or val_auc > best_val:
            best_val, chosen = val_auc, {"epoch": epoch, "val_auc": val_auc, "test_auc": test_auc}
    return chosen


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seeds", default="0,1,2,3,4")
    p.add_argument("--epochs", type=int, default=100)
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--conv", choices=["gcn", "sage"], default="gcn")
    p.add_argument("--select", choices=["last", "best-val"], default="last")
    p.add_argument("--eval-graph", choices=["full", "train"], default="full")
    p.add_argument("--threads", type=int, default=2)
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    with tempfile.TemporaryDirectory(prefix="cora-link-pyg-") as root:
        os.makedirs(os.path.join(root, "Cora"))
        os.symlink(CORA, os.path.join(root, "Cora", "raw"))
        results = [run(int(s), args, root) for s in args.seeds.split(",")]
    for s, r in zip(args.seeds.split(","), results):
        print(f"seed {s}  epoch {r['epoch']:3d}  val auc {r['val_auc']:.4f}  test auc {r['test_auc']:.4f}")
    tests = [r["test_auc"] for r in results]
    sd = statistics.stdev(tests) if len(tests) > 1 else 0.0
    print(f"test auc {statistics.mean(tests):.4f} +- {sd:.4f} over {len(tests)} seeds "
          f"({args.conv}, select {args.select}, eval graph {args.eval_graph}, {args.epochs} epochs)")


if __name__ == "__main__":
    main()
