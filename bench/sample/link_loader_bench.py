"""Link-prediction minibatches/s: graphtier.LinkNeighborLoader against DGL's link pipeline
(`dgl.dataloading.as_edge_prediction_sampler` over `NeighborSampler`, uniform negatives), on a
dataset split by `graphtier split-links`, with the same fanouts, batch of supervision edges, one
binary negative per positive, seed-edge exclusion (graphtier's `exclude_seed_edges`, DGL's
`exclude="reverse_id"`: the batch's edges and their reverses) and node features gathered for the
sampled nodes (graphtier's feature store with every row in memory, DGL's `prefetch_node_feats` on
the graph's `ndata`). Rounds alternate the loaders in one process; each round times one pass over
--batches minibatches; graphtier also runs without exclusion, for the cost of excluding. Runs in
the DGL venv (scripts/setup-dgl.sh) with the graphtier package installed there:

    graphtier split-links -d DATASET -o SPLIT --seed 0
    python bench/sample/link_loader_bench.py SPLIT [--fanouts 10,10] [--batch-size 512] [--batches 100] [--rounds 3]
"""

import argparse
import json
import os
import time

import dgl
import numpy as np
import torch

import graphtier
from graphtier.link import all_edges, link_edges


def dgl_graph(ds) -> tuple:
    """The dataset's message-passing graph as a DGLGraph (features in ndata['feat']), the ids of
    the train supervision edges among its edges and every edge's reverse id."""
    src, dst = all_edges(ds)
    g = dgl.graph((src, dst), num_nodes=ds.num_nodes)
    rows = np.fromfile(os.path.join(ds.path, "features.bin"), dtype=np.float32).reshape(ds.num_nodes, -1)
    g.ndata["feat"] = torch.from_numpy(rows[:, : ds.feature_dim].copy())
    n = ds.num_nodes
    key = src * n + dst
    order = torch.argsort(key)
    sorted_key = key[order]

    def eids(s, d):
        pos = torch.searchsorted(sorted_key, s * n + d)
        if not bool((sorted_key[pos.clamp(max=len(key) - 1)] == s * n + d).all()):
            raise SystemExit("link_loader_bench: a train edge is not an edge of the message-passing graph "
                             "(split with --disjoint 0)")
        return order[pos]

    train_src, train_dst = link_edges(ds, "train")
    return g, eids(train_src, train_dst), eids(dst, src)


def time_pass(loader, batches: int) -> float:
    start = time.perf_counter()
    for k, _ in enumerate(loader):
        if k + 1 == batches:
            break
    return batches / (time.perf_counter() - start)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("dataset")
    p.add_argument("--fanouts", default="10,10")
    p.add_argument("--batch-size", type=int, default=512)
    p.add_argument("--batches", type=int, default=100)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--threads", type=int, default=1,
                   help="PyTorch's threads and the feature store's (both loaders sample in the calling thread)")
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    fanouts = [int(f) for f in a.fanouts.split(",")]
    ds = graphtier.Dataset(a.dataset)
    store = graphtier.FeatureStore(ds, threads=a.threads)
    g, train_eids, reverse_eids = dgl_graph(ds)
    batches = min(a.batches, len(train_eids) // a.batch_size)

    def graphtier_loader(exclude: bool):
        return graphtier.LinkNeighborLoader(ds, fanouts, a.batch_size, edges="train", negatives="binary",
                                            exclude_seed_edges=exclude, shuffle=True, seed=0, store=store,
                                            prefetch=0)  # in the calling thread, as DGL's num_workers=0

    sampler = dgl.dataloading.as_edge_prediction_sampler(
        dgl.dataloading.NeighborSampler(fanouts, prefetch_node_feats=["feat"]), exclude="reverse_id",
        reverse_eids=reverse_eids, negative_sampler=dgl.dataloading.negative_sampler.Uniform(1))
    loaders = {
        "graphtier": lambda: graphtier_loader(True),
        "graphtier, no exclusion": lambda: graphtier_loader(False),
        "dgl": lambda: dgl.dataloading.DataLoader(g, train_eids, sampler, batch_size=a.batch_size, shuffle=True,
                                                  drop_last=False, num_workers=0),
    }
    rates = {name: [] for name in loaders}
    for r in range(a.rounds):
        for name, make in loaders.items():
            rates[name].append(time_pass(make(), batches))
        print(f"round {r}: " + ", ".join(f"{name} {v[-1]:.1f}" for name, v in rates.items()) + " batches/s", flush=True)
    best = {name: max(v) for name, v in rates.items()}
    print(json.dumps({"dataset": ds.name, "fanouts": fanouts, "batch_size": a.batch_size, "batches": batches,
                      "threads": a.threads, "batches_per_second": rates,
                      "graphtier_over_dgl": best["graphtier"] / best["dgl"],
                      "exclusion_cost": 1 - best["graphtier"] / best["graphtier, no exclusion"]}))


if __name__ == "__main__":
    main()
