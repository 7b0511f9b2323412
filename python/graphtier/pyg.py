"""A loader with PyG's interface: `from graphtier.pyg import NeighborLoader` in place of
`from torch_geometric.loader import NeighborLoader`, and a graphtier dataset in place of the
in-memory `Data`, and a PyG training loop runs unchanged.

    from graphtier.pyg import NeighborLoader
    data = graphtier.Dataset("data/cora")
    loader = NeighborLoader(data, num_neighbors=[25, 10], input_nodes="train", batch_size=32,
                            shuffle=True, cpu_buffer="10%")
    for batch in loader:
        out = model(batch.x, batch.edge_index)[:batch.batch_size]
        loss = F.cross_entropy(out, batch.y[:batch.batch_size])

Each batch is a `torch_geometric.data.Data` laid out as PyG's NeighborLoader lays it out: `n_id` the
global ids of all sampled nodes, seeds first, then each hop's new nodes in order of first appearance;
`x` and `y` their rows; `edge_index` [2, E] local positions in `n_id` (row 0 the neighbour, i.e. the
message source, row 1 the node it was sampled for), grouped by hop (the seeds' edges first) and
sorted by target; `e_id` the edges' positions in the dataset's topology (where the sampler keeps
them); `batch_size` the number of seeds; `num_sampled_nodes` (hops 0..L) and `num_sampled_edges`
(hops 1..L) per hop, as `torch_geometric.utils.trim_to_layer` reads them; `input_id` the seeds'
positions in `input_nodes`.

PyG samples hop k's neighbours only for the nodes first reached in hop k-1, so a node's in-degree
is at most its hop's fanout. graphtier's blocks (message-flow graphs, docs/architecture.md
"MiniBatch") sample every dst node of every block, the seeds again in each hop; this module keeps,
of block k, the edges of the nodes first reached in hop k (a contiguous range of the CSC block) and
drops the nodes only the others reached, so the batch is the subgraph PyG's sampler would have
drawn with these draws.
"""

from __future__ import annotations

from typing import Callable, Iterator, Optional, Sequence

import torch

try:
    from torch_geometric.data import Data, HeteroData
except ImportError as e:
    raise ImportError("graphtier.pyg needs PyTorch Geometric: `pip install torch_geometric`") from e

from graphtier import _core
from graphtier import loader as _loader
from graphtier.dataset import open_dataset

# torch.utils.data.DataLoader's options that tune PyTorch's worker processes: graphtier's pipeline has
# its own sampling and gather threads, so PyG scripts that pass them run unchanged and they are unused.
_WORKER_OPTIONS = ("num_workers", "pin_memory", "persistent_workers", "prefetch_factor", "filter_per_worker",
                   "is_sorted", "timeout", "worker_init_fn", "multiprocessing_context")


def _input_ids(ds: _core.Dataset, input_nodes):
    """PyG's `input_nodes` (not a split name) as the loader's ids=: ids or a mask (None: every node)
    or, on a typed dataset, PyG's (node type, ids or mask of that type, or None) as {type: ids},
    ids local to the type (Dataset.split's {type: ids} is taken as the ids too). The loader checks
    them (graphtier._ids)."""
    if not ds.node_types:
        if isinstance(input_nodes, tuple):
            raise ValueError("input_nodes: a (node type, ids) pair needs a typed dataset; this one has no node types")
        return torch.arange(ds.num_nodes, dtype=torch.int64) if input_nodes is None else input_nodes
    if not isinstance(input_nodes, tuple) or len(input_nodes) != 2 or not isinstance(input_nodes[0], str):
        raise ValueError(f"input_nodes: on a typed dataset, ({ds.labelled_type!r}, ids within the type, a mask of "
                         f"the type or None) or a split name; got {input_nodes!r:.80}")
    node_type, ids = input_nodes
    if isinstance(ids, dict) and list(ids) == [node_type]:
        ids = ids[node_type]
    return {node_type: ids}


def _relation_fanouts(num_neighbors: dict, relations, hops: int) -> dict:
    """PyG's num_neighbors by edge type (src, rel, dst) as graphtier's relation_fanouts by name; an
    edge type left out samples nothing."""
    names = set(relations)
    out = {name: [0] * hops for name in relations}
    for key, values in num_neighbors.items():
        name = ":".join(key) if isinstance(key, tuple) else str(key)
        if name not in names:
            raise ValueError(f"num_neighbors: {key!r} is not an edge type of the dataset "
                             f"({', '.join(relations)})")
        if len(values) != hops:
            raise ValueError(f"num_neighbors[{key!r}]: {len(values)} hops, the others have {hops}")
        out[name] = [int(v) for v in values]
    return out


