"""Weak and strong scaling of distributed training, measured: `python -m graphtier.train` on P in
{1, 2, 4} Gloo ranks of this machine (launched with torchrun's environment), the graph replicated
and partitioned (1.5D, c = 1), on a generated R-MAT graph (2M nodes, 37M edges, 128 floats a row by
default) prepared (hotness order) and partitioned as a user would.

  weak     every rank trains minibatches of --batch-size seeds: the work per rank and step is fixed,
           a step trains P times the seeds; efficiency = seeds/s at P over (P x seeds/s at P = 1)
  strong   a step trains --batch-size seeds in all, --batch-size / P per rank: the epoch is the same
           work for every P; speedup = epoch seconds at P = 1 over epoch seconds at P

Each run trains --epochs epochs without evaluation and reports its last (the first warms the page
cache and the allocator); --rounds runs of every configuration, interleaved, the median taken. Per
run the JSON keeps the epoch's seconds and steps and every rank's stage seconds (sample, fetch,
wait, compute) and bytes, and per batch size the minibatch sizes (sizes.py) that model.py's fit
(`model.py --fit`) needs.

    python bench/distributed/scaling.py --work DIR --json scaling.json [--rounds 3]
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile

import sizes as minibatch_sizes  # this directory (the script's) is on sys.path
from spawn_ranks import graph_arguments

from graphtier.training import write_json

TESTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python", "tests")
sys.path.insert(0, TESTS)
from dist_launch import describe, launch  # noqa: E402 - the tests' torchrun-like launcher

WORLDS = (1, 2, 4)
CLASSES = 16  # the generated graph's, and the model's output
HIDDEN = 128  # the model's hidden channels: what the runs train and model.py's fit counts
GRAPHS = ("replicated", "partitioned")


def _run(cmd):
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)


def prepare(a) -> str:
    """The ranked dataset and its partitions, made once under --work."""
    graph, ranked = os.path.join(a.work, "graph"), os.path.join(a.work, "ranked")
    if not os.path.isdir(graph):
        scale = {"K": 1e3, "M": 1e6, "G": 1e9}
        nodes = float(a.nodes[:-1]) * scale[a.nodes[-1]] if a.nodes[-1] in scale else float(a.nodes)
        train = a.train_seeds / nodes
        _run([a.cli, "-q", "generate", "-o", graph, "--nodes", a.nodes, "--edges", a.edges, "--feature-dim",
              str(a.dim), "--classes", str(CLASSES), "--seed", "11", "--train-fraction", f"{train:.6f}",
              "--valid-fraction", "0.005", "--test-fraction", "0.005"])
    if not os.path.isdir(ranked):
        _run([a.cli, "-q", "prepare", "-d", graph, "-o", ranked])
    for world in WORLDS:
        for mode in GRAPHS:
            part = partition_dir(a.work, world, mode)
            if not os.path.isdir(part):
                _run([a.cli, "-q", "partition", "-d", ranked, "-o", part, "--ranks", str(world), "--graph", mode])
    return ranked


def partition_dir(work: str, world: int, mode: str) -> str:
    return os.path.join(work, f"p{world}-{mode}")


def topology_bytes(part: str, world: int) -> list:
    """Each rank's topology on disk (indptr + indices), what its sampler maps."""
    out = []
    for r in range(world):
        g = os.path.join(part, f"rank-{r:04d}", "graph")
        out.append(sum(os.path.getsize(os.path.join(g, f)) for f in ("indptr.bin", "indices.bin")))
    return out


def train(part: str, world: int, batch: int, a) -> dict:
    """The last epoch of one training run on `world` ranks: its record from rank 0's JSON."""
    with tempfile.TemporaryDirectory(prefix="graphtier-scaling-") as tmp:
        out = os.path.join(tmp, "result.json")
        ranks = launch(world, ["-m", "graphtier.train", part, "--fanouts", a.fanouts, "--hidden", str(HIDDEN),
                               "--batch-size", str(batch),
                               "--epochs", str(a.epochs), "--no-eval", "--quiet", "--json", out], timeout=a.timeout)
        if any(r.returncode != 0 for r in ranks):
            raise RuntimeError(f"training on {part} failed:\n{describe(ranks)}")
        with open(out) as f:
            return json.load(f)["epochs"][-1]


