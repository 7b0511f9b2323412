"""GraphSAGE on Cora with DGL, fed by graphtier: DGL's minibatch GraphSAGE example
(examples/pytorch/graphsage/node_classification.py: dglnn.SAGEConv layers over `blocks`, the
features from `blocks[0].srcdata["feat"]`, the labels from `blocks[-1].dstdata["label"]`) with only
its loader import and dataset lines changed, and its sizes set for Cora's 140 training nodes.

    python examples/dgl_sage_cora.py data/cora            # graphtier's loader
    python examples/dgl_sage_cora.py data/cora --dgl      # DGL's own loader on the same graph

`--dgl` runs the unchanged DGL lines (DGL's DataLoader and NeighborSampler over a DGLGraph built
from the same dataset's files), for the comparison in docs/benchmarks.md. The lines that differ
from the DGL version are marked "graphtier:".
"""

import argparse
import json
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import dgl
import dgl.nn as dglnn

import graphtier  # graphtier: was `from ogb.nodeproppred import DglNodePropPredDataset`
from graphtier.training import load_feature_table

parser = argparse.ArgumentParser()
parser.add_argument("dataset", help="a graphtier dataset (Cora: datasets/cora converted and prepared)")
parser.add_argument("--dgl", action="store_true", help="DGL's own DataLoader on a DGLGraph of the same data")
parser.add_argument("--epochs", type=int, default=30)
parser.add_argument("--seed", type=int, default=0)
args = parser.parse_args()

if args.dgl:
    from dgl.dataloading import DataLoader, NeighborSampler
else:
    from graphtier.dgl import DataLoader, NeighborSampler  # graphtier: was `from dgl.dataloading import ...`


class SAGE(nn.Module):
    def __init__(self, in_size, hid_size, out_size):
        super().__init__()
        self.layers = nn.ModuleList()
        self.layers.append(dglnn.SAGEConv(in_size, hid_size, "mean"))
        self.layers.append(dglnn.SAGEConv(hid_size, out_size, "mean"))
        self.dropout = nn.Dropout(0.5)

    def forward(self, blocks, x):
        h = x
        for l, (layer, block) in enumerate(zip(self.layers, blocks)):
            h = layer(block, h)
            if l != len(self.layers) - 1:
                h = F.relu(h)
                h = self.dropout(h)
        return h


def evaluate(model, dataloader):
    model.eval()
    ys, y_hats = [], []
    for input_nodes, output_nodes, blocks in dataloader:
        with torch.no_grad():
            x = blocks[0].srcdata["feat"]
            ys.append(blocks[-1].dstdata["label"])
            y_hats.append(model(blocks, x))
    return float((torch.cat(y_hats).argmax(1) == torch.cat(ys)).float().mean())


def dgl_graph(data):
    """The reference run's DGLGraph: the dataset's CSC, features and labels as DGL holds them."""
    manifest = json.load(open(os.path.join(data.path, "manifest.json")))
    indptr = torch.from_numpy(np.fromfile(os.path.join(data.path, "indptr.bin"), dtype=np.int64))
    indices = np.fromfile(os.path.join(data.path, "indices.bin"), dtype=manifest["indices_dtype"])
    g = dgl.graph(("csc", (indptr, torch.from_numpy(indices.astype(np.int64)), torch.tensor([], dtype=torch.int64))),
                  num_nodes=data.num_nodes)
    g.ndata["feat"] = load_feature_table(data).float()
    g.ndata["label"] = data.labels().to(torch.int64)
    return g


torch.manual_seed(args.seed)
dgl.seed(args.seed)  # DGL's own sampler draws from DGL's generator
data = graphtier.Dataset(args.dataset)  # graphtier: was `dataset = AsNodePredDataset(DglNodePropPredDataset(...))`
g = dgl_graph(data) if args.dgl else data  # graphtier: was `g = dataset[0]`
split = {name: data.split(name).to(torch.int64) for name in ("train", "val", "test")}  # graphtier: dataset.train_idx, ...
# graphtier: the splits by name, which are the dataset's own ids (ids given to a renumbered dataset
# need ids_numbering="prepared" or "original" said)
seeds = {name: ids if args.dgl else name for name, ids in split.items()}
in_size, out_size = data.feature_dim, data.num_classes  # graphtier: g.ndata["feat"].shape[1], dataset.num_classes
model = SAGE(in_size, 256, out_size)

sampler = NeighborSampler([10, 10], prefetch_node_feats=["feat"], prefetch_labels=["label"])
train_dataloader = DataLoader(g, seeds["train"], sampler, batch_size=32, shuffle=True, drop_last=False, num_workers=0)
val_dataloader = DataLoader(g, seeds["val"], sampler, batch_size=512, shuffle=False, drop_last=False, num_workers=0)
test_dataloader = DataLoader(g, seeds["test"], sampler, batch_size=512, shuffle=False, drop_last=False, num_workers=0)

opt = torch.optim.Adam(model.parameters(), lr=1e-2, weight_decay=5e-4)
for epoch in range(args.epochs):
    model.train()
    total_loss = 0
    for it, (input_nodes, output_nodes, blocks) in enumerate(train_dataloader):
        x = blocks[0].srcdata["feat"]
        y = blocks[-1].dstdata["label"]
        y_hat = model(blocks, x)
        loss = F.cross_entropy(y_hat, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        total_loss += loss.item()
    acc = evaluate(model, val_dataloader)
    print(f"Epoch {epoch:05d} | Loss {total_loss / (it + 1):.4f} | Accuracy {acc:.4f}")
print(f"test accuracy {evaluate(model, test_dataloader):.4f}")
