"""Distributed sampling and feature fetch, measured: per step and rank, the seconds of each stage
(sample, fetch, compute) and the bytes each exchange moved, for P in {1, 2, 4} ranks (Gloo
processes on this machine) and c in {1, 2}, with the graph replicated and partitioned, on a
generated graph. Each measured volume is set against the matrix-sampling paper's communication
analysis (§5-6, docs/references.md), evaluated on the same minibatches:
  feature fetch      a rank receives the rows of its input nodes held by the other R - 1 process
                     rows of its column, (1 - 1/R) of them with features spread evenly, plus the
                     8-byte ids the others ask it for (the same count, by symmetry):
                     n_in (1 - 1/R) (row bytes + 8)
  partitioned rows   per layer the frontier's rows owned elsewhere, (1 - 1/R) of them, each with
                     the average nnz per row d = E/N (8-byte words) plus degree and offset:
                     |F| (1 - 1/R) (8 d + 24), and the 8-byte ids asked of it
Rows are fetched whole (DistSampler's owner_draws=False), as the analysis' algorithm does; the
owners' draws, DistSampler's default for GraphSAGE, are measured by sample_traffic.py.
The ratio measured / predicted says where the analysis' assumptions (uniform placement, rows of
average degree) part from a power-law graph: the frontier reached through edges is biased toward
high-degree nodes, whose rows are long.

    python bench/distributed/dist_bench.py --work /tmp/distbench [--nodes 200K --edges 4M --dim 128]
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time

import torch

from graphtier.training import write_json
from spawn_ranks import graph_arguments, spawn_ranks  # this directory (the script's) is on sys.path


def _run(cmd):
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)


def _worker(rank, world, port, part_dir, args, queue):
    import torch.distributed as dist
    import torch.nn.functional as F
    from datetime import timedelta

    from graphtier.distributed import CommStats, Partition, ProcessGrid, grid_groups
    from graphtier.distributed.features import DistFeatureFetcher
    from graphtier.distributed.sampler import DistSampler
    from graphtier.models import GraphSAGE

    torch.set_num_threads(1)
    try:
        dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world,
                                timeout=timedelta(seconds=120))
        part = Partition.open(part_dir, rank)
        grid = ProcessGrid(world, part.replication, rank)
        groups = grid_groups(grid)
        sample_stats = CommStats()
        fanouts = [int(f) for f in args["fanouts"].split(",")]
        sampler = DistSampler(part, grid, "neighbor", fanouts, args["batch_size"], seed=0, split="train",
                              groups=groups, stats=sample_stats, **args["sampler_options"])
        fetcher = DistFeatureFetcher(part, grid, group=groups.column)
        model = GraphSAGE(fetcher.dim, 64, 16, len(fanouts))
        optimizer = torch.optim.Adam(model.parameters())
        n, e = part.num_nodes, part.manifest["num_edges"]
        rows_r = part.rows
        row_bytes = fetcher.dim * 4
        steps = []
        it = iter(sampler)
        for s in range(min(args["steps"], sampler.steps)):
            s0 = sample_stats.as_dict()
            t0 = time.perf_counter()
            batch = next(it)
            t1 = time.perf_counter()
            f0 = fetcher.counters()
            x = fetcher.gather(batch.input_nodes)
            t2 = time.perf_counter()
            f1 = fetcher.counters()
            out = model(x, batch.blocks)
            loss = F.cross_entropy(out, batch.y.long().clamp(min=0) % 16)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            t3 = time.perf_counter()
            s1 = sample_stats.as_dict()
            n_in = int(batch.input_nodes.numel())
            frontier = [b.num_dst for b in batch.blocks]
            remote = 1 - 1 / rows_r
            steps.append({
                "sample_s": t1 - t0, "fetch_s": t2 - t1, "compute_s": t3 - t2,
                "sample_bytes_received": s1["bytes_received"] - s0["bytes_received"],
                "sample_bytes_sent": s1["bytes_sent"] - s0["bytes_sent"],
                "fetch_bytes_received": f1["bytes_received"] - f0["bytes_received"],
                "fetch_bytes_sent": f1["bytes_sent"] - f0["bytes_sent"],
                "input_nodes": n_in,
                "predicted_fetch_bytes": n_in * remote * (row_bytes + 8),
                "predicted_sample_bytes": (sum(f * remote * (8 * e / n + 24 + 8) for f in frontier)
                                           if part.graph_mode == "partitioned" else 0.0),
            })
        dist.barrier()
        dist.destroy_process_group()
        queue.put((rank, steps, None))
    except BaseException:  # noqa: BLE001 - reported by the parent
        import traceback
        queue.put((rank, None, traceback.format_exc()))


def summarise(per_rank: list) -> dict:
    flat = [s for steps in per_rank for s in steps]
    mean = lambda k: statistics.fmean(s[k] for s in flat)  # noqa: E731
    out = {k: mean(k) for k in flat[0]}
    out["steps_per_rank"] = len(per_rank[0])
    return out


def main(argv=None) -> int:
    p = graph_arguments(__doc__, "200K", "4M")
    p.add_argument("--dim", type=int, default=128)
    p.add_argument("--fanouts", default="10,5")
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--steps", type=int, default=8)
    p.add_argument("--group", type=int, default=1, help="minibatches per row exchange (graph partitioned)")
    p.add_argument("--json")
    a = p.parse_args(argv)
    os.makedirs(a.work, exist_ok=True)
    data = os.path.join(a.work, "graph")
    if not os.path.isdir(data):
        _run([a.cli, "-q", "generate", "-o", data, "--nodes", a.nodes, "--edges", a.edges, "--feature-dim",
              str(a.dim), "--classes", "16", "--seed", "7"])
    import inspect

    from graphtier.distributed.sampler import DistSampler
    params = inspect.signature(DistSampler).parameters
    sampler_options = {"group": a.group, "bulk": 0} if "group" in params else {"bulk": a.group}
    if "owner_draws" in params:  # whole rows, as the analysis fetches them (sample_traffic.py: owner draws)
        sampler_options["owner_draws"] = False
    args = {"fanouts": a.fanouts, "batch_size": a.batch_size, "steps": a.steps, "sampler_options": sampler_options}
    rows = []
    for world, c in [(1, 1), (2, 1), (2, 2), (4, 1), (4, 2)]:
        for mode in ("replicated", "partitioned"):
            part = os.path.join(a.work, f"part-{world}-{c}-{mode}")
            if not os.path.isdir(part):
                _run([a.cli, "-q", "partition", "-d", data, "-o", part, "--ranks", str(world), "--replication", str(c),
                      "--graph", mode])
            per_rank = spawn_ranks(_worker, part, world, args, timeout=600)
            summary = summarise(per_rank)
            summary.update(P=world, c=c, graph=mode, per_rank_steps=per_rank)
            rows.append(summary)
            print(f"P={world} c={c} {mode}: done", file=sys.stderr)
    ratio = lambda m, p: "n/a" if p == 0 else f"{m / p:.2f}"  # noqa: E731
    print("| P | c | graph | sample ms | fetch ms | compute ms | rows recv KB (measured / predicted) | "
          "features recv KB (measured / predicted) |")
    print("| ---: | ---: | --- | ---: | ---: | ---: | --- | --- |")
    for r in rows:
        print(f"| {r['P']} | {r['c']} | {r['graph']} | {r['sample_s'] * 1e3:.1f} | {r['fetch_s'] * 1e3:.1f} | "
              f"{r['compute_s'] * 1e3:.1f} | {r['sample_bytes_received'] / 1e3:.0f} / "
              f"{r['predicted_sample_bytes'] / 1e3:.0f} ({ratio(r['sample_bytes_received'], r['predicted_sample_bytes'])}) | "
              f"{r['fetch_bytes_received'] / 1e3:.0f} / {r['predicted_fetch_bytes'] / 1e3:.0f} "
              f"({ratio(r['fetch_bytes_received'], r['predicted_fetch_bytes'])}) |")
    if a.json:
        write_json(a.json, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
