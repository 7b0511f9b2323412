"""The closing table of scripts/gpu-check.sh: every GPU figure next to its floor (the machine's
limit) or its peer (the path a user has without graphtier), as a ratio, with its target.

    python3 scripts/gpu_table.py OUT_DIR        (reads the JSON files the phases left there)

A figure whose phase did not run, or failed, is listed as missing rather than left out.
"""

import json
import os
import sys


def load(out: str, name: str):
    try:
        with open(os.path.join(out, name)) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def fmt(x: float, unit: str) -> str:
    for scale, prefix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "K")):
        if abs(x) >= scale:
            return f"{x / scale:.2f} {prefix}{unit}"
    return f"{x:.2f} {unit}"


def rows(out: str):
    """(figure, measured, floor or peer, ratio, target) tuples; None values where missing."""
    sample = load(out, "bench-sample.json")
    if sample:
        cpu = next((r for r in sample["rows"] if r["backend"] == "cpu"), None)
        for topology, target in (("device", 10.0), ("pinned", 1.0)):
            gpu = [r for r in sample["rows"] if r["backend"] == "gpu" and r["topology"] == topology and r["batches"]]
            best = max(gpu, key=lambda r: r["edges_per_second"], default=None)
            name = {"device": "neighbour sampling, topology in HBM", "pinned": "neighbour sampling, topology pinned (UVA)"}
            if best and cpu:
                yield (f"{name[topology]} ({best['threads']} streams), sampled edges/s",
                       fmt(best["edges_per_second"], "edges/s"),
                       f"CPU sampler, {cpu['threads']} threads: {fmt(cpu['edges_per_second'], 'edges/s')}",
                       best["edges_per_second"] / cpu["edges_per_second"], target)
            else:
                yield (name[topology], None, None, None, target)
    else:
        yield ("neighbour sampling (bench sample)", None, None, None, 10.0)

    layer = load(out, "layer-bench.json")
    for method, name in (("ladies", "LADIES"), ("fastgcn", "FastGCN")):
        runs = {r["backend"]: r for r in layer or [] if r["method"] == method}
        if "cuda" in runs and "cpu" in runs:
            gpu, cpu = runs["cuda"], runs["cpu"]
            yield (f"{name}, layers {'/'.join(map(str, gpu['layer_sizes']))}, batch {gpu['batch']}, block edges/s",
                   fmt(gpu["block_edges_per_second"], "edges/s"),
                   f"CPU sampler, {cpu['threads']} threads: {fmt(cpu['block_edges_per_second'], 'edges/s')}",
                   gpu["block_edges_per_second"] / cpu["block_edges_per_second"], 10.0)
        else:
            yield (f"{name} (layer_sampler_bench)", None, None, None, 10.0)

    feat = load(out, "feature-bench.json")
    if feat:
        for row in feat.get("pinned_tier", []):
            best = max(row["zero_copy"], row["cpu_copy"])
            yield (f"pinned tier, {row['row_bytes']} B rows (zero-copy share {row['zero_copy_fraction']:.2f})",
                   fmt(row["measured"], "B/s"), f"max(zero-copy, CPU gather + copy): {fmt(best, 'B/s')}",
                   row["measured"] / best, 0.9)
        hot = feat.get("gpu_tier")
        if hot:
            yield (f"HBM hot tier, {hot['row_bytes']} B rows", fmt(hot["bytes_per_second"], "B/s"),
                   f"device-to-device copy: {fmt(feat['d2d_bytes_per_second'], 'B/s')}", hot["over_d2d"], 0.8)
            if "d2d_same_size_bytes_per_second" in hot:
                yield (f"HBM hot tier, device ids, {fmt(hot['request_bytes'], 'B')} per call",
                       fmt(hot["device_ids_bytes_per_second"], "B/s"),
                       f"device-to-device copy of that size: {fmt(hot['d2d_same_size_bytes_per_second'], 'B/s')}",
                       hot["device_ids_over_d2d_same_size"], 0.8)
        hit = feat.get("gpu_cache_hits")
        if hit:
            yield (f"GPU cache, all hits, {hit['row_bytes']} B rows", fmt(hit["rows_per_second"], "rows/s"),
                   f"pinned tier: {fmt(hit['pinned_rows_per_second'], 'rows/s')}", hit["over_pinned"], 10.0)
            if "device_ids_rows_per_second" in hit:
                yield (f"GPU cache, all hits, {hit['row_bytes']} B rows, device ids",
                       fmt(hit["device_ids_rows_per_second"], "rows/s"),
                       f"pinned tier: {fmt(hit['pinned_rows_per_second'], 'rows/s')}",
                       hit["device_ids_over_pinned"], 10.0)
        else:
            yield ("GPU cache hits", None, None, None, 10.0)
        storage = feat.get("storage_tier")
        if storage:
            yield (f"storage tier, 4 KiB rows, depth {storage['depth']}", fmt(storage["iops"], "IOPS"),
                   f"raw io_uring 4 KiB reads: {fmt(storage['raw_4k_iops'], 'IOPS')}", storage["over_raw"], None)
        every = feat.get("all_tiers")
        if every:
            yield ("all tiers, power-law ids, 512 B rows", fmt(every["bytes_per_second"], "B/s"),
                   f"CPU gather + copy of the whole table: {fmt(every['plain_path_bytes_per_second'], 'B/s')}",
                   every["over_plain"], None)
    else:
        yield ("feature tiers (feature_cuda_bench)", None, None, None, None)

    e2e = load(out, "epoch-bench.json")
    if e2e:
        base = next((v for k, v in e2e.items() if k.startswith("baseline")), None)
        full = next((v for k, v in e2e.items() if not k.startswith("baseline")), None)
        if base and full:
            yield ("end to end, features 2x the GPU budget, epoch seconds", f"{full['seconds']:.2f} s",
                   f"CPU sampler + index_select + .to(cuda): {base['seconds']:.2f} s", base["seconds"] / full["seconds"], 5.0)
            yield ("end to end, GPU busy share", f"{100 * full['busy_fraction']:.0f}%", "the whole epoch", full["busy_fraction"], 0.8)
    else:
        yield ("end to end (epoch_bench)", None, None, None, 5.0)


def main() -> int:
    out = sys.argv[1] if len(sys.argv) > 1 else "gpu-check-out"
    print("| figure | measured | floor or peer | ratio | target | met |")
    print("|---|---|---|---|---|---|")
    for figure, measured, floor, ratio, target in rows(out):
        if measured is None:
            print(f"| {figure} | missing (its phase did not run or failed) | | | {'' if target is None else f'>= {target:g}'} | no |")
            continue
        met = "" if target is None else ("yes" if ratio >= target else "no")
        print(f"| {figure} | {measured} | {floor} | {ratio:.2f} | {'' if target is None else f'>= {target:g}'} | {met} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
