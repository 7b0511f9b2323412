"""PyG's LinkNeighborLoader over a graphtier dataset (graphtier.pyg.LinkNeighborLoader): PyG's
arguments, batches as PyG's `Data`, sampled by graphtier.LinkNeighborLoader."""

from __future__ import annotations

from typing import Callable, Iterator, Optional, Sequence

import torch
from torch_geometric.data import Data

from graphtier import link as _link
from graphtier import loader as _loader
from graphtier import pyg as _pyg
from graphtier.dataset import open_dataset


def _negatives(neg_sampling, neg_sampling_ratio):
    """(mode, amount) from PyG's neg_sampling (None, "binary", "triplet", a dict with "mode" and
    "amount", or a torch_geometric.sampler.NegativeSampling) and the deprecated ratio."""
    if neg_sampling is None:
        if neg_sampling_ratio is not None and neg_sampling_ratio != 0.0:
            return "binary", float(neg_sampling_ratio)
        return None, 1.0
    if isinstance(neg_sampling, str):
        return neg_sampling, 1.0
    if isinstance(neg_sampling, dict):
        if neg_sampling.get("mode") is None:  # PyG's NegativeSampling needs one too; None would draw no negatives
            raise ValueError(f"neg_sampling: a dict needs a 'mode' ('binary' or 'triplet'), got {neg_sampling!r}")
        return neg_sampling["mode"], float(neg_sampling.get("amount", 1.0))
    mode = getattr(neg_sampling, "mode", None)
    if mode is None:
        raise TypeError(f"neg_sampling: expected 'binary', 'triplet', a dict or a NegativeSampling, "
                        f"got {type(neg_sampling).__name__}")
    return getattr(mode, "value", mode), float(getattr(neg_sampling, "amount", 1.0))


