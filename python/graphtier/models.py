"""Models over graphtier minibatches: GraphSAGE (mean aggregator), GCN, a LADIES/FastGCN GCN, an MLP
baseline, and R-SAGE, R-GCN and R-GAT on typed (heterogeneous) minibatches. Plain PyTorch (1.13 and 2.x), no PyG needed: aggregation is an index_add over each
block's CSC edges, which is deterministic on the CPU."""

from __future__ import annotations

import warnings
from typing import Dict, List, Optional, Tuple

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


class GCNConv(nn.Module):
    """Kipf and Welling's GCN layer as PyG's GCNConv (self-loops, symmetric normalisation):
    h_i = W (x_i / d_i + Σ_{j→i} x_j / sqrt(d_i d_j)) + b, d = in-degree + 1 in the graph the blocks
    were sampled from. With full neighbourhoods (fanouts -1) and every edge kept, a stack of these
    over the blocks computes what a full-graph GCN computes at the seeds."""

    def __init__(self, in_dim: int, out_dim: int):
        super().__init__()
        self.lin = nn.Linear(in_dim, out_dim, bias=False)
        # Glorot, as PyG's GCNConv: nn.Linear's default is 2-2.5x narrower here, which leaves a dot
        # decoder's first scores near 0 and slows training (measured on Cora links, docs/benchmarks.md).
        nn.init.xavier_uniform_(self.lin.weight)
        self.bias = nn.Parameter(torch.zeros(out_dim))

    def forward(self, x_src: torch.Tensor, block: Block, degree: torch.Tensor) -> torch.Tensor:
        """`degree` [num_nodes] the graph's in-degrees + 1 (float), indexed by global node id."""
        if self.lin.in_features > self.lin.out_features:
            x_src = self.lin(x_src)  # Â is linear: project first, then move the narrower rows
        scale = degree.index_select(0, block.src_nodes).to(x_src.dtype).rsqrt()
        dst_scale = scale[: block.num_dst].unsqueeze(1)
        h = _aggregate(x_src * scale.unsqueeze(1), block) * dst_scale + x_src[: block.num_dst] * dst_scale.square()
        if self.lin.in_features <= self.lin.out_features:
            h = self.lin(h)
        return h + self.bias


class GCN(nn.Module):
    """A stack of GCNConv layers (PyG's link-prediction example's encoder); forward takes the
    graph's in-degrees + 1 besides the features and blocks (GCN.degrees makes them)."""

    def __init__(self, in_dim: int, hidden: int, out_dim: int, num_layers: int, dropout: float = 0.5):
        super().__init__()
        self.convs = nn.ModuleList(GCNConv(a, b) for a, b in _layer_shapes(in_dim, hidden, out_dim, num_layers))
        self.dropout = dropout

    @staticmethod
    def degrees(edges: torch.Tensor, num_nodes: int) -> torch.Tensor:
        """In-degree + 1 of every node ([num_nodes] float32) from the graph's [2, E] (src, dst) edges."""
        return (torch.bincount(edges[1], minlength=num_nodes) + 1).to(torch.float32)

    def forward(self, x: torch.Tensor, blocks: List[Block], degree: torch.Tensor) -> torch.Tensor:
        if len(blocks) != len(self.convs):
            raise ValueError(f"the model has {len(self.convs)} layers, the minibatch {len(blocks)} blocks")
        layers = [lambda h, c=conv, b=block: c(h, b, degree) for conv, block in zip(self.convs, reversed(blocks))]
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


# Typed (heterogeneous) models: R-SAGE, R-GCN and R-GAT over a typed batch's TypedBlocks
# (graphtier.loader.TypedBlock), one convolution per relation whose outputs are summed per
# destination type, as PyG's to_hetero(..., aggr="sum") and HeteroConv do.

def _relation_mean(x_src: torch.Tensor, rb) -> torch.Tensor:
    """Each dst node's mean over its edges of relation `rb` of x_src[src] (zero without edges)."""
    out = x_src.new_zeros(rb.num_dst, x_src.shape[1])
    out.index_add_(0, rb.dst_index, x_src.index_select(0, rb.indices))
    degree = (rb.indptr[1:] - rb.indptr[:-1]).clamp(min=1).to(x_src.dtype).unsqueeze(1)
    return out / degree