def summarise(epochs: list) -> dict:
    """The median run of a configuration (by epoch seconds) and the per-step means of its ranks."""
    epoch = sorted(epochs, key=lambda e: e["seconds"])[len(epochs) // 2]
    steps = epoch["steps"]
    per_rank = lambda key: statistics.fmean(r[key] for r in epoch["ranks"]) / steps  # noqa: E731
    exchange = lambda part, key: statistics.fmean(r[part][key] for r in epoch["ranks"]) / steps  # noqa: E731
    return {"epoch_s": epoch["seconds"], "epoch_s_rounds": [e["seconds"] for e in epochs], "steps": steps,
            "sample_s": per_rank("sample_seconds"), "fetch_s": per_rank("fetch_seconds"),
            "wait_s": per_rank("wait_seconds"), "compute_s": per_rank("compute_seconds"),
            "fetch_bytes_received": exchange("fetch", "bytes_received"),
            "fetch_rows": exchange("fetch", "rows"), "fetch_local_rows": exchange("fetch", "local_rows"),
            "sample_bytes_received": exchange("sample_exchange", "bytes_received"),
            "sample_exchanges": exchange("sample_exchange", "exchanges"),
            "seeds_per_s": sum(r["seen"] for r in epoch["ranks"]) / epoch["seconds"],
            "epoch": epoch}


def main(argv=None) -> int:
    p = graph_arguments(__doc__, "2M", "40M")
    p.add_argument("--dim", type=int, default=128)
    p.add_argument("--train-seeds", type=int, default=65536, help="training nodes: the strong-scaling epoch")
    p.add_argument("--fanouts", default="10,5")
    p.add_argument("--batch-size", type=int, default=1024)
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--timeout", type=float, default=600)
    p.add_argument("--json", required=True)
    a = p.parse_args(argv)
    os.makedirs(a.work, exist_ok=True)
    ranked = prepare(a)
    # (graph, P, kind, batch per rank); one process at the strong runs' batch sizes ("fit"): what
    # separates model.py's per-step costs from its per-edge and per-row rates.
    configs = []
    for mode in GRAPHS:
        for world in WORLDS:
            configs += [(mode, world, "weak", a.batch_size)] + ([(mode, world, "strong", a.batch_size // world)]
                                                                  if world > 1 else [])
        configs += [(mode, 1, "fit", a.batch_size // world) for world in WORLDS[1:]]
    runs = {c: [] for c in configs}
    for r in range(a.rounds):
        for mode, world, kind, batch in configs:
            runs[(mode, world, kind, batch)].append(train(partition_dir(a.work, world, mode), world, batch, a))
            print(f"round {r + 1}/{a.rounds}: P={world} {mode} {kind} batch {batch}: "
                  f"{runs[(mode, world, kind, batch)][-1]['seconds']:.2f} s", file=sys.stderr, flush=True)
    fanouts = [int(f) for f in a.fanouts.split(",")]
    batch_sizes = sorted({batch for *_, batch in configs})
    result = {"cores": os.cpu_count(), "fanouts": fanouts, "batch_size": a.batch_size, "dim": a.dim,
              "hidden": HIDDEN, "classes": CLASSES, "dataset": ranked, "runs": [],
              "sizes": {str(b): {k: v for k, v in minibatch_sizes.measure(ranked, fanouts, b, 20, 0).items()
                                 if k != "per_batch"} for b in batch_sizes}}
    for mode, world, kind, batch in configs:
        row = summarise(runs[(mode, world, kind, batch)])
        row.update(graph=mode, P=world, kind=kind, batch_per_rank=batch,
                   topology_bytes=topology_bytes(partition_dir(a.work, world, mode), world))
        result["runs"].append(row)
    write_json(a.json, result)
    print(table(result))
    return 0


def table(result: dict) -> str:
    """The markdown table of docs/benchmarks.md: per configuration, the epoch, the stages per step
    and rank, and the scaling figure against P = 1 of the same graph mode."""
    base = {r["graph"]: r for r in result["runs"] if r["P"] == 1 and r["kind"] == "weak"}
    lines = ["| graph | P | scaling | batch per rank | topology per rank, MB | epoch s | seeds/s | "
             "sample / fetch / wait / compute ms per step | received per step, KB (sampling + features) | "
             "efficiency (vs P; vs min(P, cores)) |",
             "| --- | ---: | --- | ---: | ---: | ---: | ---: | --- | --- | --- |"]
    for r in result["runs"]:
        if r["kind"] == "fit":
            continue
        one = base[r["graph"]]
        if r["kind"] == "weak":
            gain = r["seeds_per_s"] / one["seeds_per_s"]
        else:
            gain = one["epoch_s"] / r["epoch_s"]
        ideal = min(r["P"], result["cores"])
        lines.append(
            f"| {r['graph']} | {r['P']} | {r['kind'] if r['P'] > 1 else '-'} | {r['batch_per_rank']} | "
            f"{max(r['topology_bytes']) / 1e6:.0f} | {r['epoch_s']:.2f} | {r['seeds_per_s']:.0f} | "
            f"{r['sample_s'] * 1e3:.1f} / {r['fetch_s'] * 1e3:.1f} / {r['wait_s'] * 1e3:.1f} / "
            f"{r['compute_s'] * 1e3:.1f} | {r['sample_bytes_received'] / 1e3:.0f} + "
            f"{r['fetch_bytes_received'] / 1e3:.0f} | {gain / r['P']:.2f}; {gain / ideal:.2f} |")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
