# The final device call: the whole check, then evidence for what is open (appended to gpu.txt).
GPU_CHECK_SECONDS=250 scripts/gpu-check.sh
g=$OUT/gpu.txt
f='LayerSampler.CudaRace*'
{
  echo "== layer race x60 alone"
  timeout 25 .bundle/bin/sample_tests --gtest_filter="$f" --gtest_repeat=60 2>&1 | grep -E "^\[  (FAILED|     OK) \] LayerSampler" | sort | uniq -c
  echo "== layer race x60 beside feature_tests"
  (timeout 40 .bundle/bin/feature_tests --gtest_filter='FeatureStoreGpuTest.*' >/dev/null 2>&1 &)
  timeout 25 .bundle/bin/sample_tests --gtest_filter="$f" --gtest_repeat=60 2>&1 | grep -E "^\[  (FAILED|     OK) \] LayerSampler|batch [0-9] \(" | sort | uniq -c | head -20
  cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  echo "== initcheck (kernels with reports)"
  timeout 45 $cs --tool initcheck --print-limit 200 .bundle/bin/sample_tests --gtest_filter="$f" 2>&1 | grep -E "^=========     at " | sed 's/(.*//' | sort | uniq -c | head -20
  ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
  echo "== ncu serve_kernel ($ncu)"
  timeout 60 "$ncu" --clock-control none -k regex:serve_kernel --launch-skip 30 --launch-count 1 \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats \
    .bundle/bin/feature_cuda_bench --dir /tmp/ncu-bench --table-bytes 1GiB --seconds 0.2 --hot-only 2>&1 |
    grep -vE "^==PROF==|^\s*$" | tail -60
} >>"$g" 2>&1
tail -45 "$g"
