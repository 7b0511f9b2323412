"""A model, not a measurement: epoch time of distributed GraphSAGE training on 8 to 1024 GPUs,
extrapolated from per-minibatch sizes measured with graphtier's sampler (sizes.py) and the rates
measured on one machine, over stated link bandwidths. It follows the matrix-based bulk sampling
paper's pipeline (docs/references.md): P GPUs in a (P/c) x c grid, the graph replicated, features
split into P/c blocks, each step one minibatch per GPU, features fetched by all-to-allv in the
process column, gradients all-reduced.

Per GPU and step (one minibatch of the measured sizes):
  sample   = sum over layers of sampled edges / SAMPLE_EDGES_PER_S (graph replicated: no messages);
             graph partitioned adds the rows fetched: (1 - c/P) of the frontier's in-degree sum,
             8 bytes a word, over the links
  fetch    = input rows not held locally, (1 - c/P) of them (features spread evenly over the
             P/c blocks), row bytes + an 8-byte id each, split between NVLink (peers in the same
             node) and InfiniBand, + ALPHA per peer of the column; local rows at HBM_GATHER_BPS
  compute  = forward + backward FLOPs of a 3-layer SAGE (two [d_in, hidden] products per node,
             the mean over edges) at COMPUTE_FLOPS
  allreduce= all-reduce of the parameters: 2 (P-1)/P of their bytes over the slowest link of the
             job, 2 log2(P) messages (tree all-reduce latency)
  step     = max(sample + fetch, compute + allreduce) + STEP_OVERHEAD_S (graphtier overlaps the
             next step's sampling and fetch with this step's compute); the paper's bulk-synchronous
             pipeline adds them; with --fit, STEP_OVERHEAD_S is the per-step cost fitted to
             this machine's measured Gloo runs (fit.py's t_step: the Python loop, autograd's set-up
             and the optimizer of a minibatch, all on the CPU on a GPU machine too)
  c        = the largest power of two dividing P whose feature block (N * dim * 4 * c / P bytes)
             fits FEATURE_MEMORY on a GPU
Parallel efficiency at P = T(8) * 8 / (T(P) * P).

    python bench/distributed/model.py --sizes products=P.json papers=Q.json protein=R.json \
        --fit scaling.json --plot docs/img/scaleout_model.png
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from dataclasses import dataclass

# Stated constants (docs/benchmarks.md, "Scale-out model", says where each comes from).
GPUS_PER_NODE = 4            # as the paper's machine (4 A100 per node, one NIC per GPU)
NVLINK_BPS = 300e9           # NVLink 3, per GPU and direction
IB_BPS = 200e9 / 8           # 200 Gb/s InfiniBand, one NIC per GPU
ALPHA_S = 10e-6              # per message (all-to-allv peer, ring step)
SAMPLE_EDGES_PER_S = 9.6e9   # measured: fanout-10 GPU sampling, 9.6e8 seeds/s with the graph in HBM
HBM_GATHER_BPS = 1.3e12      # measured: random row gather from HBM
COMPUTE_FLOPS = 10e12        # assumed effective FP32 rate of SAGE forward + backward on an A100
FEATURE_MEMORY = 20e9        # bytes of a 40 GB GPU given to the feature block
HIDDEN = 256
STEP_OVERHEAD_S = 1e-3       # assumed per step: kernel launches, the Python loop, optimizer step
SAMPLE_LAYER_OVERHEAD_S = 1e-4  # assumed per sampled layer: launches and the one synchronisation

# The paper's datasets and setup (its Tables 3 and 4) and its reported parallel efficiencies (§8.1.2).
DATASETS = {
    "products": {"nodes": 2.4e6, "edges": 126e6, "batches": 196, "dim": 100, "classes": 47, "paper_efficiency": 0.88},
    "papers": {"nodes": 111e6, "edges": 1.6e9, "batches": 1172, "dim": 128, "classes": 172, "paper_efficiency": 0.47},
    "protein": {"nodes": 8.7e6, "edges": 1.3e9, "batches": 1024, "dim": 128, "classes": 64, "paper_efficiency": 0.61},
}
GPU_COUNTS = [8, 16, 32, 64, 128, 256, 512, 1024]


@dataclass
class Step:
    c: int
    sample: float
    fetch: float
    compute: float
    allreduce: float
    fetch_bytes: float
    sample_bytes: float
    overhead: float = STEP_OVERHEAD_S

    def overlapped(self) -> float:
        return max(self.sample + self.fetch, self.compute + self.allreduce) + self.overhead

    def synchronous(self) -> float:
        return self.sample + self.fetch + self.compute + self.allreduce + self.overhead


def replication(p: int, feature_bytes: float) -> int:
    """The largest power-of-two c dividing p whose block fits FEATURE_MEMORY; 0 when none does."""
    c = p
    while c >= 1:
        if p % c == 0 and feature_bytes * c / p <= FEATURE_MEMORY:
            return c
        c //= 2
    return 0


def column_split(p: int, c: int) -> tuple:
    """(peers in the same node, peers in other nodes) of a rank's process column: its members are
    c ranks apart, ranks numbered node by node."""
    rows = p // c
    same_node = max(1, min(rows, GPUS_PER_NODE // c)) if c < GPUS_PER_NODE else 1
    return same_node - 1, rows - same_node


def link_time(bytes_total: float, p: int, c: int) -> float:
    local_peers, remote_peers = column_split(p, c)
    peers = local_peers + remote_peers
    if peers == 0:
        return 0.0
    nv = bytes_total * local_peers / peers
    ib = bytes_total * remote_peers / peers
    return max(nv / NVLINK_BPS, ib / IB_BPS) + ALPHA_S * peers


def step_time(sizes: dict, data: dict, p: int, graph: str = "replicated", overhead: float = STEP_OVERHEAD_S) -> Step:
    mean = sizes["mean"]
    feature_bytes = data["nodes"] * data["dim"] * 4
    c = replication(p, feature_bytes)
    if c == 0:
        raise ValueError("features do not fit")
    remote = 1 - c / p
    edges = sum(l["edges"] for l in mean["layers"])
    sample = edges / SAMPLE_EDGES_PER_S + SAMPLE_LAYER_OVERHEAD_S * len(mean["layers"])
    sample_bytes = 0.0
    if graph == "partitioned":
        sample_bytes = sum(8 * l["frontier_degree_sum"] + 16 * l["dst"] for l in mean["layers"]) * remote
        sample += sum(link_time(8 * l["frontier_degree_sum"] * remote + 16 * l["dst"] * remote, p, c)
                      for l in mean["layers"])
    rows = mean["input_nodes"]
    fetch_bytes = rows * remote * (data["dim"] * 4 + 8)
    fetch = link_time(fetch_bytes, p, c) + rows * (1 - remote) * data["dim"] * 4 / HBM_GATHER_BPS
    layers = mean["layers"]
    compute = sage_flops(layers, data["dim"], HIDDEN, data["classes"]) / COMPUTE_FLOPS
    slowest = NVLINK_BPS if p <= GPUS_PER_NODE else IB_BPS
    allreduce = (2 * (p - 1) / p * sage_parameters(len(layers), data["dim"], HIDDEN, data["classes"]) * 4 / slowest
                 + 2 * math.log2(p) * ALPHA_S)
    return Step(c, sample, fetch, compute, allreduce, fetch_bytes, sample_bytes, overhead)


def _layer_dims(l: int, layers: int, dim: int, hidden: int, classes: int) -> tuple:
    """(d_in, d_out) of block l: blocks[L-1] reads the features, blocks[0] writes the classes."""
    return (dim if l == layers - 1 else hidden), (classes if l == 0 else hidden)


def sage_flops(layers: list, dim: int, hidden: int, classes: int) -> float:
    """Forward + backward (3x the forward) of a SAGE minibatch: per block, the mean over its edges
    and two [d_in, d_out] products per dst node."""
    flops = 0.0
    for l, layer in enumerate(layers):
        d_in, d_out = _layer_dims(l, len(layers), dim, hidden, classes)
        flops += 2 * layer["edges"] * d_in + 2 * 2 * layer["dst"] * d_in * d_out
    return 3 * flops


def sage_parameters(layers: int, dim: int, hidden: int, classes: int) -> int:
    return sum(2 * d_in * d_out for d_in, d_out in (_layer_dims(l, layers, dim, hidden, classes)
                                                    for l in range(layers)))


def epoch_times(sizes: dict, data: dict, graph: str, overhead: float = STEP_OVERHEAD_S) -> list:
    rows = []
    for p in GPU_COUNTS:
        step = step_time(sizes, data, p, graph, overhead)
        steps = math.ceil(data["batches"] / p)
        rows.append({"gpus": p, "c": step.c, "steps": steps, "epoch_s": steps * step.overlapped(),
                     "epoch_s_synchronous": steps * step.synchronous(), "sample_s": step.sample,
                     "fetch_s": step.fetch, "compute_s": step.compute, "allreduce_s": step.allreduce,
                     "fetch_bytes": step.fetch_bytes, "sample_bytes": step.sample_bytes})
    base = rows[0]
    for r in rows:
        r["efficiency"] = base["epoch_s"] * base["gpus"] / (r["epoch_s"] * r["gpus"])
        r["efficiency_synchronous"] = base["epoch_s_synchronous"] * base["gpus"] / (r["epoch_s_synchronous"] * r["gpus"])
    return rows


def plot(results: dict, path: str, fitted: list = None, overhead: float = STEP_OVERHEAD_S) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(1, 3 if fitted else 2, figsize=(16.5 if fitted else 11, 4))
    for i, (name, rows) in enumerate(results.items()):
        color = f"C{i}"
        gpus = [r["gpus"] for r in rows]
        ax[0].loglog(gpus, [r["epoch_s"] for r in rows], "o-", color=color, label=f"{name} (overlapped)")
        ax[0].loglog(gpus, [r["epoch_s_synchronous"] for r in rows], "x--", color=color, alpha=0.6,
                     label=f"{name} (bulk synchronous)")
        ax[1].semilogx(gpus, [r["efficiency"] for r in rows], "o-", color=color, label=f"{name}: model")
        ax[1].axhline(DATASETS[name]["paper_efficiency"], color=color, ls=":",
                      label=f"{name}: paper reports {DATASETS[name]['paper_efficiency']:.0%} (its Figure 4 range)")
    ax[0].set(xlabel="GPUs", ylabel="epoch seconds (model)", title="MODEL: epoch time, graph replicated")
    ax[1].set(xlabel="GPUs", ylabel="parallel efficiency vs 8 GPUs", ylim=(0, 1.1),
              title="MODEL: parallel efficiency")
    if fitted:
        plot_fit(ax[2], fitted)
    for a in ax:
        a.grid(True, which="both", alpha=0.3)
        a.legend(fontsize=7)
    fig.suptitle("graphtier scale-out MODEL (not measured): sizes from graphtier's sampler, GPU rates measured on "
                 f"one H100 machine, NVLink 300 GB/s, InfiniBand 200 Gb/s, {overhead * 1e3:.1f} ms per step"
                 + (" (fitted on this machine's Gloo runs, right)" if fitted else ""), fontsize=9)
    fig.tight_layout()
    tmp = path + ".tmp.png"
    fig.savefig(tmp, dpi=110)
    os.replace(tmp, path)


def plot_fit(ax, rows: list) -> None:
    """Epoch seconds on this machine's 1, 2 and 4 Gloo ranks: measured (points) against the fitted
    stage model (lines), per graph mode and scaling kind."""
    series = {}
    for r in rows:
        if r["kind"] != "fit":
            for kind in (("weak", "strong") if r["P"] == 1 else (r["kind"],)):
                series.setdefault((r["graph"], kind), []).append(r)
    for i, ((graph, kind), points) in enumerate(sorted(series.items())):
        points.sort(key=lambda r: r["P"])
        ps = [r["P"] for r in points]
        ax.plot(ps, [r["epoch_s"] for r in points], "o", color=f"C{i}", label=f"{graph}, {kind}: measured")
        ax.plot(ps, [r["model_epoch_s"] for r in points], "-", color=f"C{i}", alpha=0.7,
                label=f"{graph}, {kind}: fitted model")
    ax.set(xlabel="Gloo ranks on this 2-core machine", ylabel="epoch seconds", xticks=[1, 2, 4],
           title="measured vs MODEL fitted to the stage times")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description="Extrapolate distributed epoch time (a model).")
    p.add_argument("--sizes", nargs="*", default=[], help="NAME=sizes.json, NAME in products, papers, protein")
    p.add_argument("--fit", help="scaling.py's JSON: fit the stage model to its runs, print it against them, and "
                                 "take its per-step overhead (t_step) for the extrapolation")
    p.add_argument("--graph", choices=["replicated", "partitioned"], default="replicated")
    p.add_argument("--plot")
    p.add_argument("--json")
    a = p.parse_args(argv)
    overhead, fitted = STEP_OVERHEAD_S, None
    if a.fit:
        import fit
        with open(a.fit) as f:
            rates, fitted = fit.fit(json.load(f))
        print(fit.describe(rates, fitted) + "\n")
        overhead = rates["t_step"]
    results = {}
    for item in a.sizes:
        name, _, path = item.partition("=")
        if name not in DATASETS:
            p.error(f"--sizes: unknown dataset '{name}' (expected {', '.join(DATASETS)})")
        with open(path) as f:
            results[name] = epoch_times(json.load(f), DATASETS[name], a.graph, overhead)
    print(f"MODEL (graph {a.graph}): epoch seconds, overlapped / bulk synchronous, c, efficiency vs 8 GPUs")
    print("| dataset | GPUs | c | epoch s | epoch s (sync) | sample ms | fetch ms | compute ms | allreduce ms | efficiency |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name, rows in results.items():
        for r in rows:
            print(f"| {name} | {r['gpus']} | {r['c']} | {r['epoch_s']:.3f} | {r['epoch_s_synchronous']:.3f} | "
                  f"{r['sample_s'] * 1e3:.2f} | {r['fetch_s'] * 1e3:.2f} | {r['compute_s'] * 1e3:.2f} | "
                  f"{r['allreduce_s'] * 1e3:.2f} | {r['efficiency']:.2f} |")
    if a.plot:
        plot(results, a.plot, fitted, overhead)
    if a.json:
        with open(a.json + ".tmp", "w") as f:
            json.dump(results, f, indent=1)
        os.replace(a.json + ".tmp", a.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
