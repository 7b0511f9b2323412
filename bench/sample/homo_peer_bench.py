"""Homogeneous GraphSAGE sampling through the Python loaders: graphtier.NeighborLoader against DGL's
classic sampler (dgl.dataloading.NeighborSampler.sample_blocks: sample_neighbors + to_block per
layer) and GraphBolt's (FusedCSCSamplingGraph.sample_neighbors + unique_and_compact_csc_formats per
layer, the two steps of its NeighborSampler datapipe), on the same graph, seeds, fanouts and batch
size, at 1 and 2 threads, in interleaved rounds; minibatches per second and their ratios, and the
sampled edges per layer of each (the same distribution: within 0.5%).

    python bench/sample/homo_peer_bench.py DATASET [--fanouts 15,10,5] [--batch 1024]
        [--seconds 5] [--rounds 3] [--threads 1,2]

Fanouts are PyG's order (the seeds' hop first; DGL's list is the reverse). graphtier's row is what
users run: `NeighborLoader(..., features=False, sample_threads=THREADS)` iterated from Python (its
pool samples a batch per thread, a worker thread hands them over). DGL and GraphBolt run their
operators in the calling thread with `torch.set_num_threads(THREADS)` (their sampling is parallel
inside one call: OpenMP / at::parallel_for). Runs in the DGL venv (scripts/setup-dgl.sh); prints
one JSON line per round and thread count (with graphtier's scaling over its first thread count,
from back-to-back runs of the round), and a summary line of the median ratios.
"""

import argparse
import json
import os
import statistics
import time

import torch

import dgl
import dgl.graphbolt as gb

import graphtier
from graphtier.training import write_json
from peer_inputs import read_csc, seed_batches  # this directory (the script's) is on sys.path


class Graphtier:
    name = "graphtier"

    def __init__(self, dataset, fanouts, batch, threads):
        self.loader = graphtier.NeighborLoader(dataset, fanouts, batch, split="train", features=False,
                                               sample_threads=threads, shuffle=True, drop_last=True, seed=0)
        self.batches = iter(())

    def next(self):
        batch = next(self.batches, None)
        if batch is None:
            self.batches = iter(self.loader)
            batch = next(self.batches)
        return [block.num_edges for block in batch.blocks]  # seeds' hop first

    def close(self):
        self.batches = None


class Dgl:
    name = "dgl"

    def __init__(self, csc, fanouts, seeds):
        indptr, indices = csc
        self.graph = dgl.graph(("csc", (indptr, indices, torch.empty(0, dtype=torch.int64))))
        self.sampler = dgl.dataloading.NeighborSampler(list(reversed(fanouts)))
        self.seeds, self.k = seeds, 0

    def next(self):
        _, _, blocks = self.sampler.sample_blocks(self.graph, self.seeds[self.k % len(self.seeds)])
        self.k += 1
        return [block.num_edges() for block in reversed(blocks)]

    def close(self):
        pass


class GraphBolt:
    name = "graphbolt"

    def __init__(self, csc, fanouts, seeds):
        indptr, indices = csc
        self.graph = gb.fused_csc_sampling_graph(indptr, indices)
        self.fanouts = [torch.tensor([f]) for f in fanouts]
        self.seeds, self.k = seeds, 0

    def next(self):
        nodes = self.seeds[self.k % len(self.seeds)]
        self.k += 1
        edges = []
        for fanout in self.fanouts:
            subgraph = self.graph.sample_neighbors(nodes, fanout)
            edges.append(int(subgraph.sampled_csc.indices.numel()))
            nodes, _ = gb.unique_and_compact_csc_formats(subgraph.sampled_csc, nodes)
        return edges

    def close(self):
        pass


def timed(sampler, seconds):
    """Batches per second over `seconds` (after 2 of warm-up) and the mean edges per layer."""
    for _ in range(2):
        sampler.next()
    n, edges = 0, None
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        layer = sampler.next()
        edges = layer if edges is None else [a + b for a, b in zip(edges, layer)]
        n += 1
    elapsed = time.perf_counter() - start
    return {"batches_per_s": n / elapsed, "edges_per_layer": [e / n for e in edges]}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dataset")
    parser.add_argument("--fanouts", default="15,10,5", help="per hop, the seeds' hop first")
    parser.add_argument("--batch", type=int, default=1024)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--json", help="write every row here")
    args = parser.parse_args()
    fanouts = [int(f) for f in args.fanouts.split(",")]

    manifest, indptr, indices = read_csc(args.dataset, typed=False)
    dataset = graphtier.Dataset(args.dataset)
    seeds = seed_batches(dataset, args.batch, args.dataset)

    threads_list = [int(t) for t in args.threads.split(",")]
    peers = (lambda: Dgl((indptr, indices), fanouts, seeds), lambda: GraphBolt((indptr, indices), fanouts, seeds))

    def run(make, threads):
        torch.set_num_threads(threads)
        sampler = make()
        result = timed(sampler, args.seconds)
        sampler.close()
        return sampler.name, result

    rows = []
    for r in range(args.rounds):
        # The peers at the first thread count, graphtier at every count back to back (its scaling is
        # their ratio: runs tens of seconds apart met a machine whose speed drifted 1.3x), the peers
        # at the other counts.
        order = [(make, threads_list[0]) for make in peers]
        order += [(lambda t=t: Graphtier(dataset, fanouts, args.batch, t), t) for t in threads_list]
        order += [(make, t) for t in threads_list[1:] for make in peers]
        round_rows = {t: {"round": r, "threads": t} for t in threads_list}
        for make, threads in order:
            name, result = run(make, threads)
            round_rows[threads][name] = result
        base = round_rows[threads_list[0]]["graphtier"]["batches_per_s"]
        for threads in threads_list:
            row = round_rows[threads]
            ours = row["graphtier"]
            for peer in ("dgl", "graphbolt"):
                row[f"vs_{peer}"] = ours["batches_per_s"] / row[peer]["batches_per_s"]
                row[f"edges_vs_{peer}"] = [a / b for a, b in zip(ours["edges_per_layer"], row[peer]["edges_per_layer"])]
            row["scaling"] = ours["batches_per_s"] / base  # over graphtier at the first thread count
            rows.append(row)
            print(json.dumps(row), flush=True)
    if args.json:
        write_json(args.json, rows)
    name = os.path.basename(os.path.normpath(args.dataset))
    summary = []
    for threads in threads_list:
        mine = [row for row in rows if row["threads"] == threads]
        med = {key: statistics.median(row[key] for row in mine) for key in ("vs_dgl", "vs_graphbolt")}
        rate = statistics.median(row["graphtier"]["batches_per_s"] for row in mine)
        scaling = statistics.median(row["scaling"] for row in mine)
        summary.append(f"{threads} thread(s): graphtier {rate:.1f} batches/s ({scaling:.2f}x its {threads_list[0]}), "
                       f"{med['vs_dgl']:.2f}x DGL, {med['vs_graphbolt']:.2f}x GraphBolt")
    print(f"{name}: {manifest['num_nodes']} nodes, {manifest['num_edges']} edges, fanouts {args.fanouts}, "
          f"batch {args.batch}, medians of {args.rounds} rounds: " + "; ".join(summary))


if __name__ == "__main__":
    main()
