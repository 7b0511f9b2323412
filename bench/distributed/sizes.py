"""Per-minibatch sizes of GraphSAGE sampling on a dataset: what the scale-out model
(model.py) scales. Samples `--batches` minibatches with the single-process NeighborLoader
(no features) and records, per batch and layer, the dst, src and edge counts, and the words a
graph-partitioned layer moves: the in-degrees of the frontier (whole rows fetched from their
owners) against the sampled edges (what an owner-side draw would return).

    python bench/distributed/sizes.py DATASET --fanouts 15,10,5 --batch-size 1024 --batches 20 -o sizes.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

import graphtier


def measure(path: str, fanouts, batch_size: int, batches: int, seed: int) -> dict:
    ds = graphtier.Dataset(path)
    indptr = np.memmap(os.path.join(path, "indptr.bin"), dtype=np.int64, mode="r")
    degree = np.diff(indptr)
    split = "train"
    try:
        ds.split(split)
    except ValueError:
        split = None
    loader = graphtier.NeighborLoader(ds, fanouts, batch_size, split=split, seed=seed, features=False)
    per_batch = []
    start = time.perf_counter()
    for i, batch in enumerate(loader):
        if i == batches:
            break
        layers = []
        for block in batch.blocks:
            dst = block.src_nodes[:block.num_dst].numpy()
            layers.append({"dst": int(block.num_dst), "src": block.num_src, "edges": block.num_edges,
                           "frontier_degree_sum": int(degree[dst].sum())})
        per_batch.append({"seeds": int(batch.num_seeds), "input_nodes": int(batch.input_nodes.numel()),
                          "layers": layers})
    seconds = time.perf_counter() - start
    mean = lambda key, l=None: float(np.mean([b[key] if l is None else b["layers"][l][key] for b in per_batch]))  # noqa: E731
    return {
        "dataset": path, "num_nodes": ds.num_nodes, "num_edges": ds.num_edges,
        "average_degree": ds.num_edges / max(ds.num_nodes, 1),
        "fanouts": list(fanouts), "batch_size": batch_size, "batches": len(per_batch),
        "sample_seconds_cpu": seconds,
        "mean": {"input_nodes": mean("input_nodes"),
                 "layers": [{k: mean(k, l) for k in ("dst", "src", "edges", "frontier_degree_sum")}
                            for l in range(len(fanouts))]},
        "per_batch": per_batch,
    }


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("dataset")
    p.add_argument("--fanouts", default="15,10,5")
    p.add_argument("--batch-size", type=int, default=1024)
    p.add_argument("--batches", type=int, default=20)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("-o", "--out", required=True)
    a = p.parse_args(argv)
    result = measure(a.dataset, [int(f) for f in a.fanouts.split(",")], a.batch_size, a.batches, a.seed)
    tmp = a.out + ".tmp"
    with open(tmp, "w") as f:
        json.dump(result, f, indent=1)
    os.replace(tmp, a.out)
    m = result["mean"]
    print(f"{a.dataset}: {result['batches']} batches, input nodes {m['input_nodes']:.0f}, "
          + ", ".join(f"layer {l}: dst {x['dst']:.0f} edges {x['edges']:.0f} rows {x['frontier_degree_sum']:.0f}"
                      for l, x in enumerate(m["layers"])), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
