"""Out-of-core typed training: R-SAGE on an IGBH-shaped graph whose feature tables exceed the
memory the job may use, through graphtier's TypedFeatureStore (rows read from storage with
io_uring, a host cache of a fixed size) against the same training reading the same rows from the
memory-mapped tables (`python -m graphtier.train --baseline`: index_select on each type's mapped
file, through the page cache). Each run is a child process in a memory cgroup (cgroup v1 or v2,
created here: needs root) limited to --memory-limit, so the page cache the baseline leans on is
bounded as on a machine whose RAM the features exceed. Rounds alternate the two readers, each started with the tables out of the page cache; each
reports batches/s over --batches training batches (after one warm-up batch) and its peak RSS.

    graphtier generate --schema igbh --nodes 2M --align 4096 --classes 19 -o igbh2m-f   # 7.8 GiB of features
    python bench/train/typed_out_of_core.py igbh2m-f --memory-limit 4GiB [--batches 8] [--rounds 2]
"""

import argparse
import json
import os
import subprocess
import sys
import threading
import time

CHILD = r"""
import json, sys, time
from graphtier import train
args = json.loads(sys.argv[1])
warm = train.run(train.parse_args(args + ["--stop-after-batches", "1"]))
run = train.run(train.parse_args(args + ["--stop-after-batches", sys.argv[2]]))
print(json.dumps({"warm_seconds": warm["seconds"], "seconds": run["seconds"]}))
"""


def parse_bytes(text: str) -> int:
    units = {"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}
    for suffix, scale in units.items():
        if text.endswith(suffix):
            return int(float(text[: -len(suffix)]) * scale)
    return int(text)


def make_cgroup(limit: int) -> str:
    """A memory cgroup limited to `limit` bytes (page cache included); its cgroup.procs path."""
    for root, limit_file in (("/sys/fs/cgroup/memory", "memory.limit_in_bytes"), ("/sys/fs/cgroup", "memory.max")):
        if os.path.exists(os.path.join(root, limit_file if root.endswith("memory") else "cgroup.controllers")):
            path = os.path.join(root, f"graphtier-ooc-{os.getpid()}")
            os.makedirs(path, exist_ok=True)
            with open(os.path.join(path, limit_file), "w") as f:
                f.write(str(limit))
            return path
    sys.exit("typed_out_of_core: no writable memory cgroup (cgroup v1 memory or v2 memory.max); run as root")


def evict(dataset: str) -> None:
    """Drops the feature tables' pages from the page cache (clean pages, none mapped), so that
    every run starts cold and none reads what an earlier one cached outside its cgroup."""
    for name in os.listdir(dataset):
        if name.startswith("features"):
            fd = os.open(os.path.join(dataset, name), os.O_RDONLY)
            try:
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            finally:
                os.close(fd)


def run_child(cgroup, train_args: list, batches: int, timeout: float) -> dict:
    def enter() -> None:
        if cgroup is not None:
            with open(os.path.join(cgroup, "cgroup.procs"), "w") as f:
                f.write(str(os.getpid()))

    proc = subprocess.Popen([sys.executable, "-c", CHILD, json.dumps(train_args), str(batches)],
                            stdout=subprocess.PIPE, text=True, preexec_fn=enter)
    fired = threading.Event()
    timer = threading.Timer(timeout, lambda: (fired.set(), proc.kill()))
    timer.start()
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)  # this child's own peak RSS (ru_maxrss, KiB)
    timer.cancel()
    proc.returncode = os.waitstatus_to_exitcode(status)
    if fired.is_set():  # killed by the timer: fewer than `batches` + 1 batches in `timeout` seconds
        return {"timed_out": timeout, "peak_rss_mib": usage.ru_maxrss / 1024,
                "batches_per_second": (batches + 1) / timeout}
    if proc.returncode != 0:
        sys.exit(f"typed_out_of_core: the child exited with {proc.returncode} (killed by the cgroup's limit?)")
    figures = json.loads(out.strip().splitlines()[-1])
    figures["peak_rss_mib"] = usage.ru_maxrss / 1024
    figures["batches_per_second"] = (batches - 1) / max(figures["seconds"] - figures["warm_seconds"], 1e-9)
    return figures


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("dataset")
    p.add_argument("--memory-limit", default="4GiB",
                   help="the cgroup's memory limit (page cache included); none: no cgroup, the machine's RAM")
    p.add_argument("--batches", type=int, default=8)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--timeout", type=float, default=600,
                   help="seconds a run may take; a run past it counts as (batches + 1) / timeout batches/s, an upper bound")
    p.add_argument("--host-cache", default="256MiB", help="graphtier's host cache of storage rows")
    p.add_argument("--fanouts", default="10,15")
    p.add_argument("--batch-size", default="1024")
    a = p.parse_args()
    common = [a.dataset, "--model", "rsage", "--fanouts", a.fanouts, "--batch-size", a.batch_size, "--epochs", "1",
              "--no-eval", "--quiet", "--threads", "2", "--seed", "0"]
    readers = {
        "graphtier": common + ["--cpu-buffer", "0", "--host-cache", a.host_cache, "--window", "1", "--prefetch", "1",
                               "--io-depth", "64"],
        "memmap": common + ["--baseline"],
    }
    cgroup = None if a.memory_limit == "none" else make_cgroup(parse_bytes(a.memory_limit))
    results = {name: [] for name in readers}
    try:
        for r in range(a.rounds):
            for name, train_args in readers.items():
                evict(a.dataset)
                start = time.perf_counter()
                figures = run_child(cgroup, train_args, a.batches, a.timeout)
                results[name].append(figures)
                bound = "< " if "timed_out" in figures else ""
                print(f"round {r} {name:9s} {bound}{figures['batches_per_second']:.3f} batches/s  peak RSS "
                      f"{figures['peak_rss_mib']:.0f} MiB  ({time.perf_counter() - start:.0f} s)", flush=True)
    finally:
        if cgroup is not None:
            os.rmdir(cgroup)
    ratio = [g["batches_per_second"] / m["batches_per_second"] for g, m in zip(results["graphtier"], results["memmap"])]
    print(json.dumps({"memory_limit": a.memory_limit, "ratio_graphtier_to_memmap": ratio, **results}))


if __name__ == "__main__":
    main()
