#!/usr/bin/env bash
# Sets up, builds and runs every test: the CPU build, the same tests again under AddressSanitizer
# and UndefinedBehaviorSanitizer, the Python package and its tests, then the CUDA build (compiled
# whenever nvcc is present; its GPU tests skip visibly on a machine without a GPU) and the Debug
# CUDA build (compiled only).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
jobs=$(nproc)

cmake --preset cpu >/dev/null
cmake --build --preset cpu -j "$jobs"
ctest --preset cpu -j "$jobs"

# The whole C++ suite again, built with ASan + UBSan (Debug): a read past a buffer, a leak, a signed
# overflow or a misaligned load fails its test here instead of passing by luck.
cmake --preset sanitize >/dev/null
cmake --build --preset sanitize -j "$jobs"
ctest --preset sanitize -j "$jobs"

# The Python package, built the way users build it (pip install .), and its tests (they use the
# graphtier command built above to make their datasets).
.venv/bin/python -m pip install -q --no-build-isolation .
.venv/bin/python -m pytest -q -rs python/tests  # -rs: skipped tests say why

# The same suite on a current PyTorch 2.x with torch_geometric from PyPI, where the PyG-compatible
# loader's tests run, in a venv kept outside the clone (scripts/setup-torch2.sh: several GB, once per
# machine). It gets the package built above as a wheel: `pip install .` from a second venv would
# compile the engine again from scratch (scikit-build-core clears a build directory that another
# environment's scikit-build-core configured).
torch2=$(scripts/setup-torch2.sh)
rm -rf build/wheel
.venv/bin/python -m pip wheel -q --no-build-isolation --no-deps -w build/wheel .
"$torch2/bin/python" -m pip install -q --no-deps --force-reinstall build/wheel/graphtier-*.whl
"$torch2/bin/python" -m pytest -q -rs python/tests

if command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH="$PATH:/usr/local/cuda/bin"
  cmake --preset cuda >/dev/null
  cmake --build --preset cuda -j "$jobs"
  ctest --preset cuda -j "$jobs"
  # Compiled and linked, not run: at -O0 nothing is inlined, so every inline and template function
  # is emitted as a symbol of its own. A missing instantiation or definition shows as an undefined
  # reference; two different definitions of one name, which the linker merges without a word, show
  # in check-odr.sh as one symbol with two sizes.
  cmake --preset cuda-debug >/dev/null
  cmake --build --preset cuda-debug -j "$jobs"
  scripts/check-odr.sh build/cuda-debug
else
  echo "test.sh: nvcc not found, CUDA build skipped" >&2
fi
