"""Bytes a graph-partitioned DistSampler moves per layer, against the sampled edges' bytes, with
the layers drawn by the owners of the rows (issue 28) and with whole rows fetched (before).

P Gloo processes (c = 1: every rank's topology is one block row of P) each sample `--steps`
minibatches of GraphSAGE (bulk 0, one minibatch per exchange; `--bulk k`: the bulk matrix sampler,
k minibatches per exchange) on a generated power-law graph
(`graphtier generate`, R-MAT): with owner_draws=False (row fetch), without and with the rows of
earlier layers kept, with those and the row cache across calls (`--row-cache` bytes: RowCache), and
with the cost model's pick (the owners draw every layer whose fanout is >= 1). Per layer, summed
over the ranks:
  moved          the bytes the ranks received from other ranks in the layer's exchanges
                 (requests and replies; as much is sent as is received)
  sampled        16 bytes (neighbour id and edge id, int64: what a block holds per edge) per
                 sampled edge whose dst node's row lies in another process row (the part of
                 the blocks that must cross)
  packed         those edges packed as the owners' draws cross (_core.pack_draws, per minibatch
                 and layer: the smallest form of the sample the exchanges use; LADIES' blocks
                 have no edge ids: their neighbour ids packed as rows)
and moved / sampled, the goal being <= 1.5, and moved / packed. Requests and replies cross packed
(DistSampler(packed=True), graphtier/sample/row_wire.hpp), or with `--plain` plain (the
sampler's default: node ids as int32, positions as int64; as int64 everywhere before 2026-12-02). Also the seconds per minibatch of sampling (mean over the ranks and steps), on
whatever the machine is doing besides.

    python bench/distributed/sample_traffic.py --work /tmp/traffic [--nodes 200K --edges 4M --fanouts 10,5]
        [--row-cache 67108864] [--bulk 4] [--method ladies --fanouts 512,512] [--plain]
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

import torch

from graphtier import _core
from graphtier.training import write_json
from spawn_ranks import graph_arguments, spawn_ranks  # this directory (the script's) is on sys.path

_EDGE_BYTES = 16
# (name, owner_draws, forget the rows of earlier layers, row cache across calls)
VARIANTS = (("rows", False, True, False), ("cached_rows", False, False, False), ("call_cache", False, False, True),
            ("draws", None, False, False))
NAMES = tuple(v[0] for v in VARIANTS)


def _worker(rank, world, port, part_dir, args, queue):
    import torch.distributed as dist
    from datetime import timedelta

    from graphtier.distributed import Partition, ProcessGrid, grid_groups
    from graphtier.distributed.sampler import DistSampler

    class LayerCounting(DistSampler):
        """Counts each layer's received bytes (the exchanges of `_layer`); `forget` drops the rows
        fetched for earlier layers (with no row cache: the row fetch before issue 28)."""

        forget = False

        def _layer(self, dst, streams, layer, held):
            before = self.stats.as_dict()["bytes_received"]
            out = super()._layer(dst, streams, layer, None if self.forget else held)
            self.layer_bytes[layer] += self.stats.as_dict()["bytes_received"] - before
            if out[1] is not None and layer == len(self.fanouts) - 1:
                # The rows this call held: how many the previous call held too (what a cache kept
                # across calls could save).
                nodes = out[1][0]
                if self.last_rows is not None:
                    self.reuse[0] += int(torch.isin(nodes, self.last_rows).sum())
                    self.reuse[1] += int(nodes.numel())
                self.last_rows = nodes
            return out

    torch.set_num_threads(1)
    try:
        dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world,
                                timeout=timedelta(seconds=300))
        part = Partition.open(part_dir, rank)
        grid = ProcessGrid(world, 1, rank)
        groups = grid_groups(grid)
        fanouts = [int(f) for f in args["fanouts"].split(",")]
        out = {}
        for name, owner_draws, forget, row_cache in VARIANTS:
            sampler = LayerCounting(part, grid, args["method"], fanouts, args["batch_size"], seed=0, bulk=args["bulk"],
                                    groups=groups, owner_draws=owner_draws,
                                    row_cache=args["row_cache"] if row_cache else 0, packed=not args["plain"])
            sampler.forget = forget
            sampler.last_rows, sampler.reuse = None, [0, 0]
            sampler.layer_bytes = [0] * len(fanouts)
            remote = [0] * len(fanouts)
            packed = [0] * len(fanouts)
            seconds = []
            it = sampler.epoch(0, 0, min(args["steps"], sampler.steps))
            while True:
                t0 = time.perf_counter()
                batch = next(it, StopIteration)
                if batch is StopIteration:
                    break
                seconds.append(time.perf_counter() - t0)
                for layer, block in enumerate(batch.blocks):
                    dst = block.src_nodes[:block.num_dst]
                    elsewhere = part.topology_owner_row(dst) != grid.row
                    degree = block.indptr[1:] - block.indptr[:-1]
                    remote[layer] += int(degree[elsewhere].sum())
                    crossing = torch.repeat_interleave(elsewhere, degree)
                    counts, neighbours = degree[elsewhere].contiguous(), block.src_nodes[block.indices[crossing]]
                    if block.edge_ids is not None:
                        message = _core.pack_draws(counts, neighbours, block.edge_ids[crossing].contiguous())
                    else:  # LADIES: no edge ids, the neighbours as rows (a first edge of 0 each)
                        indptr = torch.cat([torch.zeros(1, dtype=torch.int64), torch.cumsum(counts, 0)])
                        message = _core.pack_rows(indptr, neighbours, torch.zeros_like(counts))
                    packed[layer] += message.numel()
            out[name] = {"layer_bytes": sampler.layer_bytes, "remote_edges": remote, "packed_sample": packed,
                         "seconds": seconds,
                         "rows_held_by_the_previous_call": sampler.reuse,
                         "row_cache": {"hits": sampler.row_cache.hits, "misses": sampler.row_cache.misses,
                                       "bytes": sampler.row_cache.bytes}}
            dist.barrier()
        dist.destroy_process_group()
        queue.put((rank, out, None))
    except BaseException:  # noqa: BLE001 - reported by the parent
        import traceback
        queue.put((rank, None, traceback.format_exc()))


def main(argv=None) -> int:
    p = graph_arguments(__doc__, "200K", "4M")
    p.add_argument("--fanouts", default="10,5")
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--steps", type=int, default=8)
    p.add_argument("--row-cache", type=int, default=64 << 20, help="the row cache's bytes in its column")
    p.add_argument("--bulk", type=int, default=0, help="minibatches per call of the bulk matrix sampler (0: one "
                   "at a time)")
    p.add_argument("--method", default="neighbor", choices=("neighbor", "ladies"),
                   help="ladies: every variant fetches rows (the owners draw GraphSAGE only)")
    p.add_argument("--plain", action="store_true", help="plain messages (DistSampler's default: int32 node ids, "
                   "int64 positions), not packed (packed=True)")
    p.add_argument("--json")
    a = p.parse_args(argv)
    os.makedirs(a.work, exist_ok=True)
    data = os.path.join(a.work, "graph")
    if not os.path.isdir(data):
        subprocess.run([a.cli, "-q", "generate", "-o", data, "--nodes", a.nodes, "--edges", a.edges, "--no-features",
                        "--classes", "16", "--seed", "7"], check=True)
    args = {"fanouts": a.fanouts, "batch_size": a.batch_size, "steps": a.steps, "row_cache": a.row_cache,
            "bulk": a.bulk, "method": a.method, "plain": a.plain}
    fanouts = a.fanouts.split(",")
    rows = []
    print("| P | layer (fanout) | sampled edges from other rows, per minibatch | moved / sampled bytes: row fetch "
          f"| row fetch, rows kept across layers | and across calls ({a.row_cache >> 20} MiB) | owner draws "
          "| row fetch / owner draws | best / packed sample |")
    print("| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for world in (2, 4):
        part = os.path.join(a.work, f"part-{world}")
        if not os.path.isdir(part):
            subprocess.run([a.cli, "-q", "partition", "-d", data, "-o", part, "--ranks", str(world), "--replication",
                            "1", "--graph", "partitioned"], check=True, stdout=subprocess.DEVNULL)
        per_rank = spawn_ranks(_worker, part, world, args, timeout=900)
        batches = sum(len(r["rows"]["seconds"]) for r in per_rank)
        summary = {"P": world, "batches": batches, "per_rank": per_rank}
        for name in NAMES:
            summary[name] = {
                "layer_bytes": [sum(r[name]["layer_bytes"][l] for r in per_rank) for l in range(len(fanouts))],
                "remote_edges": [sum(r[name]["remote_edges"][l] for r in per_rank) for l in range(len(fanouts))],
                "packed_sample": [sum(r[name]["packed_sample"][l] for r in per_rank) for l in range(len(fanouts))],
                "seconds_per_batch": sum(sum(r[name]["seconds"]) for r in per_rank) / batches,
            }
        edges = [summary[name]["remote_edges"] for name in NAMES]
        assert all(e == edges[0] for e in edges)  # the same minibatches every way
        for l, f in enumerate(fanouts):
            sampled = _EDGE_BYTES * summary["rows"]["remote_edges"][l]
            before, after = summary["rows"]["layer_bytes"][l], summary["draws"]["layer_bytes"][l]
            cached, across = summary["cached_rows"]["layer_bytes"][l], summary["call_cache"]["layer_bytes"][l]
            print(f"| {world} | {l} ({f}) | {summary['rows']['remote_edges'][l] / batches:.0f} "
                  f"| {before / sampled:.2f} | {cached / sampled:.2f} | {across / sampled:.2f} | {after / sampled:.2f} "
                  f"| {before / after:.1f} | {min(before, cached, across, after) / summary['rows']['packed_sample'][l]:.2f} |")
        rows.append(summary)
    for s in rows:
        ms = {name: f"{s[name]['seconds_per_batch'] * 1e3:.1f}" for name in NAMES}
        print(f"P={s['P']}: sampling ms per minibatch: row fetch {ms['rows']}, rows kept {ms['cached_rows']}, "
              f"and the row cache {ms['call_cache']}, owner draws {ms['draws']} ({s['batches']} minibatches)")
        cache = [r["call_cache"]["row_cache"] for r in s["per_rank"]]
        hits, misses = sum(c["hits"] for c in cache), sum(c["misses"] for c in cache)
        print(f"P={s['P']}: the row cache served {hits} of {hits + misses} rows asked for "
              f"({hits / max(1, hits + misses):.0%}), holding {max(c['bytes'] for c in cache) / 2**20:.1f} MiB at most")
        reuse = [sum(r["cached_rows"]["rows_held_by_the_previous_call"][i] for r in s["per_rank"]) for i in (0, 1)]
        print(f"P={s['P']}: rows held (row fetch) that the previous call held too: {reuse[0]} of {reuse[1]}")
    if a.json:
        write_json(a.json, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
