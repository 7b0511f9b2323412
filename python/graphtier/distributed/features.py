"""DistFeatureFetcher: the feature rows of any global ids on a rank of the process grid
(docs/architecture.md, Scale-out).

A rank holds the replicated hot rows [0, h) and its process row's block of the feature table in
its partition's `features/` dataset (local row order: the manifest's `local_ranges`), read through
an ordinary FeatureStore with its tiers. Every other row is owned by exactly one rank of this
rank's process column (the rank of the owning process row), so a gather is: the local rows from
the store, the rest by two all-to-allv exchanges within the column, the distinct missing ids out
to their owners and the rows back (each owner gathers them from its own store). The result is
byte for byte the single-process gather of the same ids.

Every rank of a column must call `gather` the same number of times, in the same order, on the
column group (a rank with nothing to fetch sends empty lists): it is a collective.

A typed dataset's partition (DistTypedFeatureFetcher) holds, per node type, its process row's block
of that type's own table (its own dim and dtype) in a typed `features/` dataset: the same exchange,
once per type with a table, in type order.
"""

from __future__ import annotations

import time
from typing import Callable, Dict, Optional

import torch

import graphtier
from graphtier._ids import node_ids
from graphtier._dtypes import torch_dtype
from graphtier.distributed.comm import CommStats, alltoallv
from graphtier.distributed.grid import ProcessGrid, grid_groups
from graphtier.distributed.partition import Partition


class _Counted:
    """The fetchers' counters: gathers, rows, and the bytes their exchanges moved."""

    def _open_rank(self, partition: Partition, grid: ProcessGrid, group, device, comm_device) -> int:
        """The fetchers' common state: the partition, its column's group, the devices and the rank's
        `features/` dataset; returns the rows the manifest's local_ranges give this process row."""
        self.partition = partition
        self.num_nodes = partition.num_nodes
        self.process_rows = partition.rows
        self.group = grid_groups(grid).column if group is None else group
        self.device = torch.device(device)
        self.comm_device = torch.device(comm_device)
        self.dataset = graphtier.Dataset(partition.features_path)
        return sum(hi - lo for lo, hi in partition.local_ranges)

    def _init_counters(self) -> None:
        self.stats = CommStats()
        self._start = self.stats.as_dict()
        self._counts = {"gathers": 0, "rows": 0, "local_rows": 0, "remote_rows": 0, "served_rows": 0, "seconds": 0.0}

    def counters(self) -> dict:
        """Since construction or the last `reset_counters`: gathers, rows asked for, rows served from
        the local store, distinct rows fetched from the column, rows this rank served to others,
        seconds in gather, and bytes sent and received (ids out and rows back, as
        graphtier.distributed.comm counts them: what left this process or reached it)."""
        now = self.stats.as_dict()
        return dict(self._counts, bytes_sent=now["bytes_sent"] - self._start["bytes_sent"],
                    bytes_received=now["bytes_received"] - self._start["bytes_received"])

    def reset_counters(self) -> dict:
        """Starts the counters again (the training thread calls it between epochs, never during a
        gather); returns what they held."""
        old = self.counters()
        self._start = self.stats.as_dict()
        self._counts = {k: 0.0 if k == "seconds" else 0 for k in self._counts}
        return old