class RelationSAGE(nn.Module):
    """PyG's SAGEConv (mean) on one relation: W_l mean_{j in N_r(i)} x_j + b + W_r x_i."""

    def __init__(self, src_dim: int, dst_dim: int, out_dim: int):
        super().__init__()
        self.lin_neigh = nn.Linear(src_dim, out_dim)
        self.lin_root = nn.Linear(dst_dim, out_dim, bias=False)

    def forward(self, x_src: torch.Tensor, x_dst: torch.Tensor, rb) -> torch.Tensor:
        return self.lin_neigh(_relation_mean(x_src, rb)) + self.lin_root(x_dst)


class RelationGCN(nn.Module):
    """R-GCN's relation term (Schlichtkrull et al.): W_r times the mean over N_r(i) (c_{i,r} = |N_r(i)|);
    the self-connection W_0 x_i + b is the layer's, once per dst type."""

    def __init__(self, src_dim: int, dst_dim: int, out_dim: int):
        super().__init__()
        self.lin = nn.Linear(src_dim, out_dim, bias=False)

    def forward(self, x_src: torch.Tensor, x_dst: torch.Tensor, rb) -> torch.Tensor:
        return self.lin(_relation_mean(x_src, rb))


class RelationGAT(nn.Module):
    """PyG's GATConv on one bipartite relation (no self-loops, which a relation between two types
    does not have): `heads` heads of out_dim / heads channels, concatenated; attention
    softmax(LeakyReLU(a_s . W_s x_j + a_d . W_d x_i)) over each dst node's edges of the relation."""

    def __init__(self, src_dim: int, dst_dim: int, out_dim: int, heads: int = 4):
        super().__init__()
        if out_dim % heads:
            heads = 1
        self.heads, self.channels = heads, out_dim // heads
        self.lin_src = nn.Linear(src_dim, out_dim, bias=False)
        self.lin_dst = nn.Linear(dst_dim, out_dim, bias=False)
        self.att_src = nn.Parameter(torch.empty(heads, self.channels))
        self.att_dst = nn.Parameter(torch.empty(heads, self.channels))
        self.bias = nn.Parameter(torch.zeros(out_dim))
        nn.init.xavier_uniform_(self.att_src)
        nn.init.xavier_uniform_(self.att_dst)

    def forward(self, x_src: torch.Tensor, x_dst: torch.Tensor, rb) -> torch.Tensor:
        h_src = self.lin_src(x_src).view(-1, self.heads, self.channels)
        h_dst = self.lin_dst(x_dst).view(-1, self.heads, self.channels)
        dst = rb.dst_index
        h_j = h_src.index_select(0, rb.indices)  # [E, H, C]
        score = F.leaky_relu((h_j * self.att_src).sum(-1) + (h_dst.index_select(0, dst) * self.att_dst).sum(-1), 0.2)
        # Softmax over each dst node's edges: shifted by the node's maximum for stability.
        index = dst.unsqueeze(1).expand_as(score)
        with warnings.catch_warnings():  # torch 1.13 calls scatter_reduce beta and says so
            warnings.filterwarnings("ignore", message=r"scatter_reduce\(\) is in beta")
            peak = score.new_full((rb.num_dst, self.heads), float("-inf")).scatter_reduce(
                0, index, score.detach(), reduce="amax", include_self=True)
        weight = (score - peak.index_select(0, dst)).exp()
        total = score.new_zeros(rb.num_dst, self.heads).index_add_(0, dst, weight)
        alpha = weight / total.index_select(0, dst).clamp(min=1e-16)
        out = h_src.new_zeros(rb.num_dst, self.heads, self.channels).index_add_(0, dst, h_j * alpha.unsqueeze(-1))
        return out.reshape(rb.num_dst, self.heads * self.channels) + self.bias


