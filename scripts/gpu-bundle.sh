#!/usr/bin/env bash
# Builds, on this CPU machine, everything the GPU machine's one call runs, into .bundle/ (ignored by
# git, at most 60 MiB): a GPU lease is too short to spend compiling (README, "With a GPU").
#   build    the gpu-bundle preset: Release for sm_90, liburing, xxHash, the CUDA runtime and
#            libstdc++ static, no build-tree paths baked in: the binaries need the driver alone.
#            Only what the bundle carries: the engine's libraries, the graphtier command, the test
#            binaries that hold GPU tests (target gpu_tests: the modules with CUDA code,
#            tests/CMakeLists.txt) and the two GPU benches
#   test     those binaries' tests here (ctest label `gpu`: CPU tests pass, GPU tests skip visibly);
#            the tests that skipped are the GPU tests, listed in gpu-tests.txt as one gtest filter
#            per binary
#   bundle   bin/ (the test binaries that hold GPU tests and the GPU benches, stripped; the graphtier
#            command, debug information dropped, symbols kept), lib/ (the engine's static libraries and the static CUDA runtime, from which
#            python/bundle builds graphtier._core against the device's own Python), nanobind/,
#            gpu-tests.txt, BUILD (commit and toolchain)
#   scripts/gpu-bundle.sh [--jobs N]
# Then, with a device: run scripts/gpu-check.sh with carry [".bundle"] (README, "With a GPU").
# The bundle is written to .bundle.tmp and renamed, so a failed run leaves the previous one whole.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/compiler-cache.sh
source scripts/compiler-cache.sh
jobs=$(nproc)
[ "${1:-}" = "--jobs" ] && jobs=$2
export PATH="$PATH:/usr/local/cuda/bin"
build=build/gpu-bundle
limit_mib=60

benches=(feature_cuda_bench layer_sampler_bench)
cmake --preset gpu-bundle >/dev/null
cmake --build --preset gpu-bundle -j "$jobs" --target graphtier gpu_tests "${benches[@]}"

# The GPU test binaries' tests, with a JUnit report: what skipped here (no GPU) is what the device
# runs.
ctest --preset gpu-bundle -L gpu -j "$jobs" --output-junit gpu-bundle-junit.xml
ctest --preset gpu-bundle -L gpu --show-only=json-v1 >"$build/tests.json"

rm -rf .bundle.tmp && mkdir -p .bundle.tmp/bin .bundle.tmp/lib
python3 - "$build" .bundle.tmp <<'EOF'
"""gpu-tests.txt: one line per test binary, `binary filter`, of the tests that skipped here."""
import json, os, sys
import xml.etree.ElementTree as ET
build, out = sys.argv[1:]
skipped = {c.get("name") for c in ET.parse(os.path.join(build, "gpu-bundle-junit.xml")).iter("testcase")
           if c.get("status") == "skipped" or c.find("skipped") is not None}
by_binary = {}
for test in json.load(open(os.path.join(build, "tests.json")))["tests"]:
    command = test.get("command") or []
    if test["name"] in skipped and command and os.path.basename(command[0]).endswith("_tests"):
        # A parameterised test's ctest name carries its parameter after "  # ": not part of the filter.
        by_binary.setdefault(os.path.basename(command[0]), []).append(test["name"].split("  #")[0])
if not by_binary:
    sys.exit("gpu-bundle: no test skipped here, so no GPU test was found (is this machine's GPU visible?)")
with open(os.path.join(out, "gpu-tests.txt"), "w") as f:
    for binary, names in sorted(by_binary.items()):
        f.write(f"{binary} {':'.join(sorted(names))}\n")
print(f"gpu-bundle: {sum(map(len, by_binary.values()))} GPU tests in {len(by_binary)} binaries", file=sys.stderr)
EOF

# The graphtier command keeps its symbols (debug information dropped): a crash of a job on the
# device names its functions. The test binaries and benchmarks keep none: a failing GPU test names
# itself and its assertion through gtest, nothing on the device reads host symbols (kernel names
# live in the fatbins, which strip leaves whole), and they are a quarter of each binary (6 MiB of
# the budget; the GPU temporal sampler took the bundle to 61 MiB with them).
strip --strip-debug -o .bundle.tmp/bin/graphtier "$build/graphtier"
for t in $(cut -d' ' -f1 .bundle.tmp/gpu-tests.txt | sed "s|^|tests/|") "${benches[@]/#/bench/}"; do
  strip --strip-all -o ".bundle.tmp/bin/$(basename "$t")" "$build/$t"
done
for a in "$build"/libgraphtier_*.a; do
  strip --strip-debug -o ".bundle.tmp/lib/$(basename "$a")" "$a"
done
# What the engine's libraries link beside them, for the extension built there.
for v in LIBURING_LIBRARY XXHASH_LIBRARY; do
  lib=$(grep -m1 "^$v:" "$build/CMakeCache.txt" | cut -d= -f2)
  [[ $lib == *.a ]] || { echo "gpu-bundle: $v is $lib, not a static library" >&2; exit 1; }
  cp "$lib" .bundle.tmp/lib/
done
cudart=$(find "$(dirname "$(command -v nvcc)")/.." -name libcudart_static.a -print -quit)
[ -n "$cudart" ] || { echo "gpu-bundle: libcudart_static.a not found beside nvcc" >&2; exit 1; }
cp "$cudart" .bundle.tmp/lib/
nanobind=$(.venv/bin/python -c "import nanobind, os; print(os.path.dirname(nanobind.__file__))")
cp -r "$nanobind" .bundle.tmp/nanobind && rm -rf .bundle.tmp/nanobind/__pycache__
{
  echo "commit $(git rev-parse HEAD)$(git diff --quiet HEAD || echo ' (with uncommitted changes)')"
  echo "built $(date -u +%FT%TZ) on $(uname -m), $(nvcc --version | tail -1), $(c++ --version | head -1)"
  echo "cuda architectures $(grep -m1 '^CMAKE_CUDA_ARCHITECTURES' "$build/CMakeCache.txt" | cut -d= -f2)"
} >.bundle.tmp/BUILD

size=$(du -sm .bundle.tmp | cut -f1)
if ((size > limit_mib)); then
  echo "gpu-bundle: the bundle is $size MiB, over its $limit_mib MiB (the device call carries 64 MiB in all)" >&2
  du -sm .bundle.tmp/*/* | sort -rn | head >&2
  exit 1
fi
rm -rf .bundle && mv .bundle.tmp .bundle
echo "gpu-bundle: .bundle is $size MiB ($(wc -l <.bundle/gpu-tests.txt) test binaries); run scripts/gpu-check.sh with carry [\".bundle\"]" >&2
