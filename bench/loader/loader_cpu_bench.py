"""GraphSAGE [15,10,5] minibatches of 1024 training seeds through graphtier.NeighborLoader, one
sampling thread, no features: batches and sampled edges per CPU-second (process time, every thread
of the process), which a busy machine disturbs less than wall time (preemption does not count),
and batches per wall second, over N batches after 3 of warm-up. For comparing two builds of the
extension, interleaved (e.g. PYTHONPATH=DIR naming a copy of the installed package).

    python bench/loader/loader_cpu_bench.py DATASET_DIR [N=60]
"""
import sys
import time

import graphtier


def main() -> None:
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    ds = graphtier.Dataset(sys.argv[1])
    n = int(sys.argv[2]) if len(sys.argv) == 3 else 60
    loader = graphtier.NeighborLoader(ds, [15, 10, 5], 1024, split="train", features=False, sample_threads=1, seed=0)
    batches = iter(loader)
    for _ in range(3):
        next(batches)
    cpu, wall = time.process_time(), time.perf_counter()
    edges = sum(sum(block.num_edges for block in next(batches).blocks) for _ in range(n))
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    print(f"{n / cpu:.2f} batches/cpu-s {edges / cpu / 1e6:.3f} Medges/cpu-s {n / wall:.2f} batches/s wall")


if __name__ == "__main__":
    main()
