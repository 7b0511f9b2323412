"""CPU neighbour sampling seeds/s through graphtier.NeighborLoader (the Python seam's hot path):
fanouts 10,10, batches of 64 seeds, features gathered, every node a seed; after a warm-up pass,
the median of 7 runs of 200 batches.

    python bench/loader/loader_seeds_bench.py DATASET_DIR
"""
import statistics
import sys
import time

import torch

import graphtier


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    ds = graphtier.Dataset(sys.argv[1])
    loader = graphtier.NeighborLoader(ds, [10, 10], batch_size=64, ids=torch.arange(ds.num_nodes), seed=0,
                                      ids_numbering="prepared")  # a renumbered dataset needs it said
    for _ in loader:  # warm-up pass
        pass
    rates = []
    for _ in range(7):
        seeds = batches = 0
        start = time.perf_counter()
        while batches < 200:
            for batch in loader:
                seeds += batch.num_seeds
                batches += 1
                if batches == 200:
                    break
        rates.append(seeds / (time.perf_counter() - start))
    print(f"{graphtier.__file__}: median {statistics.median(rates):.0f} seeds/s over 7 runs of 200 batches "
          f"(min {min(rates):.0f}, max {max(rates):.0f})")


if __name__ == "__main__":
    main()