class DistFeatureFetcher(_Counted):
    """gather(ids) -> [n, dim] tensor on `device` (int64 global ids, any order, repeats allowed).

    `partition`: the rank's opened Partition; `grid`: its ProcessGrid; `group`: the process group of
    the rank's column that the exchanges use (default: a new set of grid groups, which is a
    collective creation every rank must make; a thread of its own needs a group of its own).
    `device`: where the rows go (its GPU is the store's); `comm_device`: where tensors cross (the
    backend's: CPU for Gloo, the GPU for NCCL). `store` (a graphtier.FeatureStoreOptions), the keyword
    options overriding its fields, and `threads` are FeatureStore's, over the rank's local rows.
    `gather` takes global ids in the dataset's own (prepared) numbering.
    """

    def __init__(self, partition: Partition, grid: ProcessGrid, *, group=None, device="cpu", comm_device="cpu",
                 store: Optional[graphtier.FeatureStoreOptions] = None, threads: int = 0, **store_options):
        expected = self._open_rank(partition, grid, group, device, comm_device)
        if self.dataset.num_nodes != expected:
            raise ValueError(f"{partition.features_path}: {self.dataset.num_nodes} rows, the manifest's local_ranges "
                             f"of process row {partition.row} say {expected}")
        self.store = graphtier.FeatureStore(self.dataset, store, threads=threads,
                                            **{**store_options, "device": self.device.index or 0})
        self.dim = self.dataset.feature_dim
        self.dtype = torch_dtype(self.dataset.feature_dtype)
        self._init_counters()

    def _store_rows(self, global_ids: torch.Tensor, device: torch.device) -> torch.Tensor:
        """The rows of ids this rank holds, gathered by the store straight into `device`'s memory."""
        if global_ids.numel() == 0:
            return torch.empty((0, self.dim), dtype=self.dtype, device=device)
        return self.store.gather(self.partition.local_rows(global_ids), "device" if device.type == "cuda" else "host")

    def gather(self, ids) -> torch.Tensor:
        start = time.perf_counter()
        ids = node_ids(ids, "ids", self.num_nodes)
        out = _exchange_rows(self, ids, self.dim, self.dtype, self._store_rows)
        self._counts["gathers"] += 1
        self._counts["seconds"] += time.perf_counter() - start
        return out

    def gather_batch(self, batch) -> torch.Tensor:
        """The features of a minibatch's input nodes (None: a rank without a minibatch at this
        step, which still takes part in the exchange)."""
        return self.gather(batch.input_nodes if batch is not None else torch.empty(0, dtype=torch.int64))


def _exchange_rows(fetcher, ids: torch.Tensor, dim: int, dtype: torch.dtype,
                   store_rows: Callable[[torch.Tensor, torch.device], torch.Tensor]) -> torch.Tensor:
    """The [n, dim] rows of global `ids` on `fetcher.device`: the rank's own from `store_rows(ids,
    device)`, the rest from their owners in the column (two all-to-allv on `fetcher.group`, each
    owner serving from its own `store_rows`); counts rows into `fetcher._counts`."""
    n = int(ids.numel())
    # Rows move once: each is gathered where it is used (local rows on `device`) or where it
    # crosses (served rows on `comm_device`, the GPU with NCCL), and received rows land there.
    # With NCCL everything after the store stays on the GPU; with Gloo on the host, and only a
    # GPU-trained rank's received rows cross to its GPU, once, at the end.
    device, comm_device, partition = fetcher.device, fetcher.comm_device, fetcher.partition
    out = torch.empty((n, dim), dtype=dtype, device=device)
    local = partition.holds_features(ids)
    out[local.to(device)] = store_rows(ids[local], device)
    remote_ids = ids[~local]
    # Distinct ids only cross the network; sorted, so grouped by owner (blocks are id ranges).
    wanted, inverse = torch.unique(remote_ids, sorted=True, return_inverse=True)
    counts = torch.bincount(partition.feature_owner_row(wanted), minlength=partition.rows).tolist()
    sends = [t.to(comm_device) for t in torch.split(wanted, counts)]
    # Ids come back to the host, where the store looks rows up.
    asked = [t.cpu() for t in alltoallv(sends, fetcher.group, fetcher.stats, comm_device)]
    served = store_rows(torch.cat(asked), comm_device)
    sends = list(torch.split(served, [int(t.numel()) for t in asked]))
    rows = torch.cat(alltoallv(sends, fetcher.group, fetcher.stats, comm_device))
    out[(~local).to(device)] = rows[inverse.to(rows.device)].to(device)
    c = fetcher._counts
    c["rows"] += n
    c["local_rows"] += n - int(remote_ids.numel())
    c["remote_rows"] += int(wanted.numel())
    c["served_rows"] += int(served.shape[0])
    return out


