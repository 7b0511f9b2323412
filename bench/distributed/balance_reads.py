"""How a partition's feature ranges share one epoch's reads: each process row's share of the input
nodes (feature rows read, with repeats) that GraphSAGE minibatches of the training ids touch, for
`--balance bytes` (equal row counts) and `--balance hotness` (equal expected reads), from the
partitions' feature_bounds (docs/format.md, "Partition directory"). The busiest row's share against
the even 1/R says how far the fetch traffic and its receiving rank are from balanced.

    python bench/distributed/balance_reads.py DATASET PARTITION... [--fanouts 15,10] [--batch 1024]
"""

import argparse
import json
import os

import torch

import graphtier


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dataset", help="the source dataset the partitions were written from")
    parser.add_argument("partitions", nargs="+", help="partition directories (graphtier partition --out)")
    parser.add_argument("--fanouts", default="15,10")
    parser.add_argument("--batch", type=int, default=1024)
    args = parser.parse_args()
    ds = graphtier.Dataset(args.dataset)
    loader = graphtier.NeighborLoader(ds, [int(f) for f in args.fanouts.split(",")], args.batch, split="train",
                                      shuffle=True, seed=0, features=False)
    reads = torch.cat([batch.input_nodes for batch in loader])
    for path in args.partitions:
        manifest = json.load(open(os.path.join(path, "rank-0000", "partition.json")))
        bounds = torch.tensor(manifest["feature_bounds"][1:-1])
        rows = torch.bucketize(reads, bounds, right=True)
        share = torch.bincount(rows, minlength=len(bounds) + 1).double() / reads.numel()
        print(json.dumps({"partition": path, "balance": manifest["balance"], "process_rows": len(bounds) + 1,
                          "reads": int(reads.numel()), "share": [round(float(s), 4) for s in share],
                          "busiest_over_even": round(float(share.max()) * (len(bounds) + 1), 2)}))


if __name__ == "__main__":
    main()
