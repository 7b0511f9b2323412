"""Link prediction: minibatches of supervision edges (graphtier/sample/link_batch.hpp).

    ds = graphtier.Dataset("data/cora-links")           # `graphtier split-links` wrote its seed edges
    loader = graphtier.LinkNeighborLoader(ds, [10, 10], batch_size=256, edges="train",
                                          negatives="binary", shuffle=True, seed=0)
    for batch in loader:                                 # one epoch; iterate again for the next
        h = model(batch.x, batch.blocks)[: batch.num_seeds]
        src, dst = batch.label_index
        loss = F.binary_cross_entropy_with_logits((h[src] * h[dst]).sum(-1), batch.label)

A batch's seeds are the distinct endpoints of its supervision edges and negatives (ascending, as
PyG's unique), sampled as graphtier.NeighborLoader samples node seeds; `label_index` [2, P + Q]
holds the P positives then the Q negatives as positions among the seeds (binary), or `src_index`,
`dst_pos_index`, `dst_neg_index` the triplets (triplet). Negatives and shuffling are drawn from the
engine's counter-based generator, by (seed, epoch, batch): every batch is reproducible.

Seed-edge exclusion (`exclude_seed_edges=True`, the default; GraphBolt's exclude_seed_edges): a
batch's positive edges and their reverses carry no message in its blocks, so a model cannot read a
supervision edge off the graph it is asked to predict it from.
"""

from __future__ import annotations

import collections
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Iterable, Iterator, List, Optional, Sequence, Union

import numpy as np
import torch

from graphtier import _core
from graphtier import loader as _loader
from graphtier._ids import checked_node_ids
from graphtier.dataset import content_hash, open_dataset
from graphtier.store import FeatureStore

_SPLITS = {"train": "train", "val": "valid", "valid": "valid", "test": "test"}

#: LinkNeighborLoader's `time_attr` values (the dataset's node_time.bin or edge_time.bin) and
#: `temporal_strategy` values (include/graphtier/sample/temporal.hpp), for front ends to offer.
TIME_ATTRS = tuple(_core.temporal_names()["time_attrs"])
TEMPORAL_STRATEGIES = tuple(_core.temporal_names()["strategies"])


def link_split(dataset: _core.Dataset) -> Optional[dict]:
    """The dataset's link split as `graphtier split-links` recorded it (seed, val, test, disjoint,
    num_train, num_valid, num_test), or None."""
    return _core.link_split(dataset)


def require_homogeneous(dataset: _core.Dataset) -> None:
    """NotImplementedError naming `dataset` when it is typed: link minibatches, their splits
    (`graphtier split-links`) and the link task sample one node type's graph."""
    if len(dataset.node_types) > 0:
        raise NotImplementedError(f"{dataset.path} is a typed dataset (node types {', '.join(dataset.node_types)}): "
                                  "link prediction samples homogeneous datasets only")


def link_edges(dataset: _core.Dataset, split: str) -> torch.Tensor:
    """Split `split`'s ("train", "val"/"valid", "test") seed edges as a [2, K] int64 tensor (row 0
    sources, row 1 destinations), in the dataset's own numbering. A ValueError without a split."""
    if split not in _SPLITS:
        raise ValueError(f"split: expected one of train, val, valid, test, got {split!r}")
    return _core.link_edges(dataset, _SPLITS[split]).view(-1, 2).t()


def link_edge_time(dataset: _core.Dataset, split: str) -> Optional[torch.Tensor]:
    """Split `split`'s seed-edge times, int64 [K] in the order of link_edges (each edge's earliest
    time; `graphtier split-links` of a dataset with edge_time.bin writes them), or None when the
    split carries none. A ValueError without a split."""
    if split not in _SPLITS:
        raise ValueError(f"split: expected one of train, val, valid, test, got {split!r}")
    return _core.link_time(dataset, _SPLITS[split])


def all_edges(dataset: _core.Dataset) -> torch.Tensor:
    """Every edge of the dataset's graph (its CSC: message sources in row 0), [2, E] int64,
    contiguous (as PyG's edge_index: pyg-lib's sort refuses a strided one)."""
    return _core.graph_edges(dataset).view(-1, 2).t().contiguous()


