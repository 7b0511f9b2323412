#!/usr/bin/env bash
# Installs what graphtier builds and tests with, from Debian's packages and PyPI, and the Python
# environment .venv (Debian's python3 with its PyTorch 1.13, plus nanobind, scikit-build-core and
# matplotlib from PyPI) that `pip install .` builds the package into. Idempotent: does nothing when
# everything is present. (libopenblas0-pthread: Debian's torch otherwise runs its matrix products on
# the reference BLAS, 8x slower.) clang builds the fuzz targets (the fuzz preset); `setup.sh --fuzz`
# also installs atheris, the fuzzer of the Python target, into .venv (scripts/fuzz.sh asks for it).
set -euo pipefail

debs=(cmake ninja-build ccache g++ libgtest-dev libcli11-dev nlohmann-json3-dev
      libxxhash-dev zlib1g-dev liburing-dev python3 python3-pip
      python3-venv python3-torch python3-pytest libopenblas0-pthread clang)
missing=()
for p in "${debs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}" >/dev/null
fi
if ! python3 -c "import numpy, scipy" 2>/dev/null; then
  echo "setup: installing numpy and scipy" >&2
  python3 -m pip install -q numpy scipy 2>/dev/null || python3 -m pip install -q --break-system-packages numpy scipy
fi

cd "$(dirname "$0")/.."
# .venv is a link to a venv outside the clone ($GRAPHTIER_VENV, default ~/.cache/graphtier/venv,
# beside the torch 2.x and DGL venvs), so a fresh clone (CI's) finds it made; a .venv that is a
# directory of its own (an older checkout's) is used as it is.
if [ ! -d .venv ] || [ -L .venv ]; then
  venv="${GRAPHTIER_VENV:-$HOME/.cache/graphtier/venv}"
  if [ ! -x "$venv/bin/python" ]; then
    echo "setup: creating $venv (Debian's python3 and PyTorch)" >&2
    mkdir -p "$(dirname "$venv")"
    /usr/bin/python3 -m venv --system-site-packages "$venv"
  fi
  ln -sfn "$venv" .venv
fi
if ! .venv/bin/python -c "import nanobind, scikit_build_core" 2>/dev/null; then
  echo "setup: installing nanobind and scikit-build-core into .venv" >&2
  .venv/bin/python -m pip install -q nanobind scikit-build-core
fi
if ! .venv/bin/python -c "import xdist" 2>/dev/null; then
  echo "setup: installing pytest-xdist into .venv (scripts/test.sh runs the suite on two workers)" >&2
  .venv/bin/python -m pip install -q pytest-xdist
fi
if ! .venv/bin/python -c "import matplotlib" 2>/dev/null; then
  echo "setup: installing matplotlib into .venv (train --plot, scripts/plots.py)" >&2
  # With the numpy that Debian's torch was built against: a newer one from PyPI would shadow it, and
  # torch 1.13 then has no numpy ("Numpy is not available").
  numpy_version=$(.venv/bin/python -c "import numpy; print(numpy.__version__)")
  .venv/bin/python -m pip install -q matplotlib "numpy==$numpy_version"
fi
if [ "${1:-}" = "--fuzz" ] && ! .venv/bin/python -c "import atheris" 2>/dev/null; then
  echo "setup: installing atheris into .venv" >&2
  .venv/bin/python -m pip install -q atheris ||
    echo "setup: atheris could not be installed; scripts/fuzz.sh fuzzes the checkpoint reader with its own mutation loop" >&2
fi
