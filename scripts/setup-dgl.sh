#!/usr/bin/env bash
# Creates the Python environment where graphtier.dgl's tests run against real DGL: DGL 2.1.0, the
# last release on PyPI, with the PyTorch it was built for (2.2.1) and the versions of its
# dependencies it imports cleanly with (torchdata before datapipes left it, numpy 1.x, setuptools
# with setuptools.extern), and pytest. scripts/test.sh installs into it the wheel of the package built
# in .venv, as into the torch 2.x venv. It lives outside the repository, at $GRAPHTIER_DGL_VENV
# (default ~/.cache/graphtier/venv-dgl), so a machine downloads PyTorch's wheels (several GB) once.
# Idempotent: does nothing when everything is present. Prints the venv's path on stdout; exits 1,
# saying why, when DGL cannot be installed (the caller then skips the DGL tests visibly).
set -euo pipefail

venv="${GRAPHTIER_DGL_VENV:-$HOME/.cache/graphtier/venv-dgl}"
check='import torch, dgl, dgl.nn, dgl.dataloading, numpy, pytest
assert dgl.__version__ == "2.1.0", dgl.__version__'
if [ ! -x "$venv/bin/python" ]; then
  echo "setup-dgl: creating $venv" >&2
  mkdir -p "$(dirname "$venv")"
  /usr/bin/python3 -m venv "$venv"
fi
if ! "$venv/bin/python" -c "$check" 2>/dev/null; then
  echo "setup-dgl: installing PyTorch 2.2.1, DGL 2.1.0 and the test tools into $venv (several GB, once)" >&2
  if ! "$venv/bin/python" -m pip install -q "torch==2.2.1" "dgl==2.1.0" "torchdata==0.7.1" "numpy<2" "pandas<2.2" \
      pydantic "scipy<1.14" "setuptools<70" pyyaml pytest >&2; then
    echo "setup-dgl: pip could not install DGL 2.1.0 with PyTorch 2.2.1 into $venv" >&2
    exit 1
  fi
  if ! "$venv/bin/python" -c "$check" >&2; then
    echo "setup-dgl: DGL was installed into $venv but does not import (above)" >&2
    exit 1
  fi
fi
echo "$venv"
