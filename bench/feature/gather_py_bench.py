"""Out-of-core gathers from Python against the bare io_uring loop: graphtier.FeatureStore.gather of
`--batch-rows` uniform random ids per call (a new tensor each call, and into one reused `out`
tensor), and a NeighborLoader's gathers (GraphSAGE [15,10,5] over the training ids, features through
the same store), with no host tier and a 256 MiB host cache, everything else read from storage at the
store's queue depth, each between two runs of the bare loop of random 4 KiB O_DIRECT reads of the
same file at the same depth (`feature_bench --only raw`, bench/common/io_rates.hpp), as storage
reads per second and their ratio to the mean of the two bare runs around it (for the loader also
`reading`, the share of the time the store's reading thread was in a read call). `--load N` keeps N busy processes running beside every round
(the raw loop's and the gathers' alike): a fixed CPU load.

    python bench/feature/gather_py_bench.py DATASET [--seconds 5] [--rounds 3] [--batch-rows 8192]
        [--threads 2] [--depth 0] [--load 0] [--loader-batch 1024] [--json FILE]

DATASET: features of 4 KiB rows (e.g. `graphtier generate --feature-dim 1024 --align 4096`), larger
than the host cache; O_DIRECT bypasses the page cache, so the file's size against RAM does not
matter. `$GRAPHTIER_FEATURE_BENCH` names feature_bench (default build/cpu/bench/feature_bench).
"""

import argparse
import json
import multiprocessing
import os
import statistics
import subprocess
import time

import torch

import graphtier
from graphtier.training import write_json

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CACHE = "256MiB"


TRIALS = ("gather", "gather_out", "loader")  # a new tensor per call, into a reused `out`, a loader's


def busy(stop):
    while not stop.is_set():
        sum(range(10000))


def raw_iops(dataset, depth, seconds):
    tool = os.environ.get("GRAPHTIER_FEATURE_BENCH", os.path.join(ROOT, "build", "cpu", "bench", "feature_bench"))
    run = subprocess.run([tool, "--dir", dataset, "--cpu", "0", "--host-cache", CACHE, "--depth", str(depth),
                          "--seconds", str(seconds), "--rounds", "1", "--only", "raw"],
                         capture_output=True, text=True, check=True)
    return json.loads(run.stdout)["raw_4k_reads"]["iops"]


def gather_iops(store, batch_rows, seconds, generator, reuse):
    """Storage reads per second (the store's own count) and rows per second over `seconds`."""
    out = torch.empty((batch_rows, store.feature_dim), dtype=torch.float32) if reuse else None
    before = store.stats()["io"]["reads"]
    rows = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        ids = torch.randint(0, store.num_nodes, (batch_rows,), generator=generator)
        x = store.gather(ids, out=out)
        rows += x.shape[0]
    elapsed = time.perf_counter() - start
    return (store.stats()["io"]["reads"] - before) / elapsed, rows / elapsed


def loader_iops(store, dataset, batch, seconds):
    """Storage reads per second of the store while a NeighborLoader (GraphSAGE [15,10,5], `batch`
    training seeds) iterates over it, its features gathered through the loader's pipeline, and the
    share of the time the store's reading thread was in a read call (the device's queue held reads)."""
    loader = graphtier.NeighborLoader(dataset, [15, 10, 5], batch, split="train", store=store, seed=0)
    before = store.stats()["io"]
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        for _ in loader:
            if time.perf_counter() - start >= seconds:
                break
    elapsed = time.perf_counter() - start
    after = store.stats()["io"]
    return (after["reads"] - before["reads"]) / elapsed, (after["seconds"] - before["seconds"]) / elapsed


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dataset")
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--batch-rows", type=int, default=8192)
    parser.add_argument("--threads", type=int, default=2, help="the store's gather threads")
    parser.add_argument("--depth", type=int, default=0, help="the store's queue depth (0: calibrated on the file)")
    parser.add_argument("--load", type=int, default=0, help="busy processes beside every round")
    parser.add_argument("--loader-batch", type=int, default=1024, help="the loader row's seeds per minibatch")
    parser.add_argument("--json", help="write every round here")
    args = parser.parse_args()

    dataset = graphtier.Dataset(args.dataset)
    store = graphtier.FeatureStore(dataset, cpu_buffer="0", host_cache=CACHE, io_depth=args.depth,
                                   threads=args.threads)
    if store.dtype != "float32" or store.feature_dim * 4 != 4096:
        raise SystemExit(f"{args.dataset}: rows of {store.feature_dim} {store.dtype}, not 4 KiB of float32")
    stop = multiprocessing.Event()
    load = [multiprocessing.Process(target=busy, args=(stop,), daemon=True) for _ in range(args.load)]
    for p in load:
        p.start()
    generator = torch.Generator().manual_seed(0)
    rounds = []
    try:
        for r in range(args.rounds):
            # Every trial between two bare loops, against their mean: the device's rate drifts
            # within a round (seconds apart, up to 1.5x on this machine's disk), and a trial taken
            # after one bare loop alone carried that drift into its ratio.
            raw = [raw_iops(args.dataset, store.io_depth, args.seconds)]
            row = {"round": r}
            for name in TRIALS:
                if name == "loader":
                    iops, reading = loader_iops(store, dataset, args.loader_batch, args.seconds)
                    row[name] = {"iops": iops, "reading": reading}
                else:
                    iops, rows = gather_iops(store, args.batch_rows, args.seconds, generator, name == "gather_out")
                    row[name] = {"iops": iops, "rows_per_s": rows}
                raw.append(raw_iops(args.dataset, store.io_depth, args.seconds))
                row[name]["raw_iops"] = (raw[-2] + raw[-1]) / 2
                row[name]["over_raw"] = iops / row[name]["raw_iops"]
            row["raw_iops"] = raw
            rounds.append(row)
            print(json.dumps(row), flush=True)
    finally:
        stop.set()
        for p in load:
            p.join()
    if args.json:
        write_json(args.json, rounds)
    med = {name: statistics.median(row[name]["over_raw"] for row in rounds) for name in TRIALS}
    print(f"{os.path.basename(os.path.normpath(args.dataset))}: depth {store.io_depth}, {args.batch_rows} rows per "
          f"call, {args.threads} gather threads, {args.load} busy processes beside, medians of {args.rounds} rounds: "
          f"raw {statistics.median(x for row in rounds for x in row['raw_iops']) / 1e3:.1f} K IOPS; gather / raw "
          f"{med['gather']:.2f} (a new tensor per call), {med['gather_out']:.2f} (into `out`), "
          f"{med['loader']:.2f} (a NeighborLoader's gathers, reading "
          f"{statistics.median(row['loader']['reading'] for row in rounds):.3f} of the time)")


if __name__ == "__main__":
    main()
