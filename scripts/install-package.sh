#!/usr/bin/env bash
# pip install .[planetoid] into .venv (the extra: scipy, for Planetoid conversion), built in
# build/cpu with the cpu preset's options (build type, tests and benchmarks on) plus the
# extension: the preset's build and the wheel's are one build, so
# scripts/demo.sh and scripts/test.sh compile the engine once, and build/cpu/graphtier,
# build/cpu/bench/* and ctest --preset cpu use the same objects as the installed package.
#   scripts/install-package.sh [TARGETS]              TARGETS: ;-separated CMake targets (default: all)
#   scripts/install-package.sh --wheel DIR            the same build as a wheel in DIR, installed nowhere
#                                                     (for another environment: scripts/test.sh's torch 2.x)
set -euo pipefail
cd "$(dirname "$0")/.."
wheel_dir=""
if [ "${1:-}" = "--wheel" ]; then
  wheel_dir="${2:?--wheel needs a directory}"
  shift 2
fi
settings=(--config-settings=build-dir=build/cpu --config-settings=cmake.build-type=RelWithDebInfo
          --config-settings=cmake.define.GRAPHTIER_TESTS=ON --config-settings=cmake.define.GRAPHTIER_BENCH=ON
          --config-settings=install.strip=true)
if [ -n "${1:-}" ]; then
  settings+=(--config-settings="build.targets=$1")
fi
# scipy at a version for the numpy already there (Debian's, which its PyTorch 1.13 was built against),
# never a newer numpy in its place.
if [ -n "$wheel_dir" ]; then
  exec .venv/bin/python -m pip wheel -q --no-build-isolation --no-deps "${settings[@]}" -w "$wheel_dir" .
fi
numpy_version=$(.venv/bin/python -c "import numpy; print(numpy.__version__)")
.venv/bin/python -m pip install -q --no-build-isolation "${settings[@]}" ".[planetoid]" "numpy==$numpy_version"
