"""GraphSAGE on Cora with PyG, fed by graphtier: PyG's minibatch GraphSAGE example (SAGEConv
layers, `out[:batch.batch_size]`; `--trim` trims each layer's input with `trim_to_layer` as PyG's
hierarchical sampling example does) with only its loader import and dataset lines changed.

    graphtier convert planetoid --root datasets/cora --name cora --out data/cora
    python examples/pyg_sage_cora.py data/cora [--trim]

The lines that differ from the PyG version are marked "graphtier:".
"""

import argparse

import torch
import torch.nn.functional as F
import torch_geometric.transforms as T
from torch_geometric.nn import SAGEConv
from torch_geometric.utils import trim_to_layer

import graphtier  # graphtier: was `from torch_geometric.datasets import Planetoid`
from graphtier.pyg import NeighborLoader  # graphtier: was `from torch_geometric.loader import NeighborLoader`

parser = argparse.ArgumentParser()
parser.add_argument("dataset", help="Cora converted by `graphtier convert planetoid`")
parser.add_argument("--trim", action="store_true", help="trim each layer's input with trim_to_layer")
parser.add_argument("--epochs", type=int, default=50)
parser.add_argument("--seed", type=int, default=0)
args = parser.parse_args()

torch.manual_seed(args.seed)
# graphtier: was `dataset = Planetoid(path, 'Cora', transform=T.NormalizeFeatures()); data = dataset[0]`
# (a row's normalisation needs only the row, so the transform applies to each batch alike).
data = graphtier.Dataset(args.dataset)
transform = T.NormalizeFeatures()
num_features, num_classes = data.feature_dim, data.num_classes  # graphtier: dataset.num_features, ...

# graphtier: input_nodes names the split (was data.train_mask, data.val_mask, data.test_mask); seed= is
# graphtier's sample stream.
train_loader = NeighborLoader(data, num_neighbors=[25, 10], input_nodes="train", batch_size=32, shuffle=True,
                              transform=transform, seed=args.seed)
val_loader = NeighborLoader(data, num_neighbors=[-1, -1], input_nodes="val", batch_size=512, transform=transform)
test_loader = NeighborLoader(data, num_neighbors=[-1, -1], input_nodes="test", batch_size=512, transform=transform)


class SAGE(torch.nn.Module):
    def __init__(self, in_channels, hidden_channels, out_channels):
        super().__init__()
        self.convs = torch.nn.ModuleList([SAGEConv(in_channels, hidden_channels),
                                          SAGEConv(hidden_channels, out_channels)])

    def forward(self, x, edge_index, num_sampled_nodes_per_hop=None, num_sampled_edges_per_hop=None):
        for i, conv in enumerate(self.convs):
            if num_sampled_nodes_per_hop is not None:
                x, edge_index, _ = trim_to_layer(layer=i, num_sampled_nodes_per_hop=num_sampled_nodes_per_hop,
                                                 num_sampled_edges_per_hop=num_sampled_edges_per_hop, x=x,
                                                 edge_index=edge_index)
            x = conv(x, edge_index)
            if i < len(self.convs) - 1:
                x = x.relu()
                x = F.dropout(x, p=0.5, training=self.training)
        return x


def run(model, batch):
    if args.trim:
        return model(batch.x, batch.edge_index, batch.num_sampled_nodes, batch.num_sampled_edges)
    return model(batch.x, batch.edge_index)


model = SAGE(num_features, 256, num_classes)
optimizer = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)


def train():
    model.train()
    total_loss = total_examples = 0
    for batch in train_loader:
        optimizer.zero_grad()
        out = run(model, batch)[:batch.batch_size]
        loss = F.cross_entropy(out, batch.y[:batch.batch_size])
        loss.backward()
        optimizer.step()
        total_loss += float(loss) * batch.batch_size
        total_examples += batch.batch_size
    return total_loss / total_examples


@torch.no_grad()
def test(loader):
    model.eval()
    correct = total = 0
    for batch in loader:
        pred = run(model, batch)[:batch.batch_size].argmax(dim=-1)
        correct += int((pred == batch.y[:batch.batch_size]).sum())
        total += batch.batch_size
    return correct / total


best_val_acc = test_acc = 0
for epoch in range(1, args.epochs + 1):
    loss = train()
    val_acc = test(val_loader)
    if val_acc > best_val_acc:
        best_val_acc, test_acc = val_acc, test(test_loader)
    print(f"Epoch: {epoch:03d}, Loss: {loss:.4f}, Val: {val_acc:.4f}, Test: {test_acc:.4f}")
print(f"test accuracy {test_acc:.4f}")
