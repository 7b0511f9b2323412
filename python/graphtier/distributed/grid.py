"""The (P/c) x c process grid of the matrix-based bulk sampling paper (docs/architecture.md,
Scale-out): which rank holds which block, and the process groups of its rows and columns."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import List, Optional

import torch.distributed as dist


@dataclass(frozen=True)
class ProcessGrid:
    """P = `world` ranks in R = P / c process rows of c = `replication` ranks. Rank K sits in process
    row K // c and process column K % c: process row i holds block i of the features (and of the
    topology when it is partitioned), replicated on its c ranks; process column j holds one rank of
    every row, so every block is in every column."""

    world: int
    replication: int
    rank: int

    def __post_init__(self) -> None:
        if self.world < 1:
            raise ValueError(f"process grid: world size {self.world} must be at least 1")
        if self.replication < 1 or self.world % self.replication != 0:
            raise ValueError(f"process grid: replication {self.replication} must divide the world size "
                             f"{self.world}")
        if not 0 <= self.rank < self.world:
            raise ValueError(f"process grid: rank {self.rank} is outside [0, {self.world})")

    @property
    def rows(self) -> int:
        """R = P / c: the number of blocks."""
        return self.world // self.replication

    @property
    def row(self) -> int:
        """This rank's process row: the block it holds."""
        return self.rank // self.replication

    @property
    def column(self) -> int:
        return self.rank % self.replication

    def row_ranks(self, row: int) -> List[int]:
        """The c ranks holding block `row`, ascending."""
        return [row * self.replication + j for j in range(self.replication)]

    def column_ranks(self, column: int) -> List[int]:
        """The R ranks of process column `column`, ascending: position i holds block i, so a rank's
        position in its column group is its process row."""
        return [i * self.replication + column for i in range(self.rows)]

    def owner(self, row: int) -> int:
        """The rank of this rank's column that holds block `row`."""
        return row * self.replication + self.column


@dataclass
class GridGroups:
    """This rank's column and row groups (torch.distributed process groups). The member order of a
    group is its ranks ascending, so the column group's rank i holds block i."""

    column: Optional[dist.ProcessGroup]
    row: Optional[dist.ProcessGroup]


def grid_groups(grid: ProcessGrid, timeout: Optional[timedelta] = None) -> GridGroups:
    """Creates the groups of every column and every row and returns this rank's. Collective: every
    rank must call it, in the same order relative to other group creations (torch.distributed's rule
    for new_group). Call it once per independent stream of collectives (e.g. one set for the main
    thread and one for a prefetch thread): collectives of one group are ordered, so two threads must
    not share a group."""
    kwargs = {} if timeout is None else {"timeout": timeout}
    mine = GridGroups(column=None, row=None)
    for j in range(grid.replication):
        group = dist.new_group(grid.column_ranks(j), **kwargs)
        if j == grid.column:
            mine.column = group
    for i in range(grid.rows):
        group = dist.new_group(grid.row_ranks(i), **kwargs)
        if i == grid.row:
            mine.row = group
    return mine
