#!/usr/bin/env bash
# Everything that needs a GPU, in one device call of at most 10 minutes on a bare H100 (16 cores),
# ending with one table: each figure next to its floor or peer, as a ratio (scripts/gpu_table.py).
# One build serves every phase: the CUDA preset with the Python extension in the same tree.
#   build   the CUDA preset (tests, benchmarks and the Python extension graphtier._core)
#   test    every test binary: the device tests run instead of skipping (CUDA == CPU identity,
#           offsets >= 2^31, hubs, fanouts 32/33, streams)
#   python  the package from the source tree with the extension just built: its GPU tests
#   bench   feature_cuda_bench: the tiers against the machine's limits (pinned paths at 128 B ..
#           4 KiB rows, HBM tier vs device copy, GPU cache hits vs the pinned tier, storage)
#   sample  `graphtier bench sample` on a generated power-law graph (SAMPLE_NODES/SAMPLE_EDGES,
#           default 20M/400M) renumbered by degree: GPU (HBM, cached, pinned/UVA) vs the CPU sampler
#   e2e     bench/loader/epoch_bench.py: GraphSAGE [15,10,5], batch 1024, features twice the GPU
#           budget (E2E_NODES/E2E_EDGES, default 4M/80M, 128 floats a row), against the CPU sampler
#           + index_select + copy
#   scripts/gpu-check.sh [PHASE...]      (no phase: all of them, in that order)
# Each phase runs under its own time limit (and the call's 10 minutes: GPU_CHECK_SECONDS, default
# 570), so the table always comes out. The machine cannot fetch packages: run scripts/fetch-deps.sh
# here first and name .deps in the call's carry; the .debs are unpacked into .deps/root (never into
# /). Output lands in $OUT (or ./gpu-check-out): one log per phase, the JSON figures, table.md.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-gpu-check-out}
data=${GRAPHTIER_BENCH_DIR:-/tmp/graphtier-bench}
build=build/cuda
gt=$build/graphtier
deadline=$((SECONDS + ${GPU_CHECK_SECONDS:-570}))
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

python_ext=0
phase_build() {
  # The extension in the same tree, so that nothing is compiled twice; without Python's headers
  # the phase python falls back to pip (a second build of the library).
  if cmake --preset cuda -DGRAPHTIER_PYTHON=ON -DPython_EXECUTABLE="$(command -v python3)" >"$out/build.log" 2>&1; then
    python_ext=1
  else
    cmake --preset cuda -DGRAPHTIER_PYTHON=OFF >>"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; return 1; }
  fi
  cmake --build --preset cuda -j "$(nproc)" >>"$out/build.log" 2>&1
  local rc=$?
  tail -5 "$out/build.log"
  return $rc
}

phase_test() {
  ctest --preset cuda -j "$(nproc)" --timeout 90 2>&1 | tee "$out/gpu-tests.log" | grep -vE "^ *[0-9]+/[0-9]+ Test +#[0-9]+: .* Passed"
  local rc=${PIPESTATUS[0]}
  grep -cE "Passed" "$out/gpu-tests.log" | sed 's/^/gpu-check: tests passed: /'
  grep -E "SKIPPED|Skipped" "$out/gpu-tests.log" || true
  return "$rc"
}

# The package from the source tree, with the extension of this build (or a pip install), ahead of
# any graphtier already installed.
python_package() {
  if ((python_ext)); then
    local pkg=/tmp/graphtier-py
    rm -rf "$pkg" && mkdir -p "$pkg" && cp -r python/graphtier "$pkg/" &&
      ln -sf "$PWD"/$build/_core*.so "$pkg/graphtier/" || return 1
    export PYTHONPATH=$pkg${PYTHONPATH:+:$PYTHONPATH}
  else
    GRAPHTIER_CUDA=ON python3 -m pip install -q --no-build-isolation --no-deps . >"$out/python-build.log" 2>&1 ||
      { tail -30 "$out/python-build.log"; return 1; }
  fi
  export GRAPHTIER_CLI=$PWD/$gt
  python3 -c "import graphtier._core as c; assert c.cuda_available(), 'the extension sees no GPU'"
}

phase_python() {
  python_package || return 1
  python3 -m pytest -q -rs -p no:cacheprovider python/tests/test_gpu.py 2>&1 | tee "$out/python-tests.log"
  return "${PIPESTATUS[0]}"
}

phase_bench() {
  $build/bench/feature_cuda_bench --dir "$data" --table-bytes "${FEATURE_TABLE_BYTES:-1GiB}" --seconds 0.5 \
    >"$out/feature-bench.json" 2>"$out/feature-bench.log"
  local rc=$?
  tail -3 "$out/feature-bench.log"
  return $rc
}

phase_sample() {
  $gt -q generate --out "$data/pl" --nodes "${SAMPLE_NODES:-20M}" --edges "${SAMPLE_EDGES:-400M}" \
      --no-features --classes 16 --overwrite &&
    $gt -q prepare -d "$data/pl" -o "$data/pl-degree" --hotness degree --overwrite &&
    rm -rf "$data/pl" &&
    $gt --json bench sample -d "$data/pl-degree" --fanouts 15,10,5 --batch-size 1024 --seconds 1 \
      >"$out/bench-sample.json"
}

phase_e2e() {
  python_package || return 1
  $gt -q generate --out "$data/e2e" --nodes "${E2E_NODES:-4M}" --edges "${E2E_EDGES:-80M}" --feature-dim 128 \
      --classes 16 --align 512 --train-fraction 0.01 --overwrite &&
    $gt -q prepare -d "$data/e2e" -o "$data/e2e-degree" --hotness degree --overwrite || return 1
  # Features twice the GPU budget (30% hot + 20% cache), the rest pinned in host memory.
  python3 bench/loader/epoch_bench.py --dataset "$data/e2e-degree" --device cuda --gpu-hot 30% --gpu-cache 20% \
    --cpu-buffer 100% --host-cache 0 --gpu-sampling --configs full,baseline --json "$out/epoch-bench.json" \
    2>&1 | tee "$out/epoch-bench.txt"
  return "${PIPESTATUS[0]}"
}

phases=("$@")
((${#phases[@]})) || phases=(build test python bench sample e2e)
use_carried_deps
nvidia-smi -L | tee "$out/gpu.txt"
# Every phase needs the build; a failed build ends the run.
phase_build || { echo "gpu-check: the CUDA build failed ($out/build.log)" >&2; exit 1; }
declare -A budget=([test]=100 [python]=60 [bench]=100 [sample]=120 [e2e]=120)
status=0
for p in "${phases[@]}"; do
  [ "$p" = build ] && continue
  declare -F "phase_$p" >/dev/null || { echo "gpu-check: unknown phase '$p'" >&2; exit 2; }
  left=$((deadline - SECONDS - 15))
  limit=${budget[$p]}
  ((left < limit)) && limit=$left
  if ((limit <= 0)); then
    echo "gpu-check: phase $p not run: the call's time is spent" | tee -a "$out/gpu.txt"
    status=1
    continue
  fi
  start=$SECONDS
  # A phase is a shell function: run it in a subshell under the limit, in its own process group.
  export -f "phase_$p" python_package unpack_deb
  export out data build gt python_ext
  timeout --kill-after=5 "$limit" bash -c "phase_$p"
  rc=$?
  ((rc == 124)) && echo "gpu-check: phase $p stopped at its limit of $limit s"
  echo "gpu-check: phase $p exit $rc in $((SECONDS - start)) s" | tee -a "$out/gpu.txt"
  ((rc == 0)) || status=1
done
python3 scripts/gpu_table.py "$out" | tee "$out/table.md"
exit "$status"
