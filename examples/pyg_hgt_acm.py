"""HGT on ACM with PyG, fed by graphtier: PyG's heterogeneous graph transformer example
(examples/hetero/hgt_dblp.py: a Linear(-1, hidden) per node type, HGTConv layers, a Linear head on the
labelled type, Adam, full-batch training on the labelled type's masks) with its dataset lines
changed, and the learned embeddings that a graph without features needs.

    graphtier convert typed-edge-list datasets/acm/edge.txt.gz --labels datasets/acm/label.txt.gz \\
        --split 0.2,0.1 --seed 0 --out data/acm
    python examples/pyg_hgt_acm.py data/acm

The data is one batch of graphtier.pyg.NeighborLoader: every paper as a seed with all of its
neighbours for each layer, which is the whole graph as far as the papers' outputs can see, so the
training is PyG's full-batch training. ACM has no features: each node type learns a 64-d embedding
of its nodes (PyG's DBLP gives its featureless type a constant instead; a constant on every type
leaves nothing to learn from). The lines that differ from the PyG version are marked "graphtier:".
"""

import argparse

import torch
import torch.nn.functional as F
from torch_geometric.nn import HGTConv, Linear

import graphtier  # graphtier: was `from torch_geometric.datasets import DBLP`
from graphtier.pyg import NeighborLoader  # graphtier: the whole labelled graph as one HeteroData batch

parser = argparse.ArgumentParser()
parser.add_argument("dataset", help="ACM converted by `graphtier convert typed-edge-list`")
parser.add_argument("--epochs", type=int, default=100)
parser.add_argument("--seed", type=int, default=0)
args = parser.parse_args()
torch.manual_seed(args.seed)

NUM_LAYERS = 1
# graphtier: was `dataset = DBLP(path); data = dataset[0]`. Every labelled paper is a seed, with all
# of its neighbours in each of the model's layers: the batch is everything the papers' outputs read.
dataset = graphtier.Dataset(args.dataset)
target = dataset.labelled_type
begin, end = dataset.node_type_ranges[target]
loader = NeighborLoader(dataset, num_neighbors=[-1] * NUM_LAYERS, input_nodes=(target, None),
                        batch_size=end - begin, seed=args.seed)
data = next(iter(loader))
for split in ("train", "val", "test"):  # graphtier: the dataset's splits as the masks PyG's data carries
    mask = torch.zeros(data[target].num_nodes, dtype=torch.bool)
    mask[dataset.split(split)[target]] = True  # ids within the type; the seeds come first, in id order
    data[target][f"{split}_mask"] = mask
print(data)

# graphtier: ACM has no features (DBLP's papers and authors have): a learned 64-d embedding of every
# node of a featureless type, looked up by the batch's n_id, stands in for its x.
embeddings = torch.nn.ModuleDict({t: torch.nn.Embedding(e - b, 64) for t, (b, e) in dataset.node_type_ranges.items()
                                  if "x" not in data[t]})


def x_dict():
    return {t: data[t].x if t not in embeddings else embeddings[t](data[t].n_id) for t in data.node_types}


class HGT(torch.nn.Module):
    def __init__(self, hidden_channels, out_channels, num_heads, num_layers):
        super().__init__()

        self.lin_dict = torch.nn.ModuleDict()
        for node_type in data.node_types:
            self.lin_dict[node_type] = Linear(-1, hidden_channels)

        self.convs = torch.nn.ModuleList()
        for _ in range(num_layers):
            # graphtier: PyG 2.3 and later have no `group` argument (the types' messages are summed).
            self.convs.append(HGTConv(hidden_channels, hidden_channels, data.metadata(), num_heads))

        self.lin = Linear(hidden_channels, out_channels)

    def forward(self, x_dict, edge_index_dict):
        x_dict = {node_type: self.lin_dict[node_type](x).relu_() for node_type, x in x_dict.items()}
        for conv in self.convs:
            x_dict = conv(x_dict, edge_index_dict)
        return self.lin(x_dict[target])  # graphtier: the labelled type, was 'author'


model = HGT(hidden_channels=64, out_channels=dataset.num_classes, num_heads=2, num_layers=NUM_LAYERS)
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
data, model, embeddings = data.to(device), model.to(device), embeddings.to(device)

with torch.no_grad():  # Initialize lazy modules.
    out = model(x_dict(), data.edge_index_dict)

# graphtier: the embeddings learn with the model.
optimizer = torch.optim.Adam([*model.parameters(), *embeddings.parameters()], lr=0.005, weight_decay=0.001)


def train():
    model.train()
    optimizer.zero_grad()
    out = model(x_dict(), data.edge_index_dict)
    mask = data[target].train_mask
    loss = F.cross_entropy(out[mask], data[target].y[mask])
    loss.backward()
    optimizer.step()
    return float(loss)


@torch.no_grad()
def test():
    model.eval()
    pred = model(x_dict(), data.edge_index_dict).argmax(dim=-1)

    accs = []
    for split in ["train_mask", "val_mask", "test_mask"]:
        mask = data[target][split]
        acc = (pred[mask] == data[target].y[mask]).sum() / mask.sum()
        accs.append(float(acc))
    return accs


for epoch in range(1, args.epochs + 1):
    loss = train()
    train_acc, val_acc, test_acc = test()
    print(f"Epoch: {epoch:03d}, Loss: {loss:.4f}, Train: {train_acc:.4f}, Val: {val_acc:.4f}, Test: {test_acc:.4f}")
