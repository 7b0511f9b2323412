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

import os
from typing import Callable, Iterator, List, Optional, Sequence

import torch

try:
    from torch_geometric.data import Data
except ImportError as e:
    raise ImportError("graphtier.pyg needs PyTorch Geometric: `pip install torch_geometric`") from e

from graphtier import _core
from graphtier._ids import node_ids
from graphtier import loader as _loader
from graphtier.dataset import Dataset

# torch.utils.data.DataLoader's options that tune PyTorch's worker processes: graphtier's pipeline has
# its own sampling and gather threads, so PyG scripts that pass them run unchanged and they are unused.
_WORKER_OPTIONS = ("num_workers", "pin_memory", "persistent_workers", "prefetch_factor", "filter_per_worker",
                   "is_sorted", "timeout", "worker_init_fn", "multiprocessing_context")


def _open(data) -> _core.Dataset:
    if isinstance(data, _core.Dataset):
        return data
    if isinstance(data, (str, os.PathLike)):
        return Dataset(os.fspath(data))
    raise TypeError(f"data: expected a graphtier.Dataset or a dataset directory, got {type(data).__name__} "
                    f"(convert an in-memory graph with the `graphtier convert` command)")


def _input_ids(ds: _core.Dataset, input_nodes) -> torch.Tensor:
    if input_nodes is None:
        return torch.arange(ds.num_nodes, dtype=torch.int64)
    if isinstance(input_nodes, tuple):
        raise NotImplementedError("input_nodes: a (node type, ids) pair is heterogeneous; graphtier graphs are homogeneous")
    return node_ids(input_nodes, "input_nodes", ds.num_nodes)


