#!/usr/bin/env bash
# For the GPU machine: builds the CUDA preset and checks every CUDA path, in phases that each fit
# one device call (a bare machine rebuilds; ninja makes that a no-op on a warm one):
#   build   the CUDA preset (tests and benchmarks included)
#   test    every test binary: the device tests run instead of skipping (CUDA == CPU identity tests)
#   bench   feature_cuda_bench (the tiers against the machine's limits), bulk_sample_bench (bulk
#           against one-at-a-time, CUDA rows included) and layer_sampler_bench --cuda
#   sample  `graphtier bench sample` on a generated power-law graph (SAMPLE_NODES/SAMPLE_EDGES,
#           default 20M/400M), renumbered by degree
#   python  the Python package built with CUDA against the machine's PyTorch, and its tests
#   e2e     the epoch benchmark: GraphSAGE [15,10,5], batch 1024, on a generated graph
#           (E2E_NODES/E2E_EDGES, default 5M/100M) with 10% GPU hot rows, 10% GPU cache, and the
#           rest pinned in host memory, then only 10% pinned and the rest on disk; each against
#           CPU sampling + index_select + copy
#   scripts/gpu-check.sh [PHASE...]      (no phase: all of them, in that order)
# The machine cannot fetch packages: run scripts/fetch-deps.sh here first and name .deps in the
# call's carry; the .debs are unpacked into .deps/root (never into /). Output lands in $OUT (or
# ./gpu-check-out), one log per phase, plus gpu.txt.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-gpu-check-out}
data=${GRAPHTIER_BENCH_DIR:-/tmp/graphtier-bench}
gt=build/cuda/graphtier
mkdir -p "$out" "$data"
export PATH="$PATH:/usr/local/cuda/bin"
export PYTHONUNBUFFERED=1

# A .deb unpacked with dpkg-deb where the machine has it, else with ar and tar.
unpack_deb() {
  if command -v dpkg-deb >/dev/null; then dpkg-deb -x "$1" "$2"; return; fi
  local tmp deb
  tmp=$(mktemp -d) && deb=$(realpath "$1")
  (cd "$tmp" && ar x "$deb") && tar -xf "$tmp"/data.tar.* -C "$2"
  local rc=$?
  rm -rf "$tmp"
  return $rc
}

use_carried_deps() {
  compgen -G ".deps/*.deb" >/dev/null || return 0
  local root=$PWD/.deps/root f
  rm -rf "$root" && mkdir -p "$root"
  for f in .deps/*.deb; do unpack_deb "$f" "$root" || { echo "gpu-check: cannot unpack $f" >&2; exit 1; }; done
  local lib=$root/usr/lib/x86_64-linux-gnu
  # zlib1g-dev's libz.so names the runtime library, which the machine has itself.
  if [ ! -e "$lib/libz.so" ]; then
    ln -sf "$(ldconfig -p | awk '/libz\.so\.1 .*x86-64/ {print $NF; exit}')" "$lib/libz.so"
  fi
  export CMAKE_PREFIX_PATH=$root/usr${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}
  export LD_LIBRARY_PATH=$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  echo "gpu-check: building against the carried packages in .deps" >&2
}

phase_build() {
  { cmake --preset cuda && cmake --build --preset cuda -j "$(nproc)"; } >"$out/build.log" 2>&1
  local rc=$?
  tail -20 "$out/build.log"
  return $rc
}

phase_test() {
  ctest --preset cuda -j 8 2>&1 | tee "$out/gpu-tests.log"
  local rc=${PIPESTATUS[0]}
  grep -E "SKIPPED|Skipped" "$out/gpu-tests.log" || true
  return "$rc"
}

phase_bench() {
  local rc=0 m
  : >"$out/gpu-bench.log"
  bench() {
    echo "== $*" | tee -a "$out/gpu-bench.log"
    "$@" 2>&1 | tee -a "$out/gpu-bench.log"
    ((rc |= PIPESTATUS[0]))
  }
  # The tiers against the machine's limits (pinned paths, GPU tier, storage, all tiers together).
  bench build/cuda/bench/feature_cuda_bench --dir "$data"
  # Bulk (cuSPARSE) against one-at-a-time sampling, and the layer-wise samplers on the GPU.
  bench build/cuda/bench/bulk_sample_bench
  for m in ladies fastgcn; do bench build/cuda/bench/layer_sampler_bench --method "$m" --cuda; done
  return "$rc"
}

phase_sample() {
  $gt -q generate --out "$data/pl" --nodes "${SAMPLE_NODES:-20M}" --edges "${SAMPLE_EDGES:-400M}" \
      --no-features --classes 16 --overwrite &&
    $gt -q prepare -d "$data/pl" -o "$data/pl-degree" --hotness degree --overwrite &&
    $gt bench sample -d "$data/pl-degree" --fanouts 15,10,5 --batch-size 1024 --seconds 5 |
      tee "$out/bench-sample.txt"
}

phase_python() {
  GRAPHTIER_CUDA=ON python3 -m pip install -q --no-build-isolation --no-deps . >"$out/python-build.log" 2>&1 ||
    { tail -30 "$out/python-build.log"; return 1; }
  GRAPHTIER_CLI=$gt python3 -m pytest -q -rs python/tests 2>&1 | tee "$out/python-tests.log"
  return "${PIPESTATUS[0]}"
}

phase_e2e() {
  python3 -c "import graphtier" 2>/dev/null || phase_python || return 1
  $gt -q generate --out "$data/e2e" --nodes "${E2E_NODES:-5M}" --edges "${E2E_EDGES:-100M}" --feature-dim 128 \
      --classes 16 --align 512 --train-fraction 0.02 --overwrite &&
    $gt -q prepare -d "$data/e2e" -o "$data/e2e-degree" --hotness degree --overwrite || return 1
  # Beyond the GPU budgets: the rest pinned in host memory, then the rest mostly on disk.
  local rc=0 cpu
  for cpu in 100% 10%; do
    echo "== GPU hot 10%, GPU cache 10%, pinned host $cpu, the rest on disk" | tee -a "$out/epoch-bench.txt"
    python3 bench/loader/epoch_bench.py --dataset "$data/e2e-degree" --device cuda --gpu-hot 10% \
      --gpu-cache 10% --cpu-buffer "$cpu" --host-cache 0 --gpu-sampling | tee -a "$out/epoch-bench.txt"
    ((rc |= PIPESTATUS[0]))
  done
  return "$rc"
}

phases=("$@")
((${#phases[@]})) || phases=(build test bench sample python e2e)
use_carried_deps
nvidia-smi -L | tee "$out/gpu.txt"
# Every phase needs the build; a failed build ends the run.
phase_build || { echo "gpu-check: the CUDA build failed (build.log)" >&2; exit 1; }
status=0
for p in "${phases[@]}"; do
  [ "$p" = build ] && continue
  declare -F "phase_$p" >/dev/null || { echo "gpu-check: unknown phase '$p'" >&2; exit 2; }
  start=$SECONDS
  "phase_$p"
  rc=$?
  echo "gpu-check: phase $p exit $rc in $((SECONDS - start)) s" | tee -a "$out/gpu.txt"
  ((rc == 0)) || status=1
done
exit "$status"
