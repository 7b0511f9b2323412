#!/usr/bin/env bash
# Sets up, builds and runs every test, the quick gate first (a broken change fails in minutes): the
# CPU build (one build for the package, the tests and the benchmarks), its C++ tests and the Python
# suite on PyTorch 1.13; then the C++ package's example, the same C++ tests again under
# AddressSanitizer and UndefinedBehaviorSanitizer, every fuzz target, the Python suite on PyTorch
# 2.x, graphtier.dgl's tests against DGL, the GPU bundle (compiled whenever nvcc is present; its GPU
# tests skip visibly on a machine without a GPU, and the device call is rehearsed on it) and the
# Debug CUDA build (compiled only) with the one-definition check.
#   scripts/test.sh            everything above (CI: .ci/run)
#   scripts/test.sh --quick    day-to-day: the quick gate alone (no example, sanitizers, fuzzing,
#                              PyTorch 2.x or CUDA builds)
# Every compile goes through a compiler cache outside the clone (scripts/compiler-cache.sh), and the
# Python suites run on two pytest-xdist workers, one PyTorch thread each (python/tests/conftest.py
# keeps the multi-process tests on one of them).
set -euo pipefail
cd "$(dirname "$0")/.."
quick=0
case "${1:-}" in
  "") ;;
  --quick) quick=1 ;;
  *) echo "test.sh: unknown option '$1' (expected nothing or --quick)" >&2; exit 2 ;;
esac
# Each stage's start, as minutes since this script began, and at the end (also when a stage failed)
# each stage's time: a slow CI log says where the time went.
stages=()
starts=()
stage() {
  stages+=("$*")
  starts+=("$SECONDS")
  printf 'test.sh: [%d:%02d] %s\n' $((SECONDS / 60)) $((SECONDS % 60)) "$*" >&2
}
stage_times() {
  local rc=$? i end took
  echo "test.sh: time by stage ($( ((rc == 0)) && echo passed || echo "failed, exit $rc")):" >&2
  for i in "${!stages[@]}"; do
    [ "${stages[i]}" = passed ] && continue
    end=${starts[i + 1]:-$SECONDS}
    took=$((end - starts[i]))
    printf 'test.sh:   %3d:%02d  %s\n' $((took / 60)) $((took % 60)) "${stages[i]}" >&2
  done
  printf 'test.sh:   %3d:%02d  in all\n' $((SECONDS / 60)) $((SECONDS % 60)) >&2
}
trap stage_times EXIT
stage setup
scripts/setup.sh
# shellcheck source=scripts/compiler-cache.sh
source scripts/compiler-cache.sh
command -v ccache >/dev/null && [ -n "${CCACHE_DIR:-}" ] && ccache --zero-stats >/dev/null
jobs=$(nproc)
pytest_args=(-q -rs -n 2 --dist loadgroup)  # -rs: skipped tests say why
# The Python suite on PYTHON, on two workers of one PyTorch thread each, its slowest 12 tests listed.
python_suite() {
  OMP_NUM_THREADS=1 "$1" -m pytest "${pytest_args[@]}" --durations=12 python/tests
}

# One build for the C++ tests, the benchmarks and the Python package (pip install . in build/cpu,
# scripts/install-package.sh): the package's tests use the graphtier command built here.
stage "CPU build (the package first)"
cmake --preset cpu >/dev/null
scripts/install-package.sh
cmake --build --preset cpu -j "$jobs"
stage "C++ tests (CPU build)"
ctest --preset cpu -j "$jobs"
# The Python package's tests (the package was installed above; they use the graphtier command built
# there to make their datasets).
stage "Python tests (PyTorch 1.13)"
python_suite .venv/bin/python
if ((quick)); then
  echo "test.sh --quick: passed (the full run adds the example, sanitizers, fuzzing, PyTorch 2.x and CUDA)"
  exit 0
fi

# The C++ package installed to a scratch prefix, and examples/cpp built against it with
# find_package(graphtier) and run on a generated dataset.
stage "C++ package example"
rm -rf build/install build/example
cmake --install build/cpu --prefix build/install --component dev >/dev/null
cmake -S examples/cpp -B build/example -G Ninja -DCMAKE_PREFIX_PATH="$PWD/build/install" >/dev/null
cmake --build build/example -j "$jobs"
build/cpu/graphtier -q generate --out build/example/graph --nodes 2000 --edges 20000 --feature-dim 16 --classes 4 \
  --overwrite
