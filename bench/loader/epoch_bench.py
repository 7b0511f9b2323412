"""End-to-end epoch time of GraphSAGE training through graphtier's loader against the pipeline a
user has without it (graphtier's CPU sampler + x_cpu.index_select(0, idx).to(device)), and with the
storage-access accumulator and the look-ahead window each turned off.

    .venv/bin/python bench/loader/epoch_bench.py --dataset DIR [--device cuda] \
        [--gpu-hot 10%] [--gpu-cache 10%] [--cpu-buffer 10%] [--host-cache 0] \
        [--configs full,no-accumulator,no-window,both-off,baseline]

Each configuration trains `--epochs` epochs (no evaluation) and reports its last, so the first
epoch's cache warm-up is left out; busy = the share of the epoch spent in forward/backward/step
(on a GPU: their time on the device, from CUDA events).
Timings, not a test: nothing here asserts.
"""

import argparse
import json
import sys

from graphtier import train


CONFIGS = ["full", "no-accumulator", "no-window", "both-off", "baseline"]
BASELINE = "baseline: CPU sampler + index_select + copy"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dataset", required=True)
    p.add_argument("--device", default="cpu")
    p.add_argument("--fanouts", default="15,10,5")
    p.add_argument("--batch-size", default="1024")
    p.add_argument("--epochs", default="2")
    p.add_argument("--hidden", default="256")
    p.add_argument("--gpu-hot", default="0")
    p.add_argument("--gpu-cache", default="0")
    p.add_argument("--cpu-buffer", default="10%")
    p.add_argument("--host-cache", default="10%")
    p.add_argument("--threads", default="0")
    p.add_argument("--gpu-sampling", action="store_true")
    p.add_argument("--json", default=None)
    p.add_argument("--configs", default=",".join(CONFIGS), help="which configurations, comma-separated")
    a = p.parse_args()
    chosen = a.configs.split(",")
    unknown = sorted(set(chosen) - set(CONFIGS))
    if unknown or "baseline" not in chosen:
        p.error(f"--configs: {', '.join(unknown) or 'baseline missing'} (choose from {', '.join(CONFIGS)}; "
                "baseline is the reference)")

    common = [a.dataset, "--fanouts", a.fanouts, "--batch-size", a.batch_size, "--epochs", a.epochs,
              "--hidden", a.hidden, "--device", a.device, "--threads", a.threads, "--no-eval", "--quiet"]
    tiers = ["--gpu-hot", a.gpu_hot, "--gpu-cache", a.gpu_cache, "--cpu-buffer", a.cpu_buffer,
             "--host-cache", a.host_cache] + (["--gpu-sampling"] if a.gpu_sampling else [])
    configs = {
        "full": ("graphtier (window 4, accumulator)", tiers),
        "no-accumulator": ("graphtier, accumulator off", tiers + ["--no-accumulate"]),
        "no-window": ("graphtier, window off", tiers + ["--window", "0"]),
        "both-off": ("graphtier, both off", tiers + ["--window", "0", "--no-accumulate"]),
        "baseline": (BASELINE, ["--baseline"]),
    }
    rows = {}
    for name, extra in (configs[c] for c in CONFIGS if c in chosen):
        print(f"running {name} ...", file=sys.stderr, flush=True)
        result = train.run(train.parse_args(common + extra))
        last = result["epochs"][-1]
        f = last["loader"]["features"]
        rows[name] = {"seconds": last["seconds"], "batches_per_second": last["batches_per_second"],
                      "busy_fraction": last["busy_fraction"], "gathers": last["loader"]["gathers"],
                      "batches": last["loader"]["batches"], "storage_rows": f["storage"]["rows"],
                      "iops": f["io"]["iops"], "io_reads": f["io"]["reads"]}
    base = rows[BASELINE]["seconds"]
    print(f"| configuration | epoch s | batches/s | busy | gathers/batches | storage rows | IOPS | speed-up vs baseline |")
    print("|---|---|---|---|---|---|---|---|")
    for name, r in rows.items():
        print(f"| {name} | {r['seconds']:.2f} | {r['batches_per_second']:.2f} | {100 * r['busy_fraction']:.0f}% | "
              f"{r['gathers']}/{r['batches']} | {r['storage_rows']} | {r['iops'] / 1e3:.1f}K | "
              f"{base / r['seconds']:.2f}x |")
    if a.json:
        with open(a.json, "w") as out:
            json.dump(rows, out, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