class NeighborLoader(_loader.Adapter):
    """PyG's `torch_geometric.loader.NeighborLoader` over a graphtier dataset.

    `data` is a graphtier.Dataset or its directory; `num_neighbors[k]` neighbours are drawn for each
    node first reached in hop k (-1: all); `input_nodes` the seeds: node ids, a bool mask over the
    nodes, a split name ("train", "val" or "valid", "test") or None (every node); `batch_size`,
    `shuffle`, `drop_last` and `replace` as in PyG (and PyTorch's DataLoader, whose defaults they
    keep); `transform` is applied to each batch. Without `seed=` the seed is
    `torch.initial_seed()`, so `torch.manual_seed` decides it as in PyG. DataLoader's worker options (`num_workers`,
    `pin_memory`, ...) are accepted and unused. Every other keyword goes to
    graphtier.NeighborLoader: `device`, `store`, `options`, and any field of graphtier.LoaderOptions
    or FeatureStoreOptions (the tier budgets `gpu_hot`, `gpu_cache`, `cpu_buffer`, `host_cache`,
    `seed`, `window`, `io_depth`, ...).

    Node ids: on a dataset `graphtier prepare` renumbered, `input_nodes` ids and masks need
    `ids_numbering`: "original", that of the input the dataset was converted from (a PyG
    `train_mask`), or "prepared", the dataset's own (elsewhere they are the dataset's own); a split
    name or None needs nothing. On a typed dataset they are ids within their type, 0 to its count
    - 1, as PyG numbers them (an id outside is an IndexError naming the type). `n_id`, `edge_index` and
    `e_id` are always in the dataset's own numbering (graphtier.Dataset.to_original maps `n_id`
    back), `input_id` positions in `input_nodes` as given.

    A typed dataset (Dataset.is_hetero) takes PyG's hetero arguments: `num_neighbors` a list (every
    relation) or a dict by edge type (src, rel, dst) of per-hop lists (an edge type left out samples
    nothing), `input_nodes` a split name or (labelled type, ids, mask or None), and yields HeteroData
    (per type `n_id` within the type, `x` where the type has features, `y`, `batch_size`, `input_id`
    on the labelled type; per edge type `edge_index`; `num_sampled_nodes` / `num_sampled_edges` by
    type and edge type), every type and edge type present, for `to_hetero` models.

    Temporal sampling takes PyG's `time_attr` ("node_time" or "edge_time": the dataset's
    node_time.bin or edge_time.bin, docs/format.md), `input_time` (one time per `input_nodes` entry;
    default: the seeds' node times) and `temporal_strategy` ("uniform" or "last"): each seed's tree
    holds only neighbours no later than the seed's time; the trees are disjoint (PyG's
    disjoint=True, implied), the batch carries `batch` (each node's seed index) and `seed_time`.

    Iterating is one epoch, each `iter(loader)` a fresh pass, as with graphtier.NeighborLoader.
    """

    def __init__(self, data, num_neighbors: Sequence[int], input_nodes=None, replace: bool = False,
                 transform: Optional[Callable] = None, batch_size: int = 1, shuffle: bool = False,
                 drop_last: bool = False, *, directed: bool = True, disjoint: bool = False,
                 subgraph_type: str = "directional", **kwargs):
        if not directed or subgraph_type != "directional":
            raise NotImplementedError("subgraph_type: only 'directional' (directed=True) sampling is supported")
        time_attr = kwargs.pop("time_attr", None)
        input_time = kwargs.pop("input_time", None)
        temporal_strategy = kwargs.pop("temporal_strategy", "uniform")
        if disjoint and time_attr is None:
            raise NotImplementedError("disjoint=True is supported with time_attr (temporal sampling is disjoint)")
        if time_attr is not None:
            kwargs["time_attr"] = time_attr
            kwargs["temporal_strategy"] = temporal_strategy
        elif input_time is not None:
            raise ValueError("input_time needs time_attr (\"node_time\" or \"edge_time\", the dataset's times)")
        for name in ("weight_attr", "transform_sampler_output", "neighbor_sampler"):
            if kwargs.get(name) is not None:
                raise NotImplementedError(f"{name} is not supported by graphtier.pyg.NeighborLoader")
            kwargs.pop(name, None)
        for name in _WORKER_OPTIONS:
            kwargs.pop(name, None)
        _loader.seed_from_torch(kwargs)
        self.data = open_dataset(data, "data")
        if isinstance(num_neighbors, dict):
            if not self.data.is_hetero:
                raise ValueError("num_neighbors: a dict by edge type needs a typed dataset; this one has none")
            hops = {len(v) for v in num_neighbors.values()}
            if len(hops) != 1:
                raise ValueError(f"num_neighbors: every edge type needs the same number of hops, got {sorted(hops)}")
            kwargs["relation_fanouts"] = _relation_fanouts(num_neighbors, self.data.relations, hops.pop())
            num_neighbors = [0] * len(next(iter(kwargs["relation_fanouts"].values())))
        self.num_neighbors = [int(f) for f in num_neighbors]
        # A split name goes to the loader as such: its ids are in the dataset's own numbering.
        split = input_nodes if isinstance(input_nodes, str) else None
        ids = None if split is not None else _input_ids(self.data, input_nodes)
        if input_nodes is None or (isinstance(input_nodes, tuple) and len(input_nodes) == 2 and input_nodes[1] is None):
            _loader.every_node(kwargs)
        self.transform = transform
        self.batch_size = int(batch_size)
        self.loader = _loader.NeighborLoader(self.data, self.num_neighbors, self.batch_size, split=split,
                                             ids=ids, shuffle=shuffle, drop_last=drop_last,
                                             replace=replace, input_time=input_time,
                                             _ids_argument="input_nodes", **kwargs)
        self.input_nodes = self.loader.ids  # the seeds as checked (global ids), None over a split
        self._input_time = None if input_time is None else _loader._times(input_time)
        self._node_time = self.data.node_time if time_attr is not None else None
        self._labels = self.data.labels().to(torch.int64) if self.data.num_classes > 0 else None

    def __iter__(self) -> Iterator[Data]:
        for batch in self.loader:
            data = self._to_hetero_data(batch) if batch.typed_blocks is not None else self._to_data(batch)
            yield data if self.transform is None else self.transform(data)

    def _seed_time(self, batch: _loader.Batch) -> Optional[torch.Tensor]:
        """A temporal batch's seed times (PyG's seed_time): input_time by position, else the seeds'
        node times; None for an untimed batch."""
        if self._input_time is not None:
            return self._input_time[batch.seed_positions.cpu()].to(batch.seeds.device)
        if self._node_time is not None:
            return self._node_time[batch.seeds.cpu()].to(batch.seeds.device)
        return None

    def _to_data(self, batch: _loader.Batch) -> Data:
        data = _to_data(batch, self._labels)
        seed_time = self._seed_time(batch)
        if seed_time is not None:
            data.seed_time = seed_time
        return data

    def _to_hetero_data(self, batch: _loader.Batch) -> HeteroData:
        """A typed batch as PyG's heterogeneous NeighborLoader lays it out: per node type `n_id` (ids
        within the type), the input type's seeds first, then each hop's new nodes in order of first
        appearance; `x` where the type has features (else `num_nodes`), `y`, `batch_size` and
        `input_id` on the input type; per edge type `edge_index` (row 0 the source's position in its
        type's nodes) grouped by hop; `num_sampled_nodes` / `num_sampled_edges` per type and hop."""
        typed = batch.typed_blocks
        last = typed[-1]
        device = batch.seeds.device
        labelled = self.data.labelled_type
        nodes, edges = _trim_by_hop({t: int(v.numel()) for t, v in last.src_nodes.items()}, labelled,
                                    batch.num_seeds,
                                    [[(name, r.src_type, r.dst_type, r.indices, r.dst_index, None)
                                      for name, r in block.relations.items()] for block in typed], device)
        data = HeteroData()
        for t, (order, _, counts) in nodes.items():
            begin = self.data.node_type_ranges[t][0]
            data[t].n_id = last.src_nodes[t][order] - begin
            if batch.x_dict is not None and t in batch.x_dict:
                data[t].x = batch.x_dict[t][order]
            else:
                data[t].num_nodes = int(order.numel())
        for name, (srcs, dsts, _) in edges.items():
            s, rel, d = name.split(":")
            data[s, rel, d].edge_index = torch.stack([nodes[s][1][torch.cat(srcs)], nodes[d][1][torch.cat(dsts)]])
        if self._labels is not None:
            n_id = data[labelled].n_id + self.data.node_type_ranges[labelled][0]
            data[labelled].y = self._labels[n_id.to("cpu")].to(device)
        if last.src_trees is not None:  # disjoint trees (temporal): each node's seed, PyG's `batch`
            for t, (order, _, _) in nodes.items():
                data[t].batch = last.src_trees[t][order]
            data[labelled].seed_time = self._seed_time(batch)
        data[labelled].batch_size = batch.num_seeds
        data[labelled].input_id = batch.seed_positions.to(device)
        data.num_sampled_nodes = {t: counts for t, (_, _, counts) in nodes.items()}
        data.num_sampled_edges = {tuple(name.split(":")): [int(e.numel()) for e in srcs]
                                  for name, (srcs, _, _) in edges.items()}
        return data


