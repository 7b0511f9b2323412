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
"""

from __future__ import annotations

import time
from typing import Optional

import torch

import graphtier
from graphtier._ids import node_ids
from graphtier._dtypes import torch_dtype
from graphtier.distributed.comm import CommStats, alltoallv
from graphtier.distributed.grid import ProcessGrid, grid_groups
from graphtier.distributed.partition import Partition


class DistFeatureFetcher:
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
        self.partition = partition
        self.num_nodes = partition.num_nodes
        self.process_rows = partition.rows
        self.group = grid_groups(grid).column if group is None else group
        self.device = torch.device(device)
        self.comm_device = torch.device(comm_device)
        self.dataset = graphtier.Dataset(partition.features_path)
        expected = sum(hi - lo for lo, hi in partition.local_ranges)
        if self.dataset.num_nodes != expected:
            raise ValueError(f"{partition.features_path}: {self.dataset.num_nodes} rows, the manifest's local_ranges "
                             f"of process row {partition.row} say {expected}")
        self.store = graphtier.FeatureStore(self.dataset, store, threads=threads,
                                            **{**store_options, "device": self.device.index or 0})
        self.dim = self.dataset.feature_dim
        self.dtype = torch_dtype(self.dataset.feature_dtype)
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

    def _store_rows(self, global_ids: torch.Tensor, device: torch.device) -> torch.Tensor:
        """The rows of ids this rank holds, gathered by the store straight into `device`'s memory."""
        if global_ids.numel() == 0:
            return torch.empty((0, self.dim), dtype=self.dtype, device=device)
        return self.store.gather(self.partition.local_rows(global_ids), "device" if device.type == "cuda" else "host")

    def gather(self, ids) -> torch.Tensor:
        start = time.perf_counter()
        ids = node_ids(ids, "ids", self.num_nodes)
        n = int(ids.numel())
        # Rows move once: each is gathered where it is used (local rows on `device`) or where it
        # crosses (served rows on `comm_device`, the GPU with NCCL), and received rows land there.
        # With NCCL everything after the store stays on the GPU; with Gloo on the host, and only a
        # GPU-trained rank's received rows cross to its GPU, once, at the end.
        out = torch.empty((n, self.dim), dtype=self.dtype, device=self.device)
        local = self.partition.holds_features(ids)
        out[local.to(self.device)] = self._store_rows(ids[local], self.device)
        remote_ids = ids[~local]
        # Distinct ids only cross the network; sorted, so grouped by owner (blocks are id ranges).
        wanted, inverse = torch.unique(remote_ids, sorted=True, return_inverse=True)
        counts = torch.bincount(self.partition.feature_owner_row(wanted), minlength=self.process_rows).tolist()
        sends = [t.to(self.comm_device) for t in torch.split(wanted, counts)]
        # Ids come back to the host, where the store looks rows up.
        asked = [t.cpu() for t in alltoallv(sends, self.group, self.stats, self.comm_device)]
        served = self._store_rows(torch.cat(asked), self.comm_device)
        sends = list(torch.split(served, [int(t.numel()) for t in asked]))
        rows = torch.cat(alltoallv(sends, self.group, self.stats, self.comm_device))
        out[(~local).to(self.device)] = rows[inverse.to(rows.device)].to(self.device)
        c = self._counts
        c["gathers"] += 1
        c["rows"] += n
        c["local_rows"] += n - int(remote_ids.numel())
        c["remote_rows"] += int(wanted.numel())
        c["served_rows"] += int(served.shape[0])
        c["seconds"] += time.perf_counter() - start
        return out
