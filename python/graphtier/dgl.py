"""A loader with DGL's interface: `from graphtier.dgl import DataLoader, NeighborSampler` in place of
`from dgl.dataloading import DataLoader, NeighborSampler`, and a graphtier dataset in place of the
in-memory `DGLGraph`, and a DGL minibatch training loop runs unchanged.

    from graphtier.dgl import DataLoader, NeighborSampler
    g = graphtier.Dataset("data/cora")
    sampler = NeighborSampler([10, 10], prefetch_node_feats=["feat"], prefetch_labels=["label"])
    loader = DataLoader(g, "train", sampler, batch_size=32, shuffle=True, cpu_buffer="10%")
    for input_nodes, output_nodes, blocks in loader:
        y_hat = model(blocks, blocks[0].srcdata["feat"])
        loss = F.cross_entropy(y_hat, blocks[-1].dstdata["label"])

Each item is DGL's `(input_nodes, output_nodes, blocks)`: `blocks[l]` the message-flow graph of layer
l (`dgl.create_block`, input side first), whose dst nodes are the first of its src nodes, with
`srcdata[dgl.NID]` / `dstdata[dgl.NID]` their global ids, `edata[dgl.EID]` the edges' positions in
the dataset's topology (where the sampler keeps them), the features under each name of
`prefetch_node_feats` in `blocks[0].srcdata` and the seeds' labels under each name of
`prefetch_labels` in `blocks[-1].dstdata`. graphtier's blocks are DGL's blocks already (each layer
samples every dst node, the seeds again in each hop), so nothing is trimmed: the batch is the one
graphtier.NeighborLoader yields, with its blocks in DGL's order.
"""

from __future__ import annotations

from typing import Iterator, List, Optional, Sequence, Tuple

import torch

try:
    import dgl
except ImportError as e:
    raise ImportError("graphtier.dgl needs DGL: `pip install dgl` (scripts/setup-dgl.sh makes a venv with it)") from e

from graphtier import loader as _loader
from graphtier.dataset import open_dataset

# DGL DataLoader's options that tune its worker processes and prefetching: graphtier's pipeline has
# its own sampling, prefetch and gather threads, so DGL scripts that pass them run unchanged and they
# are unused.
_WORKER_OPTIONS = ("num_workers", "use_prefetch_thread", "use_alternate_streams", "pin_prefetcher", "use_uva",
                   "persistent_workers", "pin_memory", "prefetch_factor", "worker_init_fn", "gpu_cache")


class NeighborSampler:
    """DGL's `dgl.dataloading.NeighborSampler` for graphtier's DataLoader: `fanouts[l]` in-neighbours
    per dst node in layer l, input side first as in DGL (-1: all), uniform, without replacement unless
    `replace`. On a typed dataset `fanouts[l]` is one number for every relation or, as in DGL, a dict
    by edge type (its relation name "cites" where that is unique, or its canonical
    ("paper", "cites", "paper")), a relation left out taking none. `prefetch_node_feats` names under
    which the dataset's features go in `blocks[0].srcdata` (per type on a typed dataset, the types
    with a feature table), `prefetch_labels` those under which its labels go in
    `blocks[-1].dstdata`. Edge-direction "out", probabilities, masks and edge features are refused
    (NotImplementedError)."""

    def __init__(self, fanouts: Sequence, edge_dir: str = "in", prob=None, mask=None, replace: bool = False,
                 prefetch_node_feats: Optional[Sequence[str]] = None, prefetch_labels: Optional[Sequence[str]] = None,
                 prefetch_edge_feats: Optional[Sequence[str]] = None, output_device=None, fused: bool = True):
        if isinstance(fanouts, dict):
            raise TypeError("fanouts: expected a list with one entry per layer (an int, or a dict by edge type)")
        if edge_dir != "in":
            raise NotImplementedError(f"edge_dir={edge_dir!r}: graphtier samples in-neighbours (edge_dir='in')")
        for name, value in (("prob", prob), ("mask", mask), ("prefetch_edge_feats", prefetch_edge_feats)):
            if value:
                raise NotImplementedError(f"{name} is not supported by graphtier.dgl.NeighborSampler")
        self.fanouts = [dict(f) if isinstance(f, dict) else int(f) for f in fanouts]
        if not self.fanouts:
            raise ValueError("fanouts: expected at least one layer")
        self.replace = bool(replace)
        self.prefetch_node_feats = list(prefetch_node_feats or [])
        self.prefetch_labels = list(prefetch_labels or [])
        self.output_device = output_device


