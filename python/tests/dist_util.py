"""Running a function in P Gloo processes on 127.0.0.1, bounded in time, for the distributed tests.

spawn(fn, P, *args) starts P processes (fresh interpreters, as torchrun's), each running
fn(rank, P, *args) inside an initialised Gloo process group, and returns the P return values (they
must pickle). A process that raises fails the test with its traceback; one that does not finish
within `timeout` seconds is killed and fails it, so a hang can never stall CI."""

from __future__ import annotations

import multiprocessing as mp
import os
import traceback
from datetime import timedelta
from typing import Any, Callable, List

from graphtier.distributed.comm import free_port

MAX_PROCESSES = 4  # the CI machine has 2 cores, shared


def _child(fn, rank, world, port, args, queue, collective_timeout):
    import torch.distributed as dist

    try:
        os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank),
                          WORLD_SIZE=str(world), LOCAL_RANK=str(rank))
        dist.init_process_group("gloo", rank=rank, world_size=world,
                                timeout=timedelta(seconds=collective_timeout))
        try:
            queue.put((rank, True, fn(rank, world, *args)))
        finally:
            dist.destroy_process_group()
    except BaseException:  # noqa: BLE001 - reported to the parent, which fails the test
        queue.put((rank, False, traceback.format_exc()))


def spawn(fn: Callable[..., Any], world: int, *args: Any, timeout: float = 90.0,
          collective_timeout: float = 30.0) -> List[Any]:
    if not 1 <= world <= MAX_PROCESSES:
        raise ValueError(f"spawn: {world} processes; the tests use 1 to {MAX_PROCESSES}")
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    port = free_port()
    procs = [ctx.Process(target=_child, args=(fn, r, world, port, args, queue, collective_timeout), daemon=True)
             for r in range(world)]
    for p in procs:
        p.start()
    results: dict = {}
    failures: List[str] = []
    import queue as queue_module
    import time

    deadline = time.monotonic() + timeout
    try:
        while len(results) + len(failures) < world:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"spawn: {world - len(results) - len(failures)} of {world} processes did not "
                                     f"finish within {timeout} s")
            try:
                rank, ok, value = queue.get(timeout=min(left, 1.0))
            except queue_module.Empty:
                dead = [r for r, p in enumerate(procs) if p.exitcode not in (None, 0)]
                if dead and len(results) + len(failures) < world and all(p.exitcode is not None for p in procs):
                    raise AssertionError(f"spawn: ranks {dead} exited with codes "
                                         f"{[procs[r].exitcode for r in dead]} without a result")
                continue
            if ok:
                results[rank] = value
            else:
                failures.append(f"rank {rank}:\n{value}")
    finally:
        for p in procs:
            p.join(timeout=5)
            if p.is_alive():
                p.kill()
                p.join()
    if failures:
        raise AssertionError("\n".join(failures))
    return [results[r] for r in range(world)]