def _to_data(batch: _loader.Batch, labels: Optional[torch.Tensor]) -> Data:
    """An untyped batch as PyG's NeighborLoader lays it out (Data: `n_id`, `edge_index` by hop, `x` or
    `num_nodes`, `y` from `labels`, `e_id`, `batch_size`, `num_sampled_nodes` / `num_sampled_edges`,
    `input_id`, and `batch` for disjoint trees); graphtier.pyg's link loader lays its blocks out with it."""
    blocks = batch.blocks
    num_hops = len(blocks)
    device = batch.input_nodes.device
    # Block k's dst nodes are positions [0, num_dst) of the global order, so positions index one
    # array for every block.
    nodes, edges = _trim_by_hop({None: int(batch.input_nodes.numel())}, None, batch.num_seeds,
                                [[(None, None, None, b.indices, b.dst_index, b.edge_ids)] for b in blocks],
                                device)
    order, new_pos, counts = nodes[None]
    sources, targets, edge_ids = edges[None]
    edge_index = torch.stack([new_pos[torch.cat(sources)], new_pos[torch.cat(targets)]])

    n_id = batch.input_nodes[order]
    attrs = {"n_id": n_id, "edge_index": edge_index}
    if batch.x is not None:
        attrs["x"] = batch.x[order]
    else:
        attrs["num_nodes"] = int(order.numel())  # PyG infers it from x otherwise
    if labels is not None:
        attrs["y"] = labels[n_id.to("cpu")].to(device)
    if len(edge_ids) == num_hops:
        attrs["e_id"] = torch.cat(edge_ids)
    data = Data(**attrs)
    data.batch_size = batch.num_seeds
    data.num_sampled_nodes = counts
    data.num_sampled_edges = [int(s.numel()) for s in sources]
    data.input_id = batch.seed_positions.to(device)
    if blocks and blocks[-1].src_trees is not None:
        # Disjoint trees (temporal sampling): the seed index of each node, PyG's `batch`.
        data.batch = blocks[-1].src_trees[order]
    return data