build/example/minibatch build/example/graph 64 10 5

# The whole C++ suite again, built with ASan + UBSan (Debug): a read past a buffer, a leak, a signed
# overflow or a misaligned load fails its test here instead of passing by luck.
stage "sanitizer build"
cmake --preset sanitize >/dev/null
cmake --build --preset sanitize -j "$jobs"
stage "C++ tests (sanitizers), check-odr"
ctest --preset sanitize -j "$jobs"
scripts/check-odr.sh build/sanitize

# Every fuzz target (fuzz/README.md: one per reader of outside bytes) for 15 s, over its seeds and the
# corpus earlier runs on this machine kept (merged back after the run), built with clang, libFuzzer,
# ASan and UBSan: any crash, hang or huge allocation fails CI.
stage "fuzzing"
scripts/fuzz.sh 15

# The same suite on a current PyTorch 2.x with torch_geometric from PyPI, where the PyG-compatible
# loader's tests run, in a venv kept outside the clone (scripts/setup-torch2.sh: several GB, once per
# machine). It gets the package built above as a wheel (the same build directory, nothing
# recompiled): `pip install .` from a second venv would compile the engine again from scratch
# (scikit-build-core clears a build directory that another environment's scikit-build-core configured).
stage "PyTorch 2.x venv and wheel"
torch2=$(scripts/setup-torch2.sh)
rm -rf build/wheel
scripts/install-package.sh --wheel build/wheel
"$torch2/bin/python" -m pip install -q --no-deps --force-reinstall build/wheel/graphtier-*.whl
stage "Python tests (PyTorch 2.x)"
python_suite "$torch2/bin/python"

# graphtier.dgl against real DGL (scripts/setup-dgl.sh: PyTorch 2.2 and DGL 2.1 from PyPI, once per
# machine) with the same wheel; the other suites skip these tests visibly. Where DGL cannot be
# installed they are skipped here too, saying why.
stage "DGL"
if dgl_venv=$(scripts/setup-dgl.sh); then
  "$dgl_venv/bin/python" -m pip install -q --no-deps --force-reinstall build/wheel/graphtier-*.whl
  "$dgl_venv/bin/python" -m pytest -q -rs python/tests/test_dgl.py
else
  echo "test.sh: DGL could not be installed (above): python/tests/test_dgl.py skipped against DGL" >&2
fi

if command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH="$PATH:/usr/local/cuda/bin"
  # The GPU bundle (Release, sm_90): built and its whole suite run here (GPU tests skip visibly),
  # then the device call rehearsed on it without a GPU: the preflight, graphtier._core built from
  # the bundle against this Python, the GPU tests skipping, the measuring phases saying "no GPU".
  # A bundle that would fail on the GPU machine for want of a file fails here, not in the lease.
  stage "GPU bundle"
  scripts/gpu-bundle.sh --jobs "$jobs"
  stage "gpu-check rehearsal"
  OUT=build/gpu-check-rehearsal GPU_CHECK_PYTHON=.venv/bin/python scripts/gpu-check.sh
  # The modules that hold CUDA code, compiled at -O0 (not linked: the bundle above links them, and
  # the sanitizer build links every module at -O0): at -O0 nothing is inlined, so every inline and
  # template function is emitted as a symbol of its own, and two different definitions of one name,
  # which the linker merges without a word, show in check-odr.sh (which reads the modules' objects) as
  # one symbol with two sizes. The other modules' objects were read the same way in the sanitizer
  # build (Debug).
  stage "CUDA Debug build and check-odr"
  cmake --preset cuda-debug >/dev/null
  cmake --build --preset cuda-debug -j "$jobs"
  scripts/check-odr.sh build/cuda-debug
else
  echo "test.sh: nvcc not found, CUDA build skipped" >&2
fi
# What the compiler cache served in this run (a warm run: nearly every compile).
if command -v ccache >/dev/null && [ -n "${CCACHE_DIR:-}" ]; then
  ccache --show-stats | grep -E "Hits|Misses" >&2 || true
fi
stage "passed"