def edge_pairs(edges, num_nodes: int, name: str = "edges") -> torch.Tensor:
    """`edges` ([2, K] integer tensor or array) as a contiguous int64 [2, K] CPU tensor, checked."""
    t = torch.as_tensor(edges)
    if t.dim() != 2 or t.shape[0] != 2:
        raise ValueError(f"{name}: expected a [2, num_edges] tensor of (src, dst) columns, got shape {tuple(t.shape)}")
    return checked_node_ids(t.reshape(-1), name, num_nodes).view(2, -1)


@dataclass
class LinkBatch:
    """A link minibatch. `seeds` are the distinct endpoints of its edges (ascending), `blocks` their
    sampled layers (graphtier.Block, blocks[0] next to the seeds), `x` the features of
    `input_nodes` (its first len(seeds) rows are the seeds'), None without features.

    binary or no negatives: `label_index` [2, P + Q] the positives then the negatives as positions
    in `seeds`, `label` [P + Q] float (the positives' labels, 1 by default; 0 for negatives).
    triplet: `src_index` [P], `dst_pos_index` [P], `dst_neg_index` [P, amount] positions in
    `seeds`. `input_id` the positives' positions in the loader's edges; `unverified` how many
    negatives stayed edges after every redraw (non_edges only).

    Temporal batches (the loader's `time_attr`) follow PyG's disjoint layout: `seeds` are every
    labelled pair's source, then every destination (repeats kept), each the root of its own tree at
    `seed_time`, its positive's time; the indices above are positions in that list, and `batch`
    [len(input_nodes)] is each input node's positive (PyG's `batch`: tree mod P)."""

    epoch: int
    index: int
    seeds: torch.Tensor
    input_nodes: torch.Tensor
    x: Optional[torch.Tensor]
    blocks: List[_loader.Block]
    input_id: torch.Tensor
    label_index: Optional[torch.Tensor] = None
    label: Optional[torch.Tensor] = None
    src_index: Optional[torch.Tensor] = None
    dst_pos_index: Optional[torch.Tensor] = None
    dst_neg_index: Optional[torch.Tensor] = None
    unverified: int = 0
    seed_time: Optional[torch.Tensor] = None
    batch: Optional[torch.Tensor] = None

    @property
    def num_seeds(self) -> int:
        return int(self.seeds.numel())

    @property
    def adjs(self):
        """As graphtier.Batch.adjs: one (edge_index, (num_src, num_dst)) per layer, input side first."""
        return [(b.edge_index, b.size) for b in reversed(self.blocks)]


