#!/usr/bin/env bash
# Throughput of `generate` and `prepare` against this machine's limits, taken in one run:
#   1. hardware_bench: disk sequential write/read (O_DIRECT), memory copy bandwidth, random update rate;
#   2. generate + prepare (wrpr) of a 10M-node / 200M-edge power-law graph with 128-dim fp32 features;
#   3. with --large: generate + prepare of a feature table larger than RAM (default 3.4M x 2048 fp32,
#      26 GiB), with peak RSS next to the file size.
# Prints a markdown report on stdout (docs/benchmarks.md keeps the latest); progress goes to stderr.
#
#   scripts/bench-foundation.sh [--large] [--large-nodes 3400000] [--keep] DIR
#
# DIR must be on the disk being measured and hold about 12 GiB (2.2x the large table with --large).
set -euo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
large=0 large_nodes=3400000 keep=0 dir=""
while [ $# -gt 0 ]; do
  case "$1" in
    --large) large=1 ;;
    --large-nodes) large_nodes="$2"; shift ;;
    --keep) keep=1 ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) dir="$1" ;;
  esac
  shift
done
[ -n "$dir" ] || { echo "usage: $0 [--large] [--large-nodes N] [--keep] DIR" >&2; exit 2; }
mkdir -p "$dir"
dir="$(cd "$dir" && pwd)"

cmake --preset cpu -DGRAPHTIER_BENCH=ON >/dev/null
cmake --build "$repo/build/cpu" -j"$(nproc)" >&2
cli="$repo/build/cpu/graphtier"

# Runs the CLI with --json under /usr/bin/time; leaves NAME.json and NAME.rss (peak RSS, KiB) in $dir.
timed() {
  local name="$1"; shift
  echo "== $name: graphtier $*" >&2
  /usr/bin/time -f "%M" -o "$dir/$name.rss" "$cli" --json "$@" >"$dir/$name.json"
}

echo "== hardware limits" >&2
"$repo/build/cpu/bench/hardware_bench" --dir "$dir" >"$dir/hardware.json"

rm -rf "$dir/g10m" "$dir/p10m"
timed generate generate --out "$dir/g10m" --nodes 10M --edges 200M --feature-dim 128 --classes 64 --seed 1
timed prepare prepare --dataset "$dir/g10m" --out "$dir/p10m" --hotness wrpr
[ "$keep" = 1 ] || rm -rf "$dir/g10m" "$dir/p10m"

if [ "$large" = 1 ]; then
  rm -rf "$dir/glarge" "$dir/plarge"
  timed generate_large generate --out "$dir/glarge" --nodes "$large_nodes" --edges "$((large_nodes * 10))" \
    --feature-dim 2048 --classes 16 --seed 2
  timed prepare_large prepare --dataset "$dir/glarge" --out "$dir/plarge" --hotness wrpr
  [ "$keep" = 1 ] || rm -rf "$dir/glarge" "$dir/plarge"
fi

python3 - "$dir" "$large" <<'EOF'
import json, os, sys
d, large = sys.argv[1], sys.argv[2] == "1"
def load(name): return json.load(open(os.path.join(d, name + ".json")))
def rss(name): return int(open(os.path.join(d, name + ".rss")).read().split()[-1]) * 1024
hw = load("hardware")
mem_kib = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
G = 1e9
upd, wr, rd = hw["random_updates_per_second"], hw["disk_write_bytes_per_second"], hw["disk_read_bytes_per_second"]
print(f"Machine: {os.cpu_count()} cores, {mem_kib / 2**30:.1f} GiB RAM.\n")
print("| limit (hardware_bench) | measured |")
print("| --- | --- |")
print(f"| disk sequential write, O_DIRECT 16 MiB | {wr / G:.2f} GB/s |")
print(f"| disk sequential read, O_DIRECT 16 MiB, 4 in flight | {rd / G:.2f} GB/s |")
print(f"| memory copy (read + write), {hw['threads']} threads | {hw['memory_copy_bytes_per_second'] / G:.1f} GB/s |")
print(f"| random atomic updates, int32 [10M], {hw['threads']} threads | {upd / 1e6:.0f} M/s |\n")

def feature_bound(p):
    # The feature table must be read and written once in memory, twice through buckets.
    passes = 2 if p["feature_external"] else 1
    return passes * p["feature_bytes"] * (1 / rd + 1 / wr)

def report(gen_name, prep_name):
    g, p = load(gen_name), load(prep_name)
    gs, ps = g["seconds"], p["seconds"]
    print(f"Graph: {g['num_nodes']:,} nodes, {g['requested_edges']:,} requested / {g['num_edges']:,} stored edges, "
          f"{g['feature_dim']}-dim {g['feature_dtype']} features ({g['feature_dim'] * 4 * g['num_nodes'] / 2**30:.2f} GiB).\n")
    print("| stage | throughput | machine reference | ratio |")
    print("| --- | --- | --- | --- |")
    e = g["edges_per_second"]
    print(f"| generate: topology ({gs['topology']:.1f} s) | {e / 1e6:.1f} M edges/s | {upd / 2e6:.0f} M edges/s "
          f"(2 random updates per edge) | {e / (upd / 2):.2f} |")
    f = g["feature_bytes_per_second"]
    print(f"| generate: features ({gs['features']:.1f} s) | {f / G:.2f} GB/s | {wr / G:.2f} GB/s disk write | {f / wr:.2f} |")
    print(f"| generate: total | {gs['total']:.1f} s, peak RSS {rss(gen_name) / 2**30:.2f} GiB | | |")
    s = p["score_edges_per_second"]
    it = p["iterations"]
    print(f"| prepare: wrpr scores, {it} iterations + transpose ({ps['score']:.1f} s) | {s / 1e6:.1f} M edges/s | "
          f"{upd / (it + 2) / 1e6:.0f} M edges/s ({it + 2} random accesses per edge) | {s / (upd / (it + 2)):.2f} |")
    r = p["relabel_edges_per_second"]
    print(f"| prepare: relabel CSC ({ps['relabel']:.1f} s) | {r / 1e6:.1f} M edges/s | {upd / 1e6:.0f} M edges/s "
          f"(1 random read per edge) | {r / upd:.2f} |")
    fb = p["feature_bytes_per_second"]
    bound = p["feature_bytes"] / feature_bound(p)
    how = f"{p['feature_buckets']} buckets" if p["feature_external"] else "in memory"
    print(f"| prepare: permute features, {how} ({ps['features']:.1f} s) | {fb / G:.2f} GB/s | {bound / G:.2f} GB/s "
          f"(disk read + write{', twice' if p['feature_external'] else ''}) | {fb / bound:.2f} |")
    print(f"| prepare: total | {ps['total']:.1f} s, peak RSS {rss(prep_name) / 2**30:.2f} GiB "
          f"(memory budget {p['memory_budget'] / 2**30:.1f} GiB) | | |\n")
    return g, p

report("generate", "prepare")
if large:
    g, p = report("generate_large", "prepare_large")
    table = p["feature_bytes"]
    print(f"Larger than RAM: feature table {table / 2**30:.1f} GiB vs {mem_kib / 2**30:.1f} GiB RAM; peak RSS "
          f"generate {rss('generate_large') / 2**30:.2f} GiB ({rss('generate_large') / table:.1%} of the table), "
          f"prepare {rss('prepare_large') / 2**30:.2f} GiB ({rss('prepare_large') / table:.1%} of the table).")
EOF
