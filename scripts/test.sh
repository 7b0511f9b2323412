#!/usr/bin/env bash
# Sets up, builds and runs every test: the CPU build (one build for the package, the tests and the
# benchmarks), the C++ package's example, the same tests again under AddressSanitizer and
# UndefinedBehaviorSanitizer, every fuzz target for 30 s, the Python suite on PyTorch 1.13 and 2.x,
# graphtier.dgl's tests against DGL, then the GPU bundle (compiled whenever nvcc is present; its GPU
# tests skip visibly on a machine without a GPU, and the device call is rehearsed on it) and the
# Debug CUDA build (compiled only).
#   scripts/test.sh            everything above (CI: .ci/run)
#   scripts/test.sh --quick    day-to-day: the CPU build's C++ tests and the Python suite on PyTorch
#                              1.13 only (no example, sanitizers, fuzzing, PyTorch 2.x or CUDA builds)
set -euo pipefail
cd "$(dirname "$0")/.."
quick=0
case "${1:-}" in
  "") ;;
  --quick) quick=1 ;;
  *) echo "test.sh: unknown option '$1' (expected nothing or --quick)" >&2; exit 2 ;;
esac
# Each stage's start, as minutes since this script began: a slow CI log says where the time went.
stage() { printf 'test.sh: [%d:%02d] %s\n' $((SECONDS / 60)) $((SECONDS % 60)) "$*" >&2; }
stage setup
scripts/setup.sh
jobs=$(nproc)

# One build for the C++ tests, the benchmarks and the Python package (pip install . in build/cpu,
# scripts/install-package.sh): the package's tests use the graphtier command built here.
stage "CPU build (the package first)"
cmake --preset cpu >/dev/null
scripts/install-package.sh
cmake --build --preset cpu -j "$jobs"
stage "C++ tests (CPU build)"
ctest --preset cpu -j "$jobs"
if ((quick)); then
  stage "Python tests (PyTorch 1.13)"
  .venv/bin/python -m pytest -q -rs python/tests
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
stage "C++ tests (sanitizers)"
ctest --preset sanitize -j "$jobs"

# Every fuzz target (fuzz/README.md: one per reader of outside bytes) for 30 s on its seed corpus,
# built with clang, libFuzzer, ASan and UBSan: any crash, hang or huge allocation fails CI.
stage "fuzzing"
scripts/fuzz.sh 30

# The Python package's tests (the package was installed above; they use the graphtier command built
# there to make their datasets).
stage "Python tests (PyTorch 1.13)"
.venv/bin/python -m pytest -q -rs --durations=12 python/tests  # -rs: skipped tests say why; the slowest 12 listed

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
"$torch2/bin/python" -m pytest -q -rs --durations=12 python/tests

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
  # The modules and the graphtier command (which links every module), compiled and linked, not run:
  # at -O0 nothing is inlined, so every inline and template function is emitted as a symbol of its
  # own. A missing instantiation or definition shows as an undefined reference; two different
  # definitions of one name, which the linker merges without a word, show in check-odr.sh (which
  # reads the modules' objects) as one symbol with two sizes. The tests' binaries are linked with
  # CUDA in the bundle's build above.
  stage "CUDA Debug build and check-odr"
  cmake --preset cuda-debug >/dev/null
  cmake --build --preset cuda-debug -j "$jobs"
  scripts/check-odr.sh build/cuda-debug
else
  echo "test.sh: nvcc not found, CUDA build skipped" >&2
fi
stage "passed"