class LinkNeighborLoader:
    """Minibatches of supervision edges with their sampled neighbourhoods.

    `dataset` a graphtier.Dataset; `fanouts` per hop, seeds' hop first (-1: all); `edges` the
    supervision edges: a split name of the dataset's link split ("train", "val", "test"), a [2, K]
    tensor of (src, dst) columns, or None (the "train" split when the dataset has one, else every
    edge of its graph); `labels` [K] their labels (default 1; with binary negatives, labels with a
    0 among them are shifted by 1 so that 0 means negative, as PyG does).

    `negatives`: None, "binary" (ceil(amount * P) random (src, dst) pairs per batch of P edges,
    label 0) or "triplet" (`amount` random destinations per positive, a whole number);
    `non_edges=True` redraws a negative while it is an edge of the graph, of the batch or of the
    dataset's held-out seed edges. `exclude_seed_edges` (default True; False for temporal batches)
    removes each batch's positives and their reverses from its blocks. `batch_size`, `shuffle`, `drop_last`, `replace`,
    `seed` as graphtier.NeighborLoader's; each `iter(loader)` is one epoch (0, 1, ...), `set_epoch`
    chooses another. Features come from `store` (a graphtier.FeatureStore) or a store made with
    the remaining keyword options (graphtier.FeatureStoreOptions' fields), `device` where the
    batch's tensors go.

    Temporal sampling (PyG's `time_attr`, `edge_label_time`, `temporal_strategy`): with
    `time_attr` "node_time" or "edge_time" (the dataset's times) every supervision edge has a time
    (`edge_label_time`, one per edge) and each endpoint's tree reaches only neighbours no later than
    it, as graphtier.NeighborLoader's temporal trees (disjoint: LinkBatch's temporal layout); with
    node times a negative is drawn among the nodes no later than its positive. Temporal batches
    exclude no seed edges (`exclude_seed_edges` False or left out).

    `ids_numbering`: the numbering of `edges` given as a tensor, "prepared" (the dataset's own, that
    of its link split and of every batch) or "original" (that of the input the dataset was converted
    from, before `graphtier prepare` renumbered it), as graphtier.NeighborLoader's `ids`: required
    for a tensor on a renumbered dataset, where the two differ.

    `prefetch` batches are made ahead on one background thread while the caller trains on the
    current one (the engine samples and gathers without the GIL); 0 makes each batch in the
    caller's thread when it is asked for. Every batch is the same either way (each is drawn from
    its own (seed, epoch, batch) stream), and an error raised making a batch is raised where the
    caller takes that batch.
    """

    def __init__(self, dataset: Union[_core.Dataset, str], fanouts: Sequence[int], batch_size: int = 1, *, edges=None,
                 labels=None, negatives: Optional[str] = None, amount: float = 1.0, non_edges: bool = False,
                 exclude_seed_edges: Optional[bool] = None, shuffle: bool = False, drop_last: bool = False,
                 replace: bool = False, seed: int = 0, store: Optional[FeatureStore] = None,
                 device: Union[str, torch.device] = "cpu", time_attr: Optional[str] = None,
                 edge_label_time=None, temporal_strategy: str = "uniform", prefetch: int = 2,
                 ids_numbering: Optional[str] = None, **store_options):
        dataset = open_dataset(dataset, "dataset")
        require_homogeneous(dataset)
        if negatives not in (None, "binary", "triplet"):
            raise ValueError(f"negatives: expected None, 'binary' or 'triplet', got {negatives!r}")
        for name, value in (("batch_size", batch_size), ("prefetch", prefetch), ("seed", seed)):
            if not isinstance(value, (int, np.integer)) or isinstance(value, bool):  # int(1.5) would be 1
                raise TypeError(f"{name}: expected an integer, got {value!r}")
        if int(batch_size) < 1:
            raise ValueError(f"batch_size must be positive, got {batch_size}")
        if not 0 <= int(seed) < 2**64:
            raise ValueError(f"seed: expected an integer in [0, 2^64), got {seed}")
        if int(prefetch) < 0:
            raise ValueError(f"prefetch must be 0 or more, got {prefetch}")
        self.prefetch = int(prefetch)
        self.dataset = dataset
        self.fanouts = [int(f) for f in fanouts]
        self.batch_size = int(batch_size)
        if edges is None:
            edges = "train" if link_split(dataset) is not None else all_edges(dataset)
            given = False
        else:
            given = not isinstance(edges, str)
        if not given and ids_numbering not in (None, "prepared"):
            what = f"the {edges!r} split's edges" if isinstance(edges, str) else "the graph's edges (edges=None)"
            raise ValueError(f"ids_numbering {ids_numbering!r} applies to edges given as a tensor; {what} are in the "
                             "dataset's own numbering")
        if isinstance(edges, str):
            self.edges = link_edges(dataset, edges)
        else:
            numbering = ids_numbering if given else "prepared"  # the graph's own edges (edges=None)
            self.edges = dataset.in_own_numbering(edge_pairs(edges, dataset.num_nodes).reshape(-1), numbering,
                                                  "edges").view(2, -1)
        num = self.edges.shape[1]
        if labels is None:
            self.labels = torch.ones(num, dtype=torch.float32)
        else:
            self.labels = torch.as_tensor(labels).reshape(-1)
            if self.labels.numel() != num:
                raise ValueError(f"labels: expected one per edge ({num}), got {self.labels.numel()}")
            if negatives == "triplet":
                raise ValueError("labels: triplet negative sampling takes no labels (as PyG's)")
            if negatives == "binary" and self.labels.numel() and float(self.labels.min()) == 0:
                self.labels = self.labels + 1
        self.edge_label_time = None
        if time_attr is not None and time_attr not in TIME_ATTRS:
            raise ValueError(f"time_attr: expected one of {', '.join(TIME_ATTRS)}, got {time_attr!r}")
        if temporal_strategy not in TEMPORAL_STRATEGIES:
            raise ValueError(f"temporal_strategy: expected one of {', '.join(TEMPORAL_STRATEGIES)}, "
                             f"got {temporal_strategy!r}")
        if time_attr is None:
            if edge_label_time is not None:
                raise ValueError("edge_label_time needs time_attr (\"node_time\" or \"edge_time\", the dataset's times)")
        else:
            if edge_label_time is None:
                raise ValueError("time_attr: give edge_label_time, one time per supervision edge")
            self.edge_label_time = _loader._times(edge_label_time, "edge_label_time")
            if self.edge_label_time.numel() != num:
                raise ValueError(f"edge_label_time: expected one per edge ({num}), got {self.edge_label_time.numel()}")
            if exclude_seed_edges:
                raise ValueError("exclude_seed_edges: temporal batches exclude no seed edges: their trees see "
                                 "no edge later than the seed's time")
            exclude_seed_edges = False
        self.negatives = negatives or "none"
        self.amount = float(amount)
        self.non_edges = bool(non_edges)
        self.exclude_seed_edges = True if exclude_seed_edges is None else bool(exclude_seed_edges)
        self.shuffle = bool(shuffle)
        self.drop_last = bool(drop_last)
        self.replace = bool(replace)
        self.seed = int(seed)
        self.device = torch.device(device)
        # Held-out seed edges count as edges for non_edges: one sorted flattened list.
        self._known = None
        if self.non_edges and link_split(dataset) is not None:
            known = torch.cat([link_edges(dataset, s) for s in ("train", "valid", "test")], dim=1)
            order = torch.argsort(known[1], stable=True) if known.numel() else torch.zeros(0, dtype=torch.int64)
            known = known[:, order]
            known = known[:, torch.argsort(known[0], stable=True)]
            self._known = known.t().contiguous().view(-1)
        if store is None and dataset.feature_dim > 0:
            store = FeatureStore(dataset, **store_options)
        elif store_options:
            raise TypeError(f"options {sorted(store_options)} configure a FeatureStore; with store= pass them to it")
        self.store = store
        # The engine checks the negative options here, once, for batches of batch_size edges.
        self._sampler = _core.LinkSampler(dataset, self.fanouts, self.replace, self.seed, time_attr or "",
                                          temporal_strategy, self.negatives, self.amount, self.non_edges,
                                          self.batch_size)
        self._epoch = 0
        self._first_batch = 0
        self._position = (0, 0)  # (epoch, batch) after the last batch yielded
        self._time_attr, self._temporal_strategy = time_attr, temporal_strategy

    def __len__(self) -> int:
        num = self.edges.shape[1]
        return num // self.batch_size if self.drop_last else -(-num // self.batch_size)

    def set_epoch(self, epoch: int, first_batch: int = 0) -> None:
        """The next pass runs epoch `epoch` from batch `first_batch`."""
        self._epoch, self._first_batch = int(epoch), int(first_batch)
        self._position = (self._epoch, self._first_batch)

    def __iter__(self) -> Iterator[LinkBatch]:
        epoch, first = self._epoch, self._first_batch
        self._epoch, self._first_batch = epoch + 1, 0
        self._position = (epoch, first)
        return self._tracked(epoch, first)

    def _tracked(self, epoch: int, first: int) -> Iterator[LinkBatch]:
        for batch in self.batches(epoch, range(first, len(self))):
            self._position = (epoch, batch.index + 1)
            yield batch
        self._position = (epoch + 1, 0)

    def state_dict(self) -> dict:
        """The stateful-dataloader protocol, as graphtier.NeighborLoader.state_dict: where the
        loader is and what its batches depend on (the dataset's content, the supervision edges,
        labels and times, the sampling options); `load_state_dict` on a fresh loader makes its next
        pass deliver exactly the batches this pass has not yet yielded."""
        return {"epoch": self._position[0], "batch": self._position[1], "identity": self._identity()}

    def load_state_dict(self, state: dict) -> None:
        """Resumes where `state` (a state_dict) was taken; a ValueError names the first difference
        when it was taken on another dataset, other edges or other options."""
        self.set_epoch(*_loader.state_position(state, self._identity()))

    def _identity(self) -> dict:
        tensors = [self.edges, self.labels] + ([] if self.edge_label_time is None else [self.edge_label_time])
        return {"dataset": f"{self.dataset.name} {content_hash(self.dataset.file_checksums)}",
                "edges": _loader.digest(b"".join(t.contiguous().numpy().tobytes() for t in tensors)),
                "fanouts": list(self.fanouts), "batch_size": self.batch_size, "negatives": self.negatives,
                "amount": self.amount, "non_edges": self.non_edges, "exclude_seed_edges": self.exclude_seed_edges,
                "shuffle": self.shuffle, "drop_last": self.drop_last, "replace": self.replace, "seed": self.seed,
                "time_attr": self._time_attr, "temporal_strategy": self._temporal_strategy}

    def batches(self, epoch: int, indices: Iterable[int]) -> Iterator[LinkBatch]:
        """Batches `indices` (in that order) of epoch `epoch`, each the one the epoch's iteration
        yields at that position, made `prefetch` ahead: a process of P ranks takes b = rank,
        rank + P, ... and together they draw the one-process epoch (graphtier.distributed)."""
        epoch = int(epoch)
        num = self.edges.shape[1]
        positions = torch.arange(num, dtype=torch.int64)
        if self.shuffle:
            positions = _core.shuffled_ids(positions, self.seed, epoch)
        indices = iter(indices)

        def make(b: int) -> LinkBatch:
            if not 0 <= b < len(self):
                raise IndexError(f"batch {b} is out of range [0, {len(self)})")
            return self._batch(epoch, b, positions[b * self.batch_size: (b + 1) * self.batch_size])

        if self.prefetch == 0:
            yield from map(make, indices)
            return
        # One worker keeps `prefetch` batches in flight, in order. Leaving the loop early (break,
        # an exception in the caller) cancels the batches not begun and waits for the one being made.
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="graphtier-link") as worker:
            pending = collections.deque()

            def submit() -> None:
                b = next(indices, None)
                if b is not None:
                    pending.append(worker.submit(make, b))

            for _ in range(self.prefetch):
                submit()
            try:
                while pending:
                    batch = pending.popleft().result()
                    submit()
                    yield batch
            finally:
                for future in pending:
                    future.cancel()

    def _batch(self, epoch: int, index: int, chosen: torch.Tensor) -> LinkBatch:
        pairs = self.edges[:, chosen].t().contiguous().view(-1)
        times = None if self.edge_label_time is None else self.edge_label_time[chosen]
        d = self._sampler.sample(pairs, _core.minibatch_stream(epoch, index), self.exclude_seed_edges, self._known,
                                 times)
        blocks = [_loader.Block.from_dict(b).to(self.device) for b in d["blocks"]]
        x = None
        if self.store is not None:
            x = self.store.gather(d["input_nodes"]).to(self.device)
        batch = LinkBatch(epoch, index, d["seeds"].to(self.device), d["input_nodes"].to(self.device), x, blocks,
                          chosen.to(self.device), unverified=int(d["unverified"]))
        if times is not None:
            batch.seed_time = d["seed_time"].to(self.device)
            trees = blocks[-1].src_trees if blocks else torch.arange(batch.seeds.numel())
            batch.batch = (trees % max(chosen.numel(), 1)).to(self.device)
        if self.negatives == "triplet":
            batch.src_index = d["src_index"].to(self.device)
            batch.dst_pos_index = d["dst_pos_index"].to(self.device)
            neg = d["dst_neg_index"].view(chosen.numel(), -1)
            batch.dst_neg_index = neg.to(self.device)
        else:
            batch.label_index = torch.stack([d["label_src"], d["label_dst"]]).to(self.device)
            num_neg = batch.label_index.shape[1] - chosen.numel()
            batch.label = torch.cat([self.labels[chosen].to(torch.float32),
                                     torch.zeros(num_neg, dtype=torch.float32)]).to(self.device)
        return batch
