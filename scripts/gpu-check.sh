#!/usr/bin/env bash
# For the GPU machine: builds the CUDA preset and runs every GPU test and GPU benchmark in one go.
# Output lands in $OUT (or ./gpu-check-out) as gpu-tests.log and gpu-bench.log.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-gpu-check-out}
mkdir -p "$out"
export PATH="$PATH:/usr/local/cuda/bin"
nvidia-smi -L | tee "$out/gpu.txt"
cmake --preset cuda >/dev/null && cmake --build --preset cuda -j "$(nproc)" 2>&1 | tail -20 || exit 1
# Every test binary: on a GPU machine the device tests run instead of skipping.
ctest --preset cuda -j 4 2>&1 | tee "$out/gpu-tests.log"
status=${PIPESTATUS[0]}
grep -E "SKIPPED|Skipped" "$out/gpu-tests.log" || true
# GPU benchmarks (every bench target whose name says cuda or gpu).
: >"$out/gpu-bench.log"
for b in build/cuda/bench/*; do
  case "$(basename "$b")" in *cuda*|*gpu*) [ -x "$b" ] && "$b" 2>&1 | tee -a "$out/gpu-bench.log" ;; esac
done
exit "$status"
