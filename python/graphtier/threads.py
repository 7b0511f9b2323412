"""How a training job divides the cores between graphtier's engine and PyTorch.

The engine's sampling pool and the feature store's gather pool run beside PyTorch's intra-op
threads (the loader samples the next minibatches while the model trains on this one). Left to their
defaults both take every core, and the oversubscribed cores then wait on each other: single-process
Cora trained in 24.4 s with PyTorch's default threads against 4.5 s with one PyTorch thread on a
loaded 2-core machine (issue 28; docs/benchmarks.md, "Threads").

The rule, over the cores this process may run on (its CPU affinity):
  engine = --threads if given, else max(1, cores // 2)      (sampling pool and gather pool each)
  PyTorch = --torch-threads if given, else OMP_NUM_THREADS if set in the environment (torchrun sets
            1 per rank), else max(1, cores - engine)        (intra-op threads, and OpenBLAS's pool)
Only the engine's pools follow `engine`; its pipeline stage threads mostly wait on queues. A
distributed rank divides its share, the cores over the ranks on its machine (of_rank_arguments).
A script of the user's own asks for the same division with `graphtier.divide_threads()` (opt-in,
as DGL's enable_cpu_affinity is: a loader made alone changes no global setting of PyTorch's).

The BLAS pool is the one that hurt. Debian's PyTorch runs its matrix products on OpenBLAS's
pthread build, whose pool (one thread per core, spinning between calls) torch.set_num_threads does
not size: at::get_num_threads() was 1 on the 2-core machine while OpenBLAS ran 2 threads, and only
OMP_NUM_THREADS, read when the library loads, changed that. So the PyTorch share sets both.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import os
from dataclasses import dataclass
from typing import Iterator, List, Optional

import torch


def available_cores() -> int:
    """The cores this process may run on (its affinity mask, e.g. under taskset or a container's
    cpuset), or os.cpu_count() where the platform has no affinity."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        return max(1, os.cpu_count() or 1)


@dataclass(frozen=True)
class ThreadDivision:
    cores: int
    engine: int  # threads of the sampling pool and of the gather pool
    torch: int  # PyTorch's intra-op threads
    engine_source: str  # where each count came from: "rule", "--threads", ...
    torch_source: str

    def __str__(self) -> str:
        return (f"threads: engine {self.engine} ({self.engine_source}), PyTorch {self.torch} ({self.torch_source}), "
                f"{self.cores} cores")

    def as_dict(self) -> dict:
        """The counts as a run's result records them."""
        return {"cores": self.cores, "engine": self.engine, "torch": self.torch}


def divide(cores: int, engine: int = 0, torch_threads: int = 0, environ=os.environ) -> ThreadDivision:
    """The division of `cores` by the module's rule; `engine` / `torch_threads` > 0 override it."""
    if engine > 0:
        engine_source = "--threads"
    else:
        engine, engine_source = max(1, cores // 2), "rule: half the cores"
    if torch_threads > 0:
        torch_source = "--torch-threads"
    elif environ.get("OMP_NUM_THREADS", "").strip().isdigit() and int(environ["OMP_NUM_THREADS"]) > 0:
        torch_threads, torch_source = int(environ["OMP_NUM_THREADS"]), "OMP_NUM_THREADS"
    else:
        torch_threads, torch_source = max(1, cores - engine), "rule: the other cores"
    return ThreadDivision(cores, engine, torch_threads, engine_source, torch_source)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The overrides of the rule as a job's options: --threads (the engine's) and --torch-threads."""
    parser.add_argument("--threads", type=int, default=0,
                        help="threads of the sampling pool and of the gather pool (0: half the cores, "
                             "graphtier.threads)")
    parser.add_argument("--torch-threads", type=int, default=0,
                        help="PyTorch's intra-op threads of a single-process run (0: OMP_NUM_THREADS if set, else "
                             "the cores the engine leaves)")


def of_arguments(args: argparse.Namespace) -> ThreadDivision:
    """The division for a job run with add_arguments' options, over the cores this process may use."""
    return divide(available_cores(), args.threads, args.torch_threads)