class LinkNeighborLoader:
    """PyG's `torch_geometric.loader.LinkNeighborLoader` over a graphtier dataset.

    `data` a graphtier.Dataset or its directory; `num_neighbors` per hop; `edge_label_index` the
    supervision edges: a [2, K] tensor, a split name of the dataset's link split ("train", "val",
    "test", from `graphtier split-links`), or None (its "train" split, or every edge without one);
    `edge_label` their labels; `neg_sampling` "binary" or "triplet", a dict {"mode", "amount"} or a
    torch_geometric.sampler.NegativeSampling (or the deprecated `neg_sampling_ratio`);
    `batch_size`, `shuffle`, `drop_last`, `replace`, `transform` as in PyG. DataLoader's worker
    options are accepted and unused. graphtier's own: `exclude_seed_edges` (default True, False when
    temporal: a batch's positives and their reverses pass no message), `non_edges` (negatives redrawn while they are
    edges), `seed`, `store`, `device`, `ids_numbering` ("original": `edge_label_index` is in the numbering of the
    input the dataset was converted from, as graphtier.pyg.NeighborLoader's `input_nodes`) and the FeatureStore
    options.

    Each batch is a `Data` as PyG lays it out: `n_id` (the seeds first: the distinct endpoints,
    ascending), `x`, `y`, `edge_index`, `e_id`, `num_sampled_nodes`, `num_sampled_edges`,
    `input_id` (the positives' positions in `edge_label_index`), and `edge_label_index` [2, P + Q]
    with `edge_label` (binary: negatives labelled 0) or `src_index`, `dst_pos_index`,
    `dst_neg_index` (triplet).

    Temporal sampling takes PyG's `time_attr` ("node_time" or "edge_time": the dataset's times),
    `edge_label_time` (one per supervision edge) and `temporal_strategy`; as PyG's, the batch is
    disjoint (`n_id` starts with every source, then every destination), `batch` maps each node to its
    positive and `edge_label_time` holds the labelled pairs' times; no seed edge is excluded.
    """

    def __init__(self, data, num_neighbors: Sequence[int], edge_label_index=None, edge_label=None,
                 edge_label_time=None, replace: bool = False, neg_sampling=None, neg_sampling_ratio=None,
                 transform: Optional[Callable] = None, batch_size: int = 1, shuffle: bool = False,
                 drop_last: bool = False, *, directed: bool = True, disjoint: bool = False,
                 subgraph_type: str = "directional", exclude_seed_edges: Optional[bool] = None, non_edges: bool = False,
                 seed: Optional[int] = None, **kwargs):
        if isinstance(num_neighbors, dict):
            raise NotImplementedError("num_neighbors: a per-edge-type dict is heterogeneous; graphtier graphs are homogeneous")
        if not directed or subgraph_type != "directional":
            raise NotImplementedError("subgraph_type: only 'directional' (directed=True) sampling is supported")
        time_attr = kwargs.pop("time_attr", None)
        if disjoint and time_attr is None:
            raise NotImplementedError("disjoint=True is supported with time_attr (temporal sampling is disjoint)")
        for name in ("weight_attr", "transform_sampler_output", "link_sampler", "neighbor_sampler"):
            if kwargs.get(name) is not None:
                raise NotImplementedError(f"{name} is not supported by graphtier.pyg.LinkNeighborLoader")
            kwargs.pop(name, None)
        for name in _pyg._WORKER_OPTIONS:
            kwargs.pop(name, None)
        if isinstance(edge_label_index, tuple):
            raise NotImplementedError("edge_label_index: an (edge type, edges) pair is heterogeneous")
        self.data = open_dataset(data, "data")
        if seed is None:  # torch.manual_seed decides it, as graphtier.pyg.NeighborLoader's
            seed = torch.initial_seed()
        mode, amount = _negatives(neg_sampling, neg_sampling_ratio)
        self.loader = _link.LinkNeighborLoader(self.data, num_neighbors, batch_size, edges=edge_label_index,
                                               labels=edge_label, negatives=mode, amount=amount, non_edges=non_edges,
                                               exclude_seed_edges=exclude_seed_edges, shuffle=shuffle,
                                               drop_last=drop_last, replace=replace, seed=seed, time_attr=time_attr,
                                               edge_label_time=edge_label_time, **kwargs)
        self.transform = transform
        self.triplet = mode == "triplet"
        self._labels = self.data.labels().to(torch.int64) if self.data.num_classes > 0 else None

    def __len__(self) -> int:
        return len(self.loader)

    def set_epoch(self, epoch: int, first_batch: int = 0) -> None:
        self.loader.set_epoch(epoch, first_batch)

    def state_dict(self) -> dict:
        """graphtier.LinkNeighborLoader.state_dict: where the loader is, to resume mid-epoch."""
        return self.loader.state_dict()

    def load_state_dict(self, state: dict) -> None:
        """graphtier.LinkNeighborLoader.load_state_dict: the next pass resumes where `state` was taken."""
        self.loader.load_state_dict(state)

    def __iter__(self) -> Iterator[Data]:
        for batch in self.loader:
            data = self._to_data(batch)
            yield data if self.transform is None else self.transform(data)

    def _to_data(self, batch: _link.LinkBatch) -> Data:
        # The node batch's layout (seeds first, in order, so positions among the seeds stay).
        nodes = _loader.Batch(batch.epoch, batch.index, batch.seeds, batch.input_nodes, batch.x, torch.empty(0),
                              batch.blocks, torch.arange(batch.num_seeds))
        data = _pyg._to_data(nodes, self._labels)
        del data.batch_size  # PyG's link batches have none
        data.input_id = batch.input_id
        if self.triplet:
            data.src_index = batch.src_index
            data.dst_pos_index = batch.dst_pos_index
            data.dst_neg_index = batch.dst_neg_index.squeeze(-1)
        else:
            data.edge_label_index = batch.label_index
            data.edge_label = batch.label
        if batch.seed_time is not None:
            # PyG's temporal link batch: `batch` is each node's positive, `edge_label_time` the
            # sources' times (one per labelled pair; triplet: per positive).
            data.batch = data.batch % max(batch.input_id.numel(), 1)
            labelled = batch.src_index.numel() if self.triplet else batch.label_index.shape[1]
            data.edge_label_time = batch.seed_time[:labelled]
        return data
