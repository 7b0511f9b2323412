"""Runs P processes of one torch.distributed job on this machine through graphtier's launcher
(graphtier.distributed.launch.LocalRanks: torchrun's worker environment, the store hosted by the
launcher, a failed rank published at once), each bounded by a timeout, and returns their exit status,
timing and output: the multi-process tests of whole programs (train). At most 4 processes. Unlike
the launcher's command, it never stops the ranks that remain after a failure (the tests watch them
stop on their own) until the deadline."""

import os
import signal
import tempfile
import time
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Sequence

from graphtier import threads
from graphtier.distributed.launch import LocalRanks

# Each rank's PyTorch intra-op threads (OMP_NUM_THREADS, as torchrun sets it). A one-process
# reference that is to match a rank's floats runs under as_a_rank(): a matrix product or a sum
# split over another number of threads adds in another order (2e-7 apart on a loss, enough to swap
# two near-tied scores in an AUC).
RANK_TORCH_THREADS = 1


def as_a_rank():
    """A context in which this process's PyTorch (and OpenBLAS) threads are a rank's."""
    return threads.torch_threads(threads.divide(1, 1, RANK_TORCH_THREADS, environ={}))


@dataclass
class Rank:
    rank: int
    returncode: Optional[int]  # None: still running at the deadline (killed)
    seconds: float  # from the start of the job until this process ended
    stdout: str
    stderr: str


def launch(world: int, argv: Sequence[str], timeout: float, env: Optional[Dict[str, str]] = None,
           cwd: Optional[str] = None, during: Optional[Callable[[LocalRanks], None]] = None,
           **options) -> List[Rank]:
    """Starts `python argv...` as ranks 0..world-1 (LocalRanks, its `options` as given) and waits
    for all of them, at most `timeout` seconds in all; a process still running then is killed and
    reported with returncode None. `during(ranks)` is called every 50 ms while they run (a test's
    fault injection: signal a rank)."""
    assert 1 <= world <= 4
    scratch = tempfile.TemporaryDirectory(prefix="graphtier-dist-")
    # Files, not pipes: a process never blocks on output nobody reads while the others run.
    logs = [tuple(open(os.path.join(scratch.name, f"{rank}.{kind}"), "w+") for kind in ("out", "err"))
            for rank in range(world)]
    ranks = LocalRanks(argv, world, env={"OMP_NUM_THREADS": str(RANK_TORCH_THREADS), **(env or {})}, cwd=cwd,
                       **options)
    start = time.monotonic()
    ranks.start(stdout=lambda r: logs[r][0], stderr=lambda r: logs[r][1])
    ended: Dict[int, float] = {}
    while len(ended) < world and time.monotonic() - start < timeout:
        for rank in ranks.poll():
            ended[rank] = time.monotonic() - start
        if during is not None:
            during(ranks)
        time.sleep(0.05)
    out = []
    for rank, p in enumerate(ranks.procs):
        if rank not in ended:
            os.killpg(p.pid, signal.SIGKILL)
        p.wait()
        stdout, stderr = (f.seek(0) or f.read() for f in logs[rank])
        for f in logs[rank]:
            f.close()
        out.append(Rank(rank, p.returncode if rank in ended else None, ended.get(rank, timeout), stdout, stderr))
    ranks.close()
    scratch.cleanup()
    return out


def describe(ranks: List[Rank]) -> str:
    return "\n".join(f"--- rank {r.rank}: status {r.returncode} after {r.seconds:.1f} s\n{r.stdout[-3000:]}\n"
                     f"{r.stderr[-3000:]}" for r in ranks)