class NeighborLoader:
    """PyG's `torch_geometric.loader.NeighborLoader` over a graphtier dataset.

    `data` is a graphtier.Dataset or its directory; `num_neighbors[k]` neighbours are drawn for each
    node first reached in hop k (-1: all); `input_nodes` the seeds: node ids, a bool mask over the
    nodes, a split name ("train", "val" or "valid", "test") or None (every node); `batch_size`,
    `shuffle`, `drop_last` and `replace` as in PyG (and PyTorch's DataLoader, whose defaults they
    keep); `transform` is applied to each batch. DataLoader's worker options (`num_workers`,
    `pin_memory`, ...) are accepted and unused. Every other keyword goes to
    graphtier.NeighborLoader: `device`, `store`, `options`, and any field of graphtier.LoaderOptions
    or FeatureStoreOptions (the tier budgets `gpu_hot`, `gpu_cache`, `cpu_buffer`, `host_cache`,
    `seed`, `window`, `io_depth`, ...).

    Node ids: `input_nodes` ids and masks are in the dataset's own numbering unless
    `ids_numbering="original"` says they are in that of the input the dataset was converted from
    (a PyG `train_mask` after `graphtier prepare` renumbered the nodes); `n_id`, `edge_index` and
    `e_id` are always in the dataset's own numbering (graphtier.Dataset.to_original maps `n_id`
    back), `input_id` positions in `input_nodes` as given.

    Iterating is one epoch, each `iter(loader)` a fresh pass, as with graphtier.NeighborLoader.
    """

    def __init__(self, data, num_neighbors: Sequence[int], input_nodes=None, replace: bool = False,
                 transform: Optional[Callable] = None, batch_size: int = 1, shuffle: bool = False,
                 drop_last: bool = False, *, directed: bool = True, disjoint: bool = False,
                 subgraph_type: str = "directional", **kwargs):
        if isinstance(num_neighbors, dict):
            raise NotImplementedError("num_neighbors: a per-edge-type dict is heterogeneous; graphtier graphs are homogeneous")
        if not directed or subgraph_type != "directional":
            raise NotImplementedError("subgraph_type: only 'directional' (directed=True) sampling is supported")
        if disjoint:
            raise NotImplementedError("disjoint=True is not supported")
        for name in ("input_time", "time_attr", "weight_attr", "transform_sampler_output", "neighbor_sampler"):
            if kwargs.get(name) is not None:
                raise NotImplementedError(f"{name} is not supported by graphtier.pyg.NeighborLoader")
            kwargs.pop(name, None)
        for name in _WORKER_OPTIONS:
            kwargs.pop(name, None)
        self.data = _open(data)
        self.num_neighbors = [int(f) for f in num_neighbors]
        # A split name goes to the loader as such: its ids are in the dataset's own numbering.
        split = input_nodes if isinstance(input_nodes, str) else None
        self.input_nodes = None if split is not None else _input_ids(self.data, input_nodes)
        self.transform = transform
        self.batch_size = int(batch_size)
        self.loader = _loader.NeighborLoader(self.data, self.num_neighbors, self.batch_size, split=split,
                                             ids=self.input_nodes, shuffle=shuffle, drop_last=drop_last,
                                             replace=replace, **kwargs)
        self._labels = self.data.labels().to(torch.int64) if self.data.num_classes > 0 else None

    def __len__(self) -> int:
        return len(self.loader)

    def set_epoch(self, epoch: int, first_batch: int = 0) -> None:
        """graphtier.NeighborLoader.set_epoch: the epoch (and batch) the next pass runs."""
        self.loader.set_epoch(epoch, first_batch)

    def stats(self) -> dict:
        """graphtier.NeighborLoader.stats: the pipeline's and the feature tiers' statistics."""
        return self.loader.stats()

    def __iter__(self) -> Iterator[Data]:
        for batch in self.loader:
            data = self._to_data(batch)
            yield data if self.transform is None else self.transform(data)

    def _to_data(self, batch: _loader.Batch) -> Data:
        blocks = batch.blocks
        num_hops = len(blocks)
        n = int(batch.input_nodes.numel())
        device = batch.input_nodes.device
        # hop[v]: the hop in which PyG's sampler first reaches node v (0: the seeds), num_hops + 1 when
        # only the re-sampled nodes' edges reach it. Block k's dst nodes are positions [0, num_dst) of
        # the global order, so positions index one array for every block.
        unreached = num_hops + 1
        hop = torch.full((n,), unreached, dtype=torch.int64, device=device)
        hop[: batch.num_seeds] = 0
        sources: List[torch.Tensor] = []
        targets: List[torch.Tensor] = []
        edge_ids: List[torch.Tensor] = []
        for k, block in enumerate(blocks):
            dst = block.dst_index
            keep = hop[dst] == k  # the frontier's edges: those PyG's hop k + 1 samples
            src = block.indices[keep]
            hop[src] = torch.clamp(hop[src], max=k + 1)  # every write to one node carries the same value
            sources.append(src)
            targets.append(dst[keep])
            if block.edge_ids is not None:
                edge_ids.append(block.edge_ids[keep])
        # Nodes ordered by hop, in order of first appearance within one (a stable sort), the unreached
        # ones cut off; new_pos maps a block position to its position in n_id.
        hops, order = torch.sort(hop, stable=True)
        reached = int((hops < unreached).sum())
        order = order[:reached]
        new_pos = torch.full((n,), -1, dtype=torch.int64, device=device)
        new_pos[order] = torch.arange(reached, dtype=torch.int64, device=device)
        edge_index = torch.stack([new_pos[torch.cat(sources)], new_pos[torch.cat(targets)]])

        n_id = batch.input_nodes[order]
        attrs = {"n_id": n_id, "edge_index": edge_index}
        if batch.x is not None:
            attrs["x"] = batch.x[order]
        else:
            attrs["num_nodes"] = reached  # PyG infers it from x otherwise
        if self._labels is not None:
            attrs["y"] = self._labels[n_id.to("cpu")].to(device)
        if len(edge_ids) == num_hops:
            attrs["e_id"] = torch.cat(edge_ids)
        data = Data(**attrs)
        data.batch_size = batch.num_seeds
        data.num_sampled_nodes = torch.bincount(hops[:reached], minlength=num_hops + 1).tolist()
        data.num_sampled_edges = [int(s.numel()) for s in sources]
        data.input_id = batch.seed_positions.to(device)
        return data

from graphtier.pyg_link import LinkNeighborLoader  # noqa: E402,F401  (PyG's link loader, python/graphtier/pyg_link.py)