class MultiLayerFullNeighborSampler(NeighborSampler):
    """DGL's `MultiLayerFullNeighborSampler`: every in-neighbour in each of `num_layers` layers."""

    def __init__(self, num_layers: int, edge_dir: str = "in", prefetch_node_feats: Optional[Sequence[str]] = None,
                 prefetch_labels: Optional[Sequence[str]] = None, prefetch_edge_feats: Optional[Sequence[str]] = None,
                 output_device=None):
        super().__init__([-1] * int(num_layers), edge_dir=edge_dir, prefetch_node_feats=prefetch_node_feats,
                         prefetch_labels=prefetch_labels, prefetch_edge_feats=prefetch_edge_feats,
                         output_device=output_device)


class DataLoader(_loader.Adapter):
    """DGL's `dgl.dataloading.DataLoader` over a graphtier dataset with a graphtier.dgl sampler.

    `graph` is a graphtier.Dataset or its directory; `indices` the seeds: node ids (a tensor,
    possibly on the GPU as DGL scripts keep them), a bool mask over the nodes, or a split name
    ("train", "val", "test"); on a typed dataset {labelled type: ids within the type} as DGL numbers
    them (Dataset.split's layout; an id outside the type is an IndexError naming it); ids given to a
    renumbered dataset need `ids_numbering` ("prepared" or "original", graphtier.NeighborLoader);
    `batch_size`, `shuffle` and `drop_last` as in DGL; `device` where the
    blocks and tensors go. DGL's worker and prefetch options (`num_workers`, `use_uva`, ...) are
    accepted and unused; `use_ddp` is refused (stride ranks with graphtier's `batch_offset` and
    `batch_stride`). Every other keyword goes to graphtier.NeighborLoader (the tier budgets
    `gpu_hot`, `gpu_cache`, `cpu_buffer`, `host_cache`, `seed`, `window`, ...). Without `seed=` the
    seed is `torch.initial_seed()`, so `torch.manual_seed` (which `dgl.seed` calls) decides it.

    Iterating is one epoch, each `iter(loader)` a fresh pass, as with graphtier.NeighborLoader.
    """

    def __init__(self, graph, indices, graph_sampler: NeighborSampler, device=None, use_ddp: bool = False,
                 ddp_seed: int = 0, batch_size: int = 1, drop_last: bool = False, shuffle: bool = False, **kwargs):
        if not isinstance(graph_sampler, NeighborSampler):
            raise TypeError(f"graph_sampler: expected a graphtier.dgl.NeighborSampler, got "
                            f"{type(graph_sampler).__name__}")
        if use_ddp:
            raise NotImplementedError("use_ddp=True: stride ranks with batch_offset=rank, batch_stride=world_size")
        for name in _WORKER_OPTIONS:
            kwargs.pop(name, None)
        _loader.seed_from_torch(kwargs)
        self.graph = open_dataset(graph, "graph")
        self.graph_sampler = graph_sampler
        self.device = torch.device(device if device is not None else "cpu")
        features = bool(graph_sampler.prefetch_node_feats)
        # A typed dataset's features are per type (no global table): srcdata gets each type's that has one.
        if features and self.graph.feature_dim == 0 and not any(self.graph.node_type_feature_dims):
            raise ValueError(f"prefetch_node_feats={graph_sampler.prefetch_node_feats}: the dataset has no features")
        if graph_sampler.prefetch_labels and self.graph.num_classes == 0:
            raise ValueError(f"prefetch_labels={graph_sampler.prefetch_labels}: the dataset has no labels")
        self.typed = self.graph.is_hetero
        split = indices if isinstance(indices, str) else None
        ids = None if split is not None else self._seed_ids(indices)
        kwargs["_ids_argument"] = "indices"
        # DGL lists layers input side first, graphtier's fanouts start next to the seeds.
        fanouts = list(reversed(graph_sampler.fanouts))
        if self.typed:
            fanouts, kwargs["relation_fanouts"] = _relation_fanouts(fanouts, self.graph.relations)
        elif any(isinstance(f, dict) for f in fanouts):
            raise ValueError("fanouts: a dict by edge type needs a typed dataset; this one has no node and edge types")
        self.loader = _loader.NeighborLoader(self.graph, fanouts, int(batch_size), split=split, ids=ids,
                                             device=self.device, features=features, shuffle=shuffle,
                                             drop_last=drop_last, replace=graph_sampler.replace, **kwargs)

    def _seed_ids(self, indices):
        """The seeds as the loader's ids= (which checks them, graphtier._ids): DGL's {node type: ids
        within the type} on a typed dataset (one type, the labelled one), ids or a mask otherwise."""
        if not self.typed and isinstance(indices, dict):
            raise ValueError("indices: a dict by node type needs a typed dataset; this one has no node types")
        return indices

    def __iter__(self) -> Iterator[Tuple[torch.Tensor, torch.Tensor, List["dgl.DGLGraph"]]]:
        for batch in self.loader:
            yield self._to_blocks(batch)

    def _to_blocks(self, batch: _loader.Batch):
        if self.typed:
            return self._to_typed_blocks(batch)
        device = self.device
        blocks = []
        for b in reversed(batch.blocks):
            # The block's own edge ids are its CSC positions (no ids given); the topology's go in edata.
            no_ids = torch.empty(0, dtype=torch.int64, device=b.indptr.device)
            block = dgl.create_block(("csc", (b.indptr, b.indices, no_ids)), num_src_nodes=b.num_src,
                                     num_dst_nodes=b.num_dst, idtype=torch.int64, device=device)
            block.srcdata[dgl.NID] = b.src_nodes.to(device)
            block.dstdata[dgl.NID] = b.src_nodes[: b.num_dst].to(device)
            if b.edge_ids is not None:
                block.edata[dgl.EID] = b.edge_ids.to(device)
            blocks.append(block)
        for name in self.graph_sampler.prefetch_node_feats:
            blocks[0].srcdata[name] = batch.x
        labels = batch.y.to(device)
        for name in self.graph_sampler.prefetch_labels:
            blocks[-1].dstdata[name] = labels
        return batch.input_nodes.to(device), batch.seeds.to(device), blocks

    def _to_typed_blocks(self, batch: _loader.Batch):
        """DGL's heterogeneous blocks: per layer a block with every canonical edge type, node ids
        per type as DGL numbers them (the id within the type: global id - the type's first)."""
        device = self.device
        begin = {t: r[0] for t, r in self.graph.node_type_ranges.items()}
        local = lambda t, ids: (ids - begin[t]).to(device)  # noqa: E731
        blocks = []
        for b in reversed(batch.typed_blocks):
            data = {}
            for name, rel in b.relations.items():
                no_ids = torch.empty(0, dtype=torch.int64, device=rel.indptr.device)
                data[tuple(name.split(":"))] = ("csc", (rel.indptr, rel.indices, no_ids))
            block = dgl.create_block(data, num_src_nodes={t: int(v.numel()) for t, v in b.src_nodes.items()},
                                     num_dst_nodes=dict(b.num_dst), idtype=torch.int64, device=device)
            for t, nodes in b.src_nodes.items():
                block.srcnodes[t].data[dgl.NID] = local(t, nodes)
                block.dstnodes[t].data[dgl.NID] = local(t, nodes[: b.num_dst[t]])
            blocks.append(block)
        for name in self.graph_sampler.prefetch_node_feats:
            for t, x in (batch.x_dict or {}).items():
                blocks[0].srcnodes[t].data[name] = x.to(device)
        labelled = self.graph.labelled_type
        for name in self.graph_sampler.prefetch_labels:
            blocks[-1].dstnodes[labelled].data[name] = batch.y.to(device)
        input_nodes = {t: local(t, v) for t, v in batch.typed_blocks[-1].src_nodes.items()}
        return input_nodes, {labelled: local(labelled, batch.seeds)}, blocks