def _trim_by_hop(num_nodes: dict, seed_type, num_seeds: int, blocks: list, device):
    """PyG's per-hop layout of a minibatch whose blocks re-sample every node (graphtier's blocks do):
    hop k of PyG's sampler samples only the nodes it first reached in hop k - 1, so block k keeps the
    edges whose dst was first reached in hop k (0: the seeds, the first `num_seeds` nodes of
    `seed_type`).

    `num_nodes` maps each node type (None for an untyped graph) to its node count; `blocks[k]` lists
    block k's relations as (key, src type, dst type, indices, dst_index, edge ids or None), positions
    within the types. Returns per type (order: the reached positions by hop, in order of first
    appearance within one; new_pos: a position's place in that order, -1 if unreached; counts: nodes
    per hop 0..L) and per key the kept (sources, targets, edge ids) of every block."""
    unreached = len(blocks) + 1  # reached only by the re-sampled nodes' edges
    hop = {t: torch.full((n,), unreached, dtype=torch.int64, device=device) for t, n in num_nodes.items()}
    hop[seed_type][:num_seeds] = 0
    edges = {}
    for k, relations in enumerate(blocks):
        for key, src_type, dst_type, indices, dst, edge_ids in relations:
            keep = hop[dst_type][dst] == k  # the frontier's edges: those PyG's hop k + 1 samples
            src = indices[keep]
            # every write to one node carries the same value
            hop[src_type][src] = torch.clamp(hop[src_type][src], max=k + 1)
            kept = edges.setdefault(key, ([], [], []))
            kept[0].append(src)
            kept[1].append(dst[keep])
            if edge_ids is not None:
                kept[2].append(edge_ids[keep])
    nodes = {}
    for t, h in hop.items():
        hops, order = torch.sort(h, stable=True)  # stable: first appearance within a hop
        reached = int((hops < unreached).sum())
        order = order[:reached]
        new_pos = torch.full((h.numel(),), -1, dtype=torch.int64, device=device)
        new_pos[order] = torch.arange(reached, dtype=torch.int64, device=device)
        nodes[t] = (order, new_pos, torch.bincount(hops[:reached], minlength=unreached).tolist())
    return nodes, edges

from graphtier.pyg_link import LinkNeighborLoader  # noqa: E402,F401  (PyG's link loader, python/graphtier/pyg_link.py)
