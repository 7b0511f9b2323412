"""One rank of test_dist_features.py: gathers a few id lists through DistFeatureFetcher and saves
the ids, the rows and the byte counters to OUT/rank-K.pt. argv: PARTITION_DIR OUT."""

import os
import sys
from datetime import timedelta

import torch
import torch.distributed as dist

from graphtier.dist.features import DistFeatureFetcher
from graphtier.dist.grid import ProcessGrid
from graphtier.dist.partition import open_partition


def main() -> None:
    partition_dir, out = sys.argv[1:3]
    dist.init_process_group("gloo", timeout=timedelta(seconds=30))
    rank = dist.get_rank()
    partition = open_partition(partition_dir, rank)
    m = partition.manifest
    grid = ProcessGrid(int(m["ranks"]), int(m["replication"]))
    fetcher = DistFeatureFetcher(partition, grid)
    n = int(m["num_nodes"])
    g = torch.Generator().manual_seed(rank)
    requests = [
        torch.randint(0, n, (400,), generator=g),  # every block, with repeats
        torch.empty(0, dtype=torch.int64),  # nothing to fetch: still a collective
        torch.arange(n) if rank == 0 else torch.randint(0, n, (3,), generator=g),  # one rank asks for everything
        torch.full((5,), n - 1),  # the last row, five times
    ]
    rows = [fetcher.gather(ids) for ids in requests]
    torch.save({"ids": requests, "rows": rows, "counters": fetcher.counters()}, os.path.join(out, f"rank-{rank}.pt"))
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
