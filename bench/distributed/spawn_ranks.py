"""The distributed benches' shared parts: the launcher of `world` spawned processes, each running
`worker(rank, world, port, part_dir, args, queue)`, which puts (rank, result, None) or
(rank, None, traceback text) on the queue, and the options of the generated graph they work on."""

from __future__ import annotations

import argparse
import os

import torch.multiprocessing as mp


def graph_arguments(doc: str, nodes: str, edges: str) -> argparse.ArgumentParser:
    """A parser with the scratch directory, the `graphtier` command and the generated graph's size."""
    p = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    p.add_argument("--work", required=True, help="scratch directory (the graph and its partitions)")
    p.add_argument("--cli", default=os.path.join(os.path.dirname(__file__), "..", "..", "build", "cpu", "graphtier"))
    p.add_argument("--nodes", default=nodes)
    p.add_argument("--edges", default=edges)
    return p


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
