#!/usr/bin/env bash
# Everything that needs a GPU, in one device call that compiles nothing of the engine: it runs the
# bundle that scripts/gpu-bundle.sh built on the CPU machine (carry [".bundle"]), within 8 minutes on
# an H100, and ends with one table: each figure next to its floor or peer, as a ratio
# (scripts/gpu_table.py).
#   preflight  at most 15 s: the GPU, every binary's libraries (the driver's alone), the
#              Python with torch and pytest, a compiler and Python's headers for the extension; stops
#              with one line naming what is missing. Then, in the background, graphtier._core is
#              built from the bundle against this Python (python/bundle, about 15 s on 16 cores) and
#              the benchmark graphs are generated (niced), while the GPU tests run.
#   test       the GPU tests alone (.bundle/gpu-tests.txt: one gtest filter per binary), the
#              binaries in parallel: CUDA == CPU identity, offsets >= 2^31, hubs, fanouts 32/33,
#              streams, the sync budgets; fresh device scratch poisoned (0xA5 bytes), so a read of
#              scratch never written fails every run; tests that fill the device run alone after
#   python     the package from the source tree with that extension: python/tests/test_gpu.py (with
#              one rank of the distributed job on NCCL against its Gloo run: two short trainings)
#   sample     `graphtier bench sample`, power-law 20M/400M (SAMPLE_NODES/SAMPLE_EDGES) renumbered by
#              degree, [15,10,5], batch 1024: GPU (HBM, cached, pinned/UVA) vs the CPU sampler
#   layer      layer_sampler_bench: LADIES and FastGCN, 8192-node layers, CUDA vs the CPU sampler
#   bench      feature_cuda_bench: the tiers against the machine's limits
#   e2e        bench/loader/epoch_bench.py: GraphSAGE [15,10,5], batch 1024, features twice the GPU
#              budget (E2E_NODES/E2E_EDGES, default 4M/80M, 128 floats a row) vs the CPU sampler +
#              index_select + copy
#   scripts/gpu-check.sh [PHASE...]      (no phase: all of them, in that order)
# Each phase runs under its own limit within the call's (GPU_CHECK_SECONDS, default 480), so the
# table always comes out. Without a GPU (CI) it rehearses: the preflight and the extension build run
# in full, the GPU tests skip visibly, and the measuring phases say "no GPU".
# Output in $OUT (or ./gpu-check-out), 8 files at most (the device tool's limit): gpu.txt (preflight,
# phase lines), tests.log, bench.log, the four figures' JSON files, table.md.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out=${OUT:-$root/gpu-check-out}
bundle=$root/.bundle
data=${GRAPHTIER_BENCH_DIR:-/tmp/graphtier-bench}
py=${GPU_CHECK_PYTHON:-python3}
deadline=$((SECONDS + ${GPU_CHECK_SECONDS:-480}))
jobs=$(nproc)
mkdir -p "$out" "$data"
export PATH="$PATH:/usr/local/cuda/bin"
export PYTHONUNBUFFERED=1
export GRAPHTIER_TEST_CLI=$bundle/bin/graphtier GRAPHTIER_TEST_DATASETS=$root/datasets
gt=$bundle/bin/graphtier
log() { echo "gpu-check: $*" | tee -a "$out/gpu.txt"; }
missing() { log "preflight: $*"; exit 2; }

# ---- preflight -------------------------------------------------------------------------------
preflight_start=$SECONDS
: >"$out/gpu.txt"
[ -f "$bundle/BUILD" ] || missing "no bundle at $bundle (run scripts/gpu-bundle.sh here and carry .bundle)"
sed 's/^/bundle: /' "$bundle/BUILD" >>"$out/gpu.txt"
gpu=0
if nvidia-smi -L >>"$out/gpu.txt" 2>&1 && nvidia-smi -L | grep -q "^GPU"; then
  gpu=1
else
  log "preflight: no GPU visible (nvidia-smi): a rehearsal; GPU tests skip and nothing is measured"