class DistTypedFeatureFetcher(_Counted):
    """gather_dict({type: ids}) -> {type: [len(ids), dim_t] tensor on `device`} for every node type
    with a feature table (a type without one is absent: the model gives it learned embeddings), on
    a rank of a typed dataset's partition. `ids[type]` are global ids of that type, any order,
    repeats allowed; each type's rows are byte for byte the single-process TypedFeatureStore's.
    Arguments as DistFeatureFetcher's; the store is a TypedFeatureStore over the rank's typed
    `features/` dataset. A collective as DistFeatureFetcher.gather: one exchange per type with a
    table, in type order, on every rank of the column."""

    def __init__(self, partition: Partition, grid: ProcessGrid, *, group=None, device="cpu", comm_device="cpu",
                 store: Optional[graphtier.FeatureStoreOptions] = None, threads: int = 0, **store_options):
        if not partition.typed:
            raise ValueError(f"{partition.rank_path}: not a typed dataset's partition (use DistFeatureFetcher)")
        expected = self._open_rank(partition, grid, group, device, comm_device)
        if self.dataset.num_nodes != expected or not self.dataset.is_hetero:
            raise ValueError(f"{partition.features_path}: {self.dataset.num_nodes} rows of a "
                             f"{'typed' if self.dataset.is_hetero else 'homogeneous'} dataset, the manifest's "
                             f"local_ranges of process row {partition.row} say {expected} of a typed one")
        self.node_types = list(self.dataset.node_types)
        self.dims = {t: d for t, d in zip(self.node_types, self.dataset.node_type_feature_dims) if d > 0}
        self.dtypes = {t: self.dataset.type_features(t).dtype for t in self.dims}
        # Type t's global ids [lo, hi), for checks (the partition's bounds of the type).
        self.type_ranges = {t: (b[0], b[-1]) for t, b in zip(self.node_types, partition.type_feature_bounds)}
        self.store = (graphtier.TypedFeatureStore(self.dataset, store, threads=threads, **store_options)
                      if self.dims else None)
        self.dim = 0  # no single table (the checkpoint's feature_dim of a typed dataset)
        self._init_counters()

    def _type_rows(self, node_type: str):
        def rows(global_ids: torch.Tensor, device: torch.device) -> torch.Tensor:
            if global_ids.numel() == 0:
                return torch.empty((0, self.dims[node_type]), dtype=self.dtypes[node_type], device=device)
            # The engine's gather: local_rows are global ids of the rank's feature dataset.
            rows = self.partition.local_rows(global_ids)
            return graphtier._core.TypedFeatureStore.gather(self.store, self.node_types.index(node_type),
                                                            node_ids(rows, "ids").numpy()).to(device)
        return rows

    def gather_dict(self, ids: Dict[str, torch.Tensor]) -> Dict[str, torch.Tensor]:
        start = time.perf_counter()
        out = {}
        for t in self.node_types:  # every rank of the column runs the same exchanges in the same order
            if t not in self.dims:
                continue
            lo, hi = self.type_ranges[t]
            type_ids = node_ids(ids.get(t, torch.empty(0, dtype=torch.int64)), f"ids[{t!r}]", self.num_nodes)
            if type_ids.numel() and (int(type_ids.min()) < lo or int(type_ids.max()) >= hi):
                raise IndexError(f"ids[{t!r}]: node type {t} holds ids [{lo}, {hi})")
            out[t] = _exchange_rows(self, type_ids, self.dims[t], self.dtypes[t], self._type_rows(t))
        self._counts["gathers"] += 1
        self._counts["seconds"] += time.perf_counter() - start
        return out

    def gather_batch(self, batch) -> Dict[str, torch.Tensor]:
        """A typed minibatch's x_dict (None: a rank without a minibatch, which still takes part)."""
        return self.gather_dict(batch.input_nodes_dict if batch is not None else {})
