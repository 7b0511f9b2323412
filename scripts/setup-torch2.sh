#!/usr/bin/env bash
# Creates the Python environment that the suite also runs in besides .venv: a current PyTorch 2.x and
# torch_geometric from PyPI (the PyG-compatible loader's tests need them; Debian's torch 1.13 has no
# torch_geometric), numpy, scipy (the planetoid extra), pytest, matplotlib, and the build
# requirements (scikit-build-core, nanobind). scripts/test.sh installs into it the wheel of the
# package built in .venv (scripts/install-package.sh --wheel): the extension links no libtorch.
# It lives outside the repository, at $GRAPHTIER_TORCH2_VENV (default
# ~/.cache/graphtier/venv-torch2), so a machine downloads PyTorch's CUDA wheels (several GB) once.
# Idempotent: does nothing when everything is present. Prints the venv's path on stdout.
set -euo pipefail

venv="${GRAPHTIER_TORCH2_VENV:-$HOME/.cache/graphtier/venv-torch2}"
if [ ! -x "$venv/bin/python" ]; then
  echo "setup-torch2: creating $venv" >&2
  mkdir -p "$(dirname "$venv")"
  /usr/bin/python3 -m venv "$venv"
fi
check='import torch, torch_geometric, numpy, scipy, pytest, xdist, scikit_build_core, nanobind, matplotlib
assert int(torch.__version__.split(".")[0]) >= 2, torch.__version__'
if ! "$venv/bin/python" -c "$check" 2>/dev/null; then
  echo "setup-torch2: installing torch 2.x, torch_geometric and the test tools into $venv (several GB, once)" >&2
  "$venv/bin/python" -m pip install -q --upgrade pip
  "$venv/bin/python" -m pip install -q "torch>=2" torch_geometric numpy scipy pytest pytest-xdist scikit-build-core nanobind matplotlib
  "$venv/bin/python" -c "$check"
fi
echo "$venv"