fi
for b in "$bundle"/bin/*; do
  unresolved=$(ldd "$b" 2>&1 | grep "not found" | tr -s ' \t' ' ')
  [ -z "$unresolved" ] || missing "$(basename "$b") cannot load:$unresolved"
done
"$py" -c "import torch, pytest" 2>/dev/null || missing "$py lacks torch or pytest"
for tool in cmake ninja c++; do command -v $tool >/dev/null || missing "no $tool (the extension is built here)"; done
py_include=$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
[ -f "$py_include/Python.h" ] || missing "no Python.h in $py_include (the extension is built here)"
log "preflight passed in $((SECONDS - preflight_start)) s ($("$py" --version 2>&1))"

# ---- background: the extension, then the benchmark graphs ---------------------------------------
ext_build=/tmp/graphtier-ext
rm -rf "$ext_build" "$ext_build.rc"
(
  cmake -S python/bundle -B "$ext_build" -G Ninja -DGRAPHTIER_BUNDLE="$bundle" \
    -DPython_EXECUTABLE="$(command -v "$py")" >"$ext_build.log" 2>&1 &&
    cmake --build "$ext_build" -j "$jobs" >>"$ext_build.log" 2>&1
  echo $? >"$ext_build.rc"
) &
ext_pid=$!
gen_pid=""
if ((gpu)); then
  (
    exec nice -n 10 bash -c '
      set -e
      "$0" -q generate --out "$1/pl" --nodes "$2" --edges "$3" --no-features --classes 16 --overwrite
      "$0" -q prepare -d "$1/pl" -o "$1/pl-degree" --hotness degree --overwrite && rm -rf "$1/pl"
      "$0" -q generate --out "$1/e2e" --nodes "$4" --edges "$5" --feature-dim 128 --classes 16 --align 512 \
        --train-fraction 0.01 --overwrite
      "$0" -q prepare -d "$1/e2e" -o "$1/e2e-degree" --hotness degree --overwrite && rm -rf "$1/e2e"
      touch "$1/ready"' \
      "$gt" "$data" "${SAMPLE_NODES:-20M}" "${SAMPLE_EDGES:-400M}" "${E2E_NODES:-4M}" "${E2E_EDGES:-80M}"
  ) >"$data.gen.log" 2>&1 &
  gen_pid=$!
  rm -f "$data/ready"
fi

# ---- phases ------------------------------------------------------------------------------------
# GPU tests that take (nearly) all of the device's memory for a moment: run alone after the
# others, which would otherwise see an out-of-memory error they did not cause.
whole_device_tests="CudaNeighborSampler.ATopologyLargerThanTheFreeMemoryFailsAtCreation
  BulkSampler.CudaMatricesLargerThanTheFreeMemoryFailAtCreation
  LayerSampler.CudaFastGcnArraysLargerThanTheFreeMemoryFailAtCreation"

phase_test() {
  local pids=() rc=0 binary filter alone=()
  : >"$out/tests.log"
  rm -f /tmp/gt-*.log  # only this run's logs are collected below
  while read -r binary filter; do
    local negative=""
    for t in $whole_device_tests; do
      case ":$filter:" in *":$t:"*) negative="$negative:$t"; alone+=("$binary $t") ;; esac
    done
    [ -z "$negative" ] || filter="$filter-${negative#:}"
    GRAPHTIER_POISON_DEVICE_SCRATCH=1 "$bundle/bin/$binary" --gtest_filter="$filter" --gtest_color=no \
      >"/tmp/gt-$binary.log" 2>&1 &
    pids+=($!)
  done <"$bundle/gpu-tests.txt"
  for p in "${pids[@]}"; do wait "$p" || rc=1; done
  for entry in "${alone[@]}"; do
    read -r binary filter <<<"$entry"
    GRAPHTIER_POISON_DEVICE_SCRATCH=1 "$bundle/bin/$binary" --gtest_filter="$filter" --gtest_color=no \
      >>"/tmp/gt-$binary.log" 2>&1 || rc=1
  done
  for f in /tmp/gt-*.log; do
    echo "=== $(basename "$f" .log | sed 's/^gt-//')" >>"$out/tests.log"
    cat "$f" >>"$out/tests.log"
  done
  grep -E '^\[  FAILED  \] [^ ]+ \(|Failure$|^[^ ]+:[0-9]+: ' "$out/tests.log" | head -40
  echo "tests: $(grep -c '^\[       OK \]' "$out/tests.log") passed, $(grep -c '^\[  SKIPPED \] [^ ]* (' "$out/tests.log")" \
       "skipped, $(grep -c '^\[  FAILED  \] [^ ]* (' "$out/tests.log") failed (tests.log)"
  return $rc
}

python_package() {
  while [ ! -e "$ext_build.rc" ]; do sleep 1; done
  if [ "$(cat "$ext_build.rc" 2>/dev/null)" != 0 ]; then
    echo "the extension did not build:"; tail -25 "$ext_build.log"; return 1
  fi
  local pkg=/tmp/graphtier-py
  rm -rf "$pkg" && mkdir -p "$pkg" && cp -r python/graphtier "$pkg/" && cp "$ext_build"/_core*.so "$pkg/graphtier/" || return 1
  export PYTHONPATH=$pkg${PYTHONPATH:+:$PYTHONPATH} GRAPHTIER_CLI=$gt
  "$py" -c "import graphtier._core" || return 1
}

phase_python() {
  python_package || return 1
  { echo "=== python/tests/test_gpu.py"; "$py" -m pytest -q -rs -p no:cacheprovider python/tests/test_gpu.py 2>&1; } |
    tee -a "$out/tests.log" | tail -15
  return "${PIPESTATUS[0]}"
}

# The benchmark graphs, generated in the background since the preflight.
wait_data() {
  while [ ! -e "$data/ready" ]; do
    kill -0 "$gen_pid" 2>/dev/null || { echo "the benchmark graphs were not generated:"; tail -5 "$data.gen.log"; return 1; }
    sleep 1
  done
}

phase_sample() {
  wait_data || return 1
  "$gt" --json bench sample -d "$data/pl-degree" --fanouts 15,10,5 --batch-size 1024 --seconds 1 \
    >"$out/bench-sample.json" 2>>"$out/bench.log"
}

phase_layer() {
  local m dev rc=0
  for m in ladies fastgcn; do
    for dev in "" --cuda; do
      "$bundle/bin/layer_sampler_bench" --nodes 4M --degree 16 --batch 8192 --sizes 8192,8192 --batches 10 \
        --method $m --threads "$jobs" $dev >>"$data.layer.jsonl" 2>>"$out/bench.log" || rc=1
    done
  done
  "$py" -c 'import json, sys; print(json.dumps([json.loads(l) for l in open(sys.argv[1]) if l.strip()]))' \
    "$data.layer.jsonl" >"$out/layer-bench.json"
  return $rc
}

phase_bench() {
  "$bundle/bin/feature_cuda_bench" --dir "$data" --table-bytes "${FEATURE_TABLE_BYTES:-1GiB}" --seconds 0.5 \
    >"$out/feature-bench.json" 2>>"$out/bench.log"
}

phase_e2e() {
  python_package || return 1
  wait_data || return 1
  # Features twice the GPU budget (30% hot + 20% cache), the rest pinned in host memory.
  "$py" bench/loader/epoch_bench.py --dataset "$data/e2e-degree" --device cuda --gpu-hot 30% --gpu-cache 20% \
    --cpu-buffer 100% --host-cache 0 --gpu-sampling --configs full,baseline --json "$out/epoch-bench.json" \
    2>&1 | tee -a "$out/bench.log"
  return "${PIPESTATUS[0]}"
}

phases=("$@")
((${#phases[@]})) || phases=(test python sample layer bench e2e)
declare -A budget=([test]=90 [python]=90 [sample]=90 [layer]=40 [bench]=110 [e2e]=70)
needs_gpu=" sample layer bench e2e "
rm -f "$data.layer.jsonl"
status=0
for p in "${phases[@]}"; do
  declare -F "phase_$p" >/dev/null || { log "unknown phase '$p'"; status=2; continue; }
  if ((!gpu)) && [[ $needs_gpu == *" $p "* ]]; then
    log "phase $p: no GPU, not measured"
    continue
  fi
  left=$((deadline - SECONDS - 10))
  limit=${budget[$p]}
  ((left < limit)) && limit=$left
  if ((limit <= 0)); then
    log "phase $p not run: the call's time is spent"
    status=1
    continue
  fi
  start=$SECONDS
  # Under the limit in a subshell of its own; `timeout` ends the phase's whole process group.
  export -f "phase_$p" python_package wait_data
  export out bundle data py gt jobs ext_build gen_pid whole_device_tests
  timeout --kill-after=5 "$limit" bash -c "phase_$p"
  rc=$?
  ((rc == 124)) && log "phase $p stopped at its limit of $limit s"
  log "phase $p exit $rc in $((SECONDS - start)) s"
  ((rc == 0)) || status=1
done
[ -n "$gen_pid" ] && { kill "$gen_pid" 2>/dev/null; cat "$data.gen.log" >>"$out/bench.log"; }
wait "$ext_pid" 2>/dev/null
"$py" scripts/gpu_table.py "$out" | tee "$out/table.md"
log "done in $SECONDS s, exit $status"
exit "$status"
