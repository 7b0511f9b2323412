#!/usr/bin/env bash
# For the GPU machine: builds the CUDA preset, runs every test (GPU tests run instead of skipping),
# every GPU benchmark target, `graphtier bench sample` on a generated power-law graph, the Python
# package built with CUDA and its tests, and the end-to-end epoch benchmark on the GPU.
# Output lands in $OUT (or ./gpu-check-out): gpu.txt, gpu-tests.log, gpu-bench.log,
# bench-sample.txt, python-tests.log, epoch-bench.txt.
#   scripts/gpu-check.sh [NODES EDGES [E2E_NODES E2E_EDGES]]
#     graph size for bench sample (default 20M 400M) and for the epoch benchmark (default 5M 100M)
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-gpu-check-out}
nodes=${1:-20M}
edges=${2:-400M}
mkdir -p "$out"
export PATH="$PATH:/usr/local/cuda/bin"
nvidia-smi -L | tee "$out/gpu.txt"
cmake --preset cuda >/dev/null && cmake --build --preset cuda -j "$(nproc)" 2>&1 | tail -20 || exit 1
# Every test binary: on a GPU machine the device tests run instead of skipping.
ctest --preset cuda -j 4 2>&1 | tee "$out/gpu-tests.log"
status=${PIPESTATUS[0]}
grep -E "SKIPPED|Skipped" "$out/gpu-tests.log" || true
# GPU benchmark targets (every bench target whose name says cuda or gpu).
: >"$out/gpu-bench.log"
for b in build/cuda/bench/*; do
  case "$(basename "$b")" in *cuda*|*gpu*) [ -x "$b" ] && "$b" 2>&1 | tee -a "$out/gpu-bench.log" ;; esac
done
# Sampling throughput of every backend and topology location (docs/benchmarks.md, samplers).
gt=build/cuda/graphtier
data=${GRAPHTIER_BENCH_DIR:-/tmp/graphtier-bench}
mkdir -p "$data"
# Renumbered by degree so that the adjacency cache's hot prefix holds the hottest lists.
$gt -q generate --out "$data/pl" --nodes "$nodes" --edges "$edges" --no-features --classes 16 --overwrite &&
  $gt -q prepare -d "$data/pl" -o "$data/pl-degree" --hotness degree --overwrite &&
  $gt bench sample -d "$data/pl-degree" --fanouts 15,10,5 --batch-size 1024 --seconds 5 | tee "$out/bench-sample.txt"

# The Python package against the machine's own PyTorch, built with the CUDA backends.
GRAPHTIER_CUDA=ON python3 -m pip install -q --no-build-isolation --no-deps . 2>&1 | tail -20
GRAPHTIER_CLI=$gt python3 -m pytest -q python/tests 2>&1 | tee "$out/python-tests.log"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
# End to end: GraphSAGE [15,10,5], batch 1024, features beyond the GPU budgets (10% hot rows, 10%
# GPU cache, 10% pinned host rows, the rest read from disk) against CPU sampling + index_select + copy.
$gt -q generate --out "$data/e2e" --nodes "${3:-5M}" --edges "${4:-100M}" --feature-dim 128 --classes 16 \
    --align 512 --train-fraction 0.02 --overwrite &&
  $gt -q prepare -d "$data/e2e" -o "$data/e2e-degree" --hotness degree --overwrite &&
  python3 bench/loader/epoch_bench.py --dataset "$data/e2e-degree" --device cuda --gpu-hot 10% --gpu-cache 10% \
    --cpu-buffer 10% --host-cache 0 --gpu-sampling | tee "$out/epoch-bench.txt"
exit "$status"