def of_rank_arguments(args: argparse.Namespace, environ=os.environ) -> ThreadDivision:
    """A distributed rank's division: the rule over its share of the cores, those this process may
    use divided among the ranks on its machine (torchrun's LOCAL_WORLD_SIZE), at least one."""
    ranks_here = int(environ.get("LOCAL_WORLD_SIZE", "1") or "1")
    return divide(max(1, available_cores() // max(1, ranks_here)), args.threads, args.torch_threads, environ)


def openblas_libraries() -> List[ctypes.CDLL]:
    """The OpenBLAS libraries loaded into this process (found in /proc/self/maps; none where there
    is no such file or no OpenBLAS, e.g. PyPI's PyTorch, whose MKL torch.set_num_threads sizes)."""
    try:
        with open("/proc/self/maps") as maps:
            paths = sorted({fields[-1] for fields in map(str.split, maps)
                            if len(fields) == 6 and fields[-1].startswith("/") and "openblas" in fields[-1]})
    except OSError:
        return []
    out = []
    for path in paths:
        try:
            lib = ctypes.CDLL(path)  # the loaded library's handle (dlopen of a loaded path)
        except OSError:
            continue
        if hasattr(lib, "openblas_set_num_threads") and hasattr(lib, "openblas_get_num_threads"):
            out.append(lib)
    return out


def _set_torch_threads(count: int) -> List[tuple]:
    """PyTorch's intra-op threads and every OpenBLAS pool set to `count`; what they were, for
    _restore."""
    before = [(None, torch.get_num_threads())] + [(lib, lib.openblas_get_num_threads()) for lib in openblas_libraries()]
    torch.set_num_threads(count)
    for lib, _ in before[1:]:
        lib.openblas_set_num_threads(count)
    return before


def _restore(before: List[tuple]) -> None:
    for lib, count in before:
        if lib is None:
            torch.set_num_threads(count)
        else:
            lib.openblas_set_num_threads(count)


@contextlib.contextmanager
def torch_threads(division: ThreadDivision) -> Iterator[None]:
    """PyTorch's intra-op threads and OpenBLAS's pool set to the division's within the block,
    restored after it (a job run in-process, e.g. by the tests, leaves the caller's settings as it
    found them)."""
    before = _set_torch_threads(division.torch)
    try:
        yield
    finally:
        _restore(before)


# The division a script asked for (divide_threads), which the loaders and stores made after it take.
_script_division: Optional[ThreadDivision] = None


def divide_threads(threads: int = 0, torch_threads: int = 0, *, quiet: bool = False) -> ThreadDivision:
    """Divides this process's cores between graphtier's engine and PyTorch, for a training script
    of the user's own, by the rule `python -m graphtier.train` follows (graphtier.threads): PyTorch's
    intra-op threads and OpenBLAS's pool take the PyTorch share from now on, and the loaders and
    feature stores made afterwards without a thread count (`sample_threads=0`, `threads=0`) take
    the engine's. `threads` / `torch_threads` > 0 override the shares (OMP_NUM_THREADS, when set,
    is PyTorch's otherwise). Prints the division (unless `quiet`) and returns it; call it once,
    before the loaders, e.g. at the top of the script."""
    global _script_division
    if threads < 0 or torch_threads < 0:
        raise ValueError(f"divide_threads: threads={threads} and torch_threads={torch_threads} must be >= 0 "
                         f"(0: the rule's share)")
    division = divide(available_cores(), threads, torch_threads)
    _set_torch_threads(division.torch)
    _script_division = division
    if not quiet:
        print(division, flush=True)
    return division


def engine_threads(requested: int) -> int:
    """The threads of a loader's sampling pool or a store's gather pool that asked for `requested`
    (0: its default): `requested` when > 0, else the engine share of divide_threads' division when a
    script asked for one, else 0 (the engine's default: every core)."""
    if requested > 0 or _script_division is None:
        return requested
    return _script_division.engine
