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

import threading
import time
from typing import Optional

import torch

import graphtier
from graphtier._ids import node_ids
from graphtier.dist.comm import alltoallv


class DistFeatureFetcher:
    """gather(ids) -> [n, dim] tensor on `device` (int64 global ids, any order, repeats allowed).

    `partition`: the rank's opened partition (graphtier.dist.partition); `grid`: the ProcessGrid;
    `group`: the process group of the rank's column used for the exchanges (default: the grid's
    column group; the training pipeline gives one of its own). `device`: where the rows go (its GPU
    is the store's); `comm_device`: where tensors cross (the backend's: CPU for Gloo, the GPU for
    NCCL). Store options (`gpu_hot`, `cpu`, ...) are FeatureStore's, over the rank's local rows.
    """

    def __init__(self, partition, grid, *, group=None, device="cpu", comm_device="cpu", **store_options):
        m = partition.manifest
        self.num_nodes = int(m["num_nodes"])
        self.hot_rows = int(m["hot_rows"])
        self.process_rows = int(m["process_rows"])
        self.bounds = torch.tensor(m["feature_bounds"], dtype=torch.int64)
        self.row = grid.row
        (_, _), (own_lo, own_hi) = m["local_ranges"][self.row]
        self.own_lo, self.own_hi = int(own_lo), int(own_hi)
        self.group = grid.column_group if group is None else group
        self.device = torch.device(device)
        self.comm_device = torch.device(comm_device)
        self.dataset = graphtier.Dataset(partition.features_path)
        expected = self.hot_rows + self.own_hi - self.own_lo
        if self.dataset.num_nodes != expected:
            raise ValueError(f"{partition.features_path}: {self.dataset.num_nodes} rows, the manifest's local_ranges "
                             f"of process row {self.row} say {expected}")
        self.store = graphtier.FeatureStore(self.dataset, device=self.device.index or 0, **store_options)
        self.dim = self.dataset.feature_dim
        self.dtype = {"float32": torch.float32, "float16": torch.float16}[self.dataset.feature_dtype]
        self.row_bytes = self.dim * torch.tensor([], dtype=self.dtype).element_size()
        self._lock = threading.Lock()  # the counters, read by the training thread while a prefetch runs
        self._counters = {"gathers": 0, "rows": 0, "local_rows": 0, "remote_rows": 0, "served_rows": 0,
                          "bytes_sent": 0, "bytes_received": 0, "seconds": 0.0}

    def counters(self) -> dict:
        """Totals since construction (or the last `reset_counters`): gathers, rows asked for, rows
        served locally, rows fetched from the column, rows this rank served to others, bytes sent
        and received (ids and counts out, rows back: what crossed the network) and seconds."""
        with self._lock:
            return dict(self._counters)

    def reset_counters(self) -> dict:
        with self._lock:
            old = dict(self._counters)
            for k in self._counters:
                self._counters[k] = 0.0 if k == "seconds" else 0
        return old

    def _local_rows(self, ids: torch.Tensor) -> torch.Tensor:
        """Global ids held here -> rows of the features/ dataset (local_ranges concatenated)."""
        return torch.where(ids < self.hot_rows, ids, ids - self.own_lo + self.hot_rows)

    def _is_local(self, ids: torch.Tensor) -> torch.Tensor:
        return (ids < self.hot_rows) | ((ids >= self.own_lo) & (ids < self.own_hi))

    def _store_rows(self, local_rows: torch.Tensor) -> torch.Tensor:
        return self.store.gather(local_rows)

    def gather(self, ids) -> torch.Tensor:
        start = time.perf_counter()
        ids = node_ids(ids, "ids", self.num_nodes)
        n = int(ids.numel())
        out = torch.empty((n, self.dim), dtype=self.dtype)
        local = self._is_local(ids)
        if bool(local.any()):
            out[local] = self._store_rows(self._local_rows(ids[local]))
        remote_ids = ids[~local]
        # Distinct ids only cross the network; sorted, so grouped by owner (blocks are id ranges).
        wanted, inverse = torch.unique(remote_ids, sorted=True, return_inverse=True)
        owners = torch.searchsorted(self.bounds, wanted, right=True) - 1
        send_counts = torch.bincount(owners, minlength=self.process_rows)
        asked, recv_counts = alltoallv(wanted.to(self.comm_device), send_counts.tolist(), self.group)
        asked = asked.cpu()
        served = self._store_rows(self._local_rows(asked)) if asked.numel() else \
            torch.empty((0, self.dim), dtype=self.dtype)
        # Rows travel as bytes: identical whatever the dtype, and every backend moves uint8.
        rows, _ = alltoallv(served.view(torch.uint8).reshape(-1, self.row_bytes).to(self.comm_device),
                            list(recv_counts), self.group, recv_counts=send_counts.tolist())
        if remote_ids.numel():
            out[~local] = rows.cpu().view(self.dtype).reshape(-1, self.dim)[inverse]
        peers = self.process_rows - 1
        with self._lock:
            c = self._counters
            c["gathers"] += 1
            c["rows"] += n
            c["local_rows"] += n - int(remote_ids.numel())
            c["remote_rows"] += int(wanted.numel())
            c["served_rows"] += int(asked.numel())
            c["bytes_sent"] += 8 * peers + 8 * int(wanted.numel()) + self.row_bytes * int(asked.numel())
            c["bytes_received"] += 8 * peers + 8 * int(asked.numel()) + self.row_bytes * int(wanted.numel())
            c["seconds"] += time.perf_counter() - start
        return out.to(self.device)
