"""The distributed benches' launcher: `world` spawned processes, each running
`worker(rank, world, port, part_dir, args, queue)`, which puts (rank, result, None) or
(rank, None, traceback text) on the queue."""

from __future__ import annotations

import torch.multiprocessing as mp


def spawn_ranks(worker, part_dir: str, world: int, args: dict, timeout: float = 900) -> list:
    """Every rank's result, in rank order; a rank's error is raised as a RuntimeError naming it."""
    from graphtier.distributed.comm import free_port
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    port = free_port()
    procs = [ctx.Process(target=worker, args=(r, world, port, part_dir, args, queue)) for r in range(world)]
    for p in procs:
        p.start()
    results = {}
    for _ in range(world):
        rank, out, error = queue.get(timeout=timeout)
        if error:
            raise RuntimeError(f"rank {rank}: {error}")
        results[rank] = out
    for p in procs:
        p.join(timeout=30)
    return [results[r] for r in range(world)]
