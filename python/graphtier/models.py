"""Models over graphtier minibatches: GraphSAGE (mean aggregator), a LADIES/FastGCN GCN and an MLP
baseline. Plain PyTorch (1.13 and 2.x), no PyG needed: aggregation is an index_add over each
block's CSC edges, which is deterministic on the CPU."""

from __future__ import annotations

from typing import List

import torch
import torch.nn.functional as F
from torch import nn

from graphtier.loader import Block


def _aggregate(x_src: torch.Tensor, block: Block, weights: torch.Tensor = None) -> torch.Tensor:
    """Sum over each dst node's edges of x_src[src] (times the edge weight when given)."""
    messages = x_src.index_select(0, block.indices)
    if weights is not None:
        messages = messages * weights.unsqueeze(1)
    out = torch.zeros(block.num_dst, x_src.shape[1], dtype=x_src.dtype, device=x_src.device)
    return out.index_add_(0, block.dst_index, messages)


def _layer_shapes(in_dim: int, hidden: int, out_dim: int, num_layers: int):
    """(in, out) of each layer: in_dim -> hidden -> ... -> out_dim."""
    dims = [in_dim] + [hidden] * (num_layers - 1) + [out_dim]
    return list(zip(dims[:-1], dims[1:]))


def _stack(x: torch.Tensor, layers, dropout: float, training: bool) -> torch.Tensor:
    """dropout -> layer -> ReLU for every layer but the last (no ReLU on the logits)."""
    for i, layer in enumerate(layers):
        x = layer(F.dropout(x, p=dropout, training=training))
        if i + 1 < len(layers):
            x = F.relu(x)
    return x


class SAGEConv(nn.Module):
    """GraphSAGE with the mean aggregator, as PyG's SAGEConv: W_l mean(x_N(i)) + W_r x_i."""

    def __init__(self, in_dim: int, out_dim: int):
        super().__init__()
        self.lin_neigh = nn.Linear(in_dim, out_dim)
        self.lin_root = nn.Linear(in_dim, out_dim, bias=False)

    def forward(self, x_src: torch.Tensor, block: Block) -> torch.Tensor:
        degree = (block.indptr[1:] - block.indptr[:-1]).clamp(min=1).to(x_src.dtype).unsqueeze(1)
        root = self.lin_root(x_src[: block.num_dst])
        if self.lin_neigh.in_features > self.lin_neigh.out_features:
            # The mean is linear: project first, then move the narrower rows along the edges.
            h = F.linear(x_src, self.lin_neigh.weight)
            return _aggregate(h, block) / degree + self.lin_neigh.bias + root
        return self.lin_neigh(_aggregate(x_src, block) / degree) + root


class GraphSAGE(nn.Module):
    def __init__(self, in_dim: int, hidden: int, out_dim: int, num_layers: int, dropout: float = 0.5):
        super().__init__()
        self.convs = nn.ModuleList(SAGEConv(a, b) for a, b in _layer_shapes(in_dim, hidden, out_dim, num_layers))
        self.dropout = dropout

    def forward(self, x: torch.Tensor, blocks: List[Block]) -> torch.Tensor:
        if len(blocks) != len(self.convs):
            raise ValueError(f"the model has {len(self.convs)} layers, the minibatch {len(blocks)} blocks")
        layers = [lambda h, c=conv, b=block: c(h, b) for conv, block in zip(self.convs, reversed(blocks))]
        return _stack(x, layers, self.dropout, self.training)


class LayerGCN(nn.Module):
    """The GCN of LADIES and FastGCN: h_dst = W · Σ_e w_e h_src (the block's weights are the
    sampler's row-normalised, debiased entries of Â, self-loops included)."""

    def __init__(self, in_dim: int, hidden: int, out_dim: int, num_layers: int, dropout: float = 0.5):
        super().__init__()
        self.lins = nn.ModuleList(nn.Linear(a, b) for a, b in _layer_shapes(in_dim, hidden, out_dim, num_layers))
        self.dropout = dropout

    @staticmethod
    def _layer(x: torch.Tensor, lin: nn.Linear, block: Block) -> torch.Tensor:
        if block.weights is None:
            raise ValueError("LayerGCN needs blocks with edge weights (a LayerLoader's)")
        # Σ_e w_e (W h_src) = W Σ_e w_e h_src: project first when that narrows the rows.
        if lin.in_features > lin.out_features:
            return _aggregate(F.linear(x, lin.weight), block, block.weights) + lin.bias
        return lin(_aggregate(x, block, block.weights))

    def forward(self, x: torch.Tensor, blocks: List[Block]) -> torch.Tensor:
        if len(blocks) != len(self.lins):
            raise ValueError(f"the model has {len(self.lins)} layers, the minibatch {len(blocks)} blocks")
        layers = [lambda h, l=lin, b=block: self._layer(h, l, b) for lin, block in zip(self.lins, reversed(blocks))]
        return _stack(x, layers, self.dropout, self.training)


class MLP(nn.Module):
    """The graph-free baseline: the seeds' own features only (x[:num_seeds])."""

    def __init__(self, in_dim: int, hidden: int, out_dim: int, num_layers: int, dropout: float = 0.5):
        super().__init__()
        self.lins = nn.ModuleList(nn.Linear(a, b) for a, b in _layer_shapes(in_dim, hidden, out_dim, num_layers))
        self.dropout = dropout

    def forward(self, x: torch.Tensor, blocks: List[Block]) -> torch.Tensor:
        x = x[: blocks[0].num_dst] if blocks else x
        return _stack(x, list(self.lins), self.dropout, self.training)