class TypedInput(nn.Module):
    """Each node type's input rows for a typed batch: its features (x_dict, as float32) where the type
    has a table, else a learned `embedding_dim` embedding per node of the type."""

    def __init__(self, node_types: List[str], type_ranges: Dict[str, Tuple[int, int]], feature_dims: Dict[str, int],
                 embedding_dim: int = 64):
        super().__init__()
        self.node_types = list(node_types)
        self.offsets = {t: type_ranges[t][0] for t in node_types}
        self.embeddings = nn.ModuleDict({t: nn.Embedding(type_ranges[t][1] - type_ranges[t][0], embedding_dim)
                                         for t in node_types if feature_dims.get(t, 0) == 0})
        self.dims = {t: feature_dims[t] if t not in self.embeddings else embedding_dim for t in node_types}

    def forward(self, x_dict: Optional[Dict[str, torch.Tensor]], nodes: Dict[str, torch.Tensor]):
        out = {}
        for t in self.node_types:
            if t in self.embeddings:
                out[t] = self.embeddings[t](nodes[t] - self.offsets[t])
            else:
                out[t] = x_dict[t].float()
        return out


_RELATION_CONVS = {"rsage": RelationSAGE, "rgcn": RelationGCN, "rgat": RelationGAT}


class RelationalGNN(nn.Module):
    """R-SAGE (`kind="rsage"`: per-relation SAGEConv summed per dst type, PyG's
    to_hetero(GraphSAGE)), R-GCN (`"rgcn"`: per-relation mean times W_r, plus W_0 x_i + b per dst
    type) or R-GAT (`"rgat"`: per-relation GATConv plus a linear skip per dst type), `num_layers`
    layers (dropout -> layer -> ReLU, no ReLU on the logits) on a typed batch:
    forward(x_dict, typed_blocks) gives the logits of the `target` type's dst nodes of
    typed_blocks[0] (the seeds). `relations` are "src:rel:dst" names."""

    def __init__(self, kind: str, typed_input: TypedInput, relations: List[str], target: str, hidden: int,
                 out_dim: int, num_layers: int, dropout: float = 0.5):
        super().__init__()
        if kind not in _RELATION_CONVS:
            raise ValueError(f"unknown relational model {kind!r} (expected {', '.join(_RELATION_CONVS)})")
        self.kind, self.input, self.relations, self.target, self.dropout = kind, typed_input, list(relations), target, dropout
        self.node_types = typed_input.node_types
        self.out_dims = [hidden] * (num_layers - 1) + [out_dim]
        self.convs = nn.ModuleList()
        self.roots = nn.ModuleList()
        dims = dict(typed_input.dims)
        for out in self.out_dims:
            convs = {}
            for r in self.relations:
                src, _, dst = r.split(":")
                convs[self._key(r)] = _RELATION_CONVS[kind](dims[src], dims[dst], out)
            self.convs.append(nn.ModuleDict(convs))
            # R-GCN's self-connection and R-GAT's skip, once per dst type; R-SAGE's is per relation.
            self.roots.append(nn.ModuleDict({t: nn.Linear(dims[t], out) for t in self.node_types} if kind != "rsage"
                                            else {}))
            dims = {t: out for t in self.node_types}

    @staticmethod
    def _key(relation: str) -> str:
        return relation.replace(":", "__")  # a module name

    def forward(self, x_dict: Optional[Dict[str, torch.Tensor]], typed_blocks) -> torch.Tensor:
        if len(typed_blocks) != len(self.convs):
            raise ValueError(f"the model has {len(self.convs)} layers, the minibatch {len(typed_blocks)} blocks")
        h = self.input(x_dict, typed_blocks[-1].src_nodes)
        last = len(self.convs) - 1
        for layer, (convs, roots, block) in enumerate(zip(self.convs, self.roots, reversed(typed_blocks))):
            h = {t: F.dropout(v, p=self.dropout, training=self.training) for t, v in h.items()}
            out = {}
            for t in self.node_types:
                n = block.num_dst[t]
                out[t] = roots[t](h[t][:n]) if t in roots else h[t].new_zeros(n, self.out_dims[layer])
            for r in self.relations:
                rb = block.relations[r]
                src, _, dst = r.split(":")
                out[dst] = out[dst] + convs[self._key(r)](h[src], h[dst][: rb.num_dst], rb)
            h = out if layer == last else {t: F.relu(v) for t, v in out.items()}
        return h[self.target]
