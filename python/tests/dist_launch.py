"""Runs P processes of one torch.distributed job on this machine as torchrun would (the environment
of its workers: Gloo on 127.0.0.1, a free port), each bounded by a timeout, and returns their exit
status, timing and output: the multi-process tests of whole programs (train). At most 4 processes."""

import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence

from graphtier import threads
from graphtier.distributed.comm import free_port

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
           cwd: Optional[str] = None) -> List[Rank]:
    """Starts `python argv...` as ranks 0..world-1 (the environment torchrun gives its workers) and
    waits for all of them, at most `timeout` seconds in all; a process still running then is killed
    and reported with returncode None."""
    assert 1 <= world <= 4
    port = free_port()
    procs, logs = [], []
    scratch = tempfile.TemporaryDirectory(prefix="graphtier-dist-")
    start = time.monotonic()
    for rank in range(world):
        e = dict(os.environ, RANK=str(rank), WORLD_SIZE=str(world), LOCAL_RANK=str(rank),
                 LOCAL_WORLD_SIZE=str(world), MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port),
                 OMP_NUM_THREADS=str(RANK_TORCH_THREADS), PYTHONUNBUFFERED="1")
        e.update(env or {})
        # Files, not pipes: a process never blocks on output nobody reads while the others run.
        files = tuple(open(os.path.join(scratch.name, f"{rank}.{kind}"), "w+") for kind in ("out", "err"))
        logs.append(files)
        procs.append(subprocess.Popen([sys.executable, *argv], env=e, cwd=cwd, stdout=files[0], stderr=files[1],
                                      text=True, start_new_session=True))
    ended: Dict[int, float] = {}
    while len(ended) < world and time.monotonic() - start < timeout:
        for rank, p in enumerate(procs):
            if rank not in ended and p.poll() is not None:
                ended[rank] = time.monotonic() - start
        time.sleep(0.05)
    out = []
    for rank, p in enumerate(procs):
        if rank not in ended:
            os.killpg(p.pid, signal.SIGKILL)
        p.wait()
        stdout, stderr = (f.seek(0) or f.read() for f in logs[rank])
        for f in logs[rank]:
            f.close()
        out.append(Rank(rank, p.returncode if rank in ended else None, ended.get(rank, timeout), stdout, stderr))
    scratch.cleanup()
    return out


def describe(ranks: List[Rank]) -> str:
    return "\n".join(f"--- rank {r.rank}: status {r.returncode} after {r.seconds:.1f} s\n{r.stdout[-3000:]}\n"
                     f"{r.stderr[-3000:]}" for r in ranks)
