"""Node minibatches/s: PyG's own `torch_geometric.loader.NodeLoader` over graphtier's PyG stores and
sampler (graphtier.pyg_store: FeatureStore, GraphStore, BaseSampler) against graphtier's own loader
with PyG's batch layout (graphtier.pyg.NeighborLoader), and the engine's loader as it hands batches
out (graphtier.NeighborLoader: blocks and x, no PyG Data); where PyG's own sampler is installed
(pyg-lib or torch-sparse, which PyPI has no wheels of), also PyG's `NeighborLoader` over graphtier's
two stores, sampling with PyG's sampler over the GraphStore's CSC. Same dataset, seeds (the train split or,
with --seeds all, every node), fanouts, batch size, shuffle and seed; features gathered for every
sampled node through a graphtier FeatureStore holding every row in memory. Rounds alternate the
loaders in one process; each round times each loader for --seconds, in passes of --batches
minibatches. Runs in a torch 2.x venv with torch_geometric (scripts/setup-torch2.sh) and the
graphtier package installed there:

    python bench/sample/pyg_store_bench.py DATASET [--fanouts 10,10] [--batch-size 512] [--batches 40]
        [--rounds 3] [--seconds 3] [--seeds train|all]
"""

import argparse
import json
import time

import torch
import torch_geometric.typing
from torch_geometric.loader import NeighborLoader as PygNeighborLoader
from torch_geometric.loader import NodeLoader

import graphtier
from graphtier.pyg import NeighborLoader
from graphtier.pyg_store import GraphtierFeatureStore, GraphtierGraphStore, GraphtierSampler


def rate(loader, batches: int, seconds: float) -> float:
    """Minibatches/s over passes of `batches` minibatches (each a new epoch of `loader`), for at
    least `seconds`."""
    done, start = 0, time.perf_counter()
    while True:
        for k, _ in enumerate(loader):
            done += 1
            if k + 1 == batches:
                break
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return done / elapsed


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("dataset")
    p.add_argument("--fanouts", default="10,10")
    p.add_argument("--batch-size", type=int, default=512)
    p.add_argument("--batches", type=int, default=40)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--seconds", type=float, default=3.0, help="each loader's time in a round (whole passes)")
    p.add_argument("--seeds", choices=("train", "all"), default="train", help="the train split or every node")
    p.add_argument("--threads", type=int, default=1,
                   help="PyTorch's threads, the feature store's and graphtier's sampling threads")
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    fanouts = [int(f) for f in a.fanouts.split(",")]
    ds = graphtier.Dataset(a.dataset)
    store = graphtier.FeatureStore(ds, threads=a.threads, cpu_buffer="100%")
    fs, gs = GraphtierFeatureStore(ds, store=store), GraphtierGraphStore(ds)
    seeds = ds.split("train") if a.seeds == "train" else torch.arange(ds.num_nodes)
    batches = min(a.batches, seeds.numel() // a.batch_size)
    if batches < 1:
        raise SystemExit(f"pyg_store_bench: {seeds.numel()} seeds make no batch of {a.batch_size}")

    loaders = {
        "pyg NodeLoader over graphtier stores": lambda: NodeLoader(
            (fs, gs), node_sampler=GraphtierSampler(ds, fanouts, seed=0, ids_numbering="prepared"), input_nodes=seeds,
            batch_size=a.batch_size, shuffle=True),
        "graphtier.pyg.NeighborLoader": lambda: NeighborLoader(
            ds, fanouts, input_nodes=seeds, batch_size=a.batch_size, shuffle=True, seed=0, store=store,
            sample_threads=a.threads, ids_numbering="prepared"),
        "graphtier.NeighborLoader": lambda: graphtier.NeighborLoader(
            ds, fanouts, a.batch_size, ids=seeds, shuffle=True, seed=0, store=store, sample_threads=a.threads,
            ids_numbering="prepared"),
    }
    if torch_geometric.typing.WITH_PYG_LIB or torch_geometric.typing.WITH_TORCH_SPARSE:
        loaders["pyg NeighborLoader (PyG's sampler) over graphtier stores"] = lambda: PygNeighborLoader(
            (fs, gs), num_neighbors=fanouts, input_nodes=seeds, batch_size=a.batch_size, shuffle=True)
    else:
        print("pyg_store_bench: PyG's own sampler (pyg-lib or torch-sparse) is not installed: its NeighborLoader "
              "over graphtier's stores is not timed", flush=True)
    rates = {name: [] for name in loaders}
    for r in range(a.rounds):
        for name, make in loaders.items():
            rates[name].append(rate(make(), batches, a.seconds))
        print(f"round {r}: " + ", ".join(f"{name} {v[-1]:.1f}" for name, v in rates.items()) + " batches/s", flush=True)
    best = {name: max(v) for name, v in rates.items()}
    print(json.dumps({"dataset": ds.name, "nodes": ds.num_nodes, "edges": ds.num_edges, "feature_dim": ds.feature_dim,
                      "seeds": a.seeds, "fanouts": fanouts, "batch_size": a.batch_size, "batches": batches,
                      "threads": a.threads,
                      "batches_per_second": rates,
                      "pyg_loader_over_graphtier_pyg": best["pyg NodeLoader over graphtier stores"]
                      / best["graphtier.pyg.NeighborLoader"]}))


if __name__ == "__main__":
    main()
