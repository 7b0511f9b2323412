"""Heterogeneous neighbour sampling: graphtier's per-relation sampler against DGL GraphBolt's
(FusedCSCSamplingGraph.sample_neighbors + unique_and_compact_csc_formats per layer, the two steps
of GraphBolt's NeighborSampler datapipe) on the same typed graph, seed set and per-relation fanouts,
with 1 and 2 threads, as seeds/s and their ratio taken in one run.

    python bench/sample/hetero_sampler_bench.py DATASET [--fanouts 15,10] [--batch 1024] [--seconds 5]

DATASET is a typed graphtier dataset (e.g. `graphtier generate --schema igbh`, or `convert
typed-edge-list`); both samplers read its CSC, type_per_edge and node type ranges, each relation
takes the hop's fanout, seeds are the labelled type's training ids, shuffled, in batches.
graphtier's row is `graphtier bench sample -j THREADS --json` (its sampler built once, one batch per
thread, as the loader runs it; $GRAPHTIER_CLI or build/cpu/graphtier); GraphBolt runs its operators
with `torch.set_num_threads(THREADS)` (its sampling is parallel inside one call). Runs in the DGL
venv (scripts/setup-dgl.sh). Prints one JSON line per thread count and one summary line.
"""

import argparse
import json
import os
import subprocess
import time

import torch

import dgl.graphbolt as gb

import graphtier
from peer_inputs import read_csc, seed_batches  # this directory (the script's) is on sys.path

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def graphbolt_graph(manifest, indptr, indices, types):
    hetero = manifest["hetero"]
    node_types = {t["name"]: i for i, t in enumerate(hetero["node_types"])}
    relations = {r["name"]: i for i, r in enumerate(hetero["relations"])}
    return gb.fused_csc_sampling_graph(indptr, indices.to(torch.int64),
                                       node_type_offset=torch.tensor(hetero["node_type_offset"]),
                                       type_per_edge=types.to(torch.int64), node_type_to_id=node_types,
                                       edge_type_to_id=relations)


def graphbolt_batch(graph, labelled, seeds, fanouts):
    """GraphBolt's NeighborSampler on one batch: per layer sample_neighbors, then
    unique_and_compact_csc_formats, whose unique nodes are the next layer's seeds. Returns the
    number of sampled edges."""
    nodes = {labelled: seeds}
    edges = 0
    for fanout in fanouts:
        subgraph = graph.sample_neighbors(nodes, fanout)
        edges += sum(int(csc.indices.numel()) for csc in subgraph.sampled_csc.values())
        nodes, _ = gb.unique_and_compact_csc_formats(subgraph.sampled_csc, nodes)
    return edges


def graphtier_row(dataset, fanouts, batch, seconds, threads):
    """`graphtier bench sample`'s CPU row: seeds/s, edges/s, edges per seed."""
    cli = os.environ.get("GRAPHTIER_CLI", os.path.join(ROOT, "build", "cpu", "graphtier"))
    run = subprocess.run([cli, "-q", "--json", "-j", str(threads), "bench", "sample", "-d", dataset, "--fanouts", fanouts,
                          "--batch-size", str(batch), "--seconds", str(seconds)], capture_output=True, text=True,
                         check=True)
    row = next(r for r in json.loads(run.stdout)["rows"] if r["backend"] == "cpu")
    return {"seeds_per_s": row["seeds_per_second"], "edges_per_s": row["edges_per_second"],
            "edges_per_seed": row["edges_per_second"] / row["seeds_per_second"]}


def run_for(seconds, work):
    """Runs work(k) for k = 0, 1, ... for `seconds`; (batches, edges, elapsed)."""
    batches = edges = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        edges += work(batches)
        batches += 1
    return batches, edges, time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dataset")
    parser.add_argument("--fanouts", default="15,10", help="per hop, seeds' hop first; every relation takes it")
    parser.add_argument("--batch", type=int, default=1024)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--threads", default="1,2")
    args = parser.parse_args()
    fanouts = [int(f) for f in args.fanouts.split(",")]

    manifest, indptr, indices, types = read_csc(args.dataset, typed=True)
    hetero = manifest["hetero"]
    relations = len(hetero["relations"])
    labelled = hetero["labelled_type"]
    dataset = graphtier.Dataset(args.dataset)
    offset = hetero["node_type_offset"][[t["name"] for t in hetero["node_types"]].index(labelled)]
    batches = seed_batches(dataset, args.batch, args.dataset)
    graph = graphbolt_graph(manifest, indptr, indices, types)
    fanout_tensors = [torch.full((relations,), f, dtype=torch.int64) for f in fanouts]

    results = []
    for threads in [int(t) for t in args.threads.split(",")]:
        torch.set_num_threads(threads)
        n, e, s = run_for(args.seconds, lambda k: graphbolt_batch(
            graph, labelled, batches[k % len(batches)] - offset, fanout_tensors))
        bolt = {"seeds_per_s": n * args.batch / s, "edges_per_s": e / s, "edges_per_seed": e / (n * args.batch)}
        ours = graphtier_row(args.dataset, args.fanouts, args.batch, args.seconds, threads)
        row = {"threads": threads, "graphtier": ours, "graphbolt": bolt,
               "ratio": ours["seeds_per_s"] / bolt["seeds_per_s"]}
        results.append(row)
        print(json.dumps(row))
    print(f"hetero sampling, {os.path.basename(os.path.normpath(args.dataset))}: {manifest['num_nodes']} nodes, "
          f"{manifest['num_edges']} edges, {relations} relations, fanouts {args.fanouts}, batch {args.batch}: " +
          ", ".join(f"{r['threads']} thread(s) graphtier/GraphBolt {r['ratio']:.2f}x" for r in results))


if __name__ == "__main__":
    main()