def _relation_fanouts(fanouts: list, relations: Sequence[str]) -> Tuple[List[int], dict]:
    """DGL's per-layer fanouts (an int for every relation, or a dict by edge type: the relation's
    name where that is unique, or its canonical triple; a relation left out takes none) as
    graphtier's `fanouts` and `relation_fanouts` {"src:rel:dst": per layer}."""
    canonical = {tuple(name.split(":")): name for name in relations}
    by_rel = {}
    for name in relations:
        by_rel.setdefault(name.split(":")[1], []).append(name)
    per_relation = {name: [] for name in relations}
    plain = []
    for f in fanouts:
        if not isinstance(f, dict):
            plain.append(int(f))
            for name in relations:
                per_relation[name].append(int(f))
            continue
        plain.append(0)
        chosen = {}
        for key, value in f.items():
            if isinstance(key, (tuple, list)):
                names = [canonical[tuple(key)]] if tuple(key) in canonical else []
            else:
                names = by_rel.get(key, [])
            if len(names) != 1:
                raise ValueError(f"fanouts: edge type {key!r} " + (
                    f"names {len(names)} relations ({', '.join(names)}); give its canonical (src, rel, dst)" if names
                    else f"is not a relation of the dataset ({', '.join(relations)})"))
            chosen[names[0]] = int(value)
        for name in relations:
            per_relation[name].append(chosen.get(name, 0))
    return plain, per_relation

