"""A rank's view of a partition directory written by `graphtier partition` (docs/format.md,
Partition directory): which block it holds, where its datasets are, and which rank of its process
column owns any other id. Everything here is checked before the first collective, so a wrong
directory is an error on every rank at once rather than a hang."""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from typing import List, Tuple

import torch

from graphtier import _core

def rank_dir_name(rank: int) -> str:
    return f"rank-{rank:04d}"


@dataclass
class Partition:
    """Rank `rank`'s share of a partition: its directory (`rank_path`, holding graph/ and features/),
    the manifest, and the id arithmetic of the grid. Open with Partition.open."""

    rank_path: str
    manifest: dict
    rank: int

    @staticmethod
    def open(path: str, rank: int) -> "Partition":
        """Opens rank `rank`'s directory: `path` is the partition directory (holding rank-KKKK/, as
        written or as copied to this machine) or that rank's directory itself. Raises
        FileNotFoundError for a missing directory or file, ValueError for a manifest that is not a
        partition's, names another rank, or is inconsistent (the engine's checks and messages:
        `graphtier verify` reads it the same way)."""
        if not os.path.isdir(path):
            raise FileNotFoundError(f"{path}: no such partition directory")
        candidate = os.path.join(path, rank_dir_name(rank))
        rank_path = candidate if os.path.isdir(candidate) else path
        where = os.path.join(rank_path, "partition.json")
        if not os.path.isfile(where):
            raise FileNotFoundError(f"{path}: not a partition directory (no partition.json; write one with "
                                    "`graphtier partition`)")
        # The engine's reader (fuzzed: fuzz/partition_manifest_fuzz.cpp) checks every field; a bad
        # file is its ValueError naming the file and the field.
        manifest = json.loads(_core.read_partition_json(where))
        if "rank" not in manifest and rank_path == path:
            # The partition's top directory without this rank's: it was not copied to this machine.
            raise FileNotFoundError(f"{path}: partition directory has no {rank_dir_name(rank)}/ for rank {rank} "
                                    "(copy that rank's directory here)")
        if manifest.get("rank") != rank:
            found = f"rank {manifest['rank']}'s" if "rank" in manifest else "no rank's (no \"rank\" field)"
            raise ValueError(f"{where}: this directory is {found}, this process is rank {rank}")
        part = Partition(rank_path, manifest, rank)
        for sub in ("graph", "features"):
            if not os.path.isfile(os.path.join(rank_path, sub, "manifest.json")):
                raise FileNotFoundError(f"{rank_path}: {sub}/ dataset is missing")
        return part

    # --- the grid and the blocks ---
    @property
    def ranks(self) -> int:
        return self.manifest["ranks"]

    @property
    def replication(self) -> int:
        return self.manifest["replication"]

    @property
    def rows(self) -> int:
        return self.manifest["process_rows"]

    @property
    def row(self) -> int:
        return self.rank // self.replication

    @property
    def graph_mode(self) -> str:
        return self.manifest["graph"]

    @property
    def num_nodes(self) -> int:
        return self.manifest["num_nodes"]

    @property
    def hot_rows(self) -> int:
        return self.manifest["hot_rows"]

    @property
    def typed(self) -> bool:
        """A typed dataset's partition: features/ is a typed dataset of per-type tables, each type's
        rows split by `type_feature_bounds` (docs/format.md, Partition directory)."""
        return "type_feature_bounds" in self.manifest

    @property
    def feature_bounds(self) -> List[int]:
        """The feature split of a homogeneous partition (a typed one has type_feature_bounds)."""
        return self.manifest["feature_bounds"]

    @property
    def type_feature_bounds(self) -> List[List[int]]:
        """A typed partition's [T][R + 1] bounds: process row i owns ids [b[t][i], b[t][i + 1]) of type t."""
        return self.manifest["type_feature_bounds"]

    @property
    def topology_bounds(self) -> List[int]:
        return self.manifest["topology_bounds"]

    @property
    def edge_offset(self) -> int:
        """Global CSC position of this rank's topology block's first edge (0 when replicated)."""
        return self.manifest["edge_offsets"][self.row if self.graph_mode == "partitioned" else 0]

    @property
    def local_ranges(self) -> List[Tuple[int, int]]:
        """The global id ranges of this rank's feature rows, in local row order."""
        return [tuple(r) for r in self.manifest["local_ranges"][self.row]]

    @property
    def graph_path(self) -> str:
        return os.path.join(self.rank_path, "graph")

    @property
    def features_path(self) -> str:
        return os.path.join(self.rank_path, "features")

    def identity(self) -> str:
        """A digest of the manifest without the rank, followed by what it is a partition of: equal on
        every rank of one partition, so ranks can check that they were handed directories of the same
        partition of the same source, and a mismatch names both sources, not only their digests."""
        common = {k: v for k, v in self.manifest.items() if k != "rank"}
        digest = hashlib.sha256(json.dumps(common, sort_keys=True).encode()).hexdigest()[:16]
        return f"{digest} ({self.ranks} ranks of {_source_name(self.manifest.get('source'))})"

    def feature_owner_row(self, ids: torch.Tensor) -> torch.Tensor:
        """The process row holding the features of each global id (int64 tensor in [0, N))."""
        if not self.typed:
            return torch.bucketize(ids, torch.tensor(self.feature_bounds[1:-1], dtype=torch.int64), right=True)
        owner = torch.zeros(ids.shape, dtype=torch.int64)
        for b in self.type_feature_bounds:  # type t's ids [b[0], b[-1]), split by its own bounds
            inside = (ids >= b[0]) & (ids < b[-1])
            owner[inside] = torch.bucketize(ids[inside], torch.tensor(b[1:-1], dtype=torch.int64), right=True)
        return owner

    def topology_owner_row(self, ids: torch.Tensor) -> torch.Tensor:
        """The process row holding the in-edges of each global id (0 when the graph is replicated)."""
        bounds = torch.tensor(self.topology_bounds[1:-1], dtype=torch.int64)
        return torch.bucketize(ids, bounds, right=True)

    def holds_features(self, ids: torch.Tensor) -> torch.Tensor:
        """Whether this rank's features/ dataset holds each global id (bool tensor)."""
        held = torch.zeros(ids.shape, dtype=torch.bool)
        for lo, hi in self.local_ranges:
            held |= (ids >= lo) & (ids < hi)
        return held

    def local_rows(self, ids: torch.Tensor) -> torch.Tensor:
        """The local row of each global id this rank holds; ValueError naming the first id it does
        not hold."""
        out = torch.full(ids.shape, -1, dtype=torch.int64)
        base = 0
        for lo, hi in self.local_ranges:
            inside = (ids >= lo) & (ids < hi)
            out[inside] = ids[inside] - lo + base
            base += hi - lo
        missing = (out < 0).nonzero()
        if missing.numel():
            bad = int(ids.reshape(-1)[missing[0, 0]]) if ids.dim() == 1 else int(ids[tuple(missing[0])])
            raise ValueError(f"rank {self.rank}: id {bad} is not among this rank's feature rows "
                             f"{self.local_ranges}")
        return out

    def check_world(self, world_size: int) -> None:
        """ValueError unless the job has as many ranks as the partition."""
        if world_size != self.ranks:
            raise ValueError(f"{self.rank_path}: the partition is for {self.ranks} ranks, the job has "
                             f"{world_size} (the launcher's -n x --nnodes must equal --ranks of "
                             "`graphtier partition`)")


def _source_name(source) -> str:
    """The dataset a partition was written from, as its manifest's `source` names it (the name and
    path `graphtier partition` was given), for messages."""
    if isinstance(source, dict) and (source.get("name") or source.get("path")):
        return f"{source.get('name', '?')} at {source.get('path', '?')}"
    return "an unnamed source"
