#!/usr/bin/env bash
# Installs what graphtier builds and tests with, from Debian's packages and PyPI. Idempotent:
# does nothing when everything is present.
set -euo pipefail

debs=(cmake ninja-build g++ libgtest-dev libbenchmark-dev libcli11-dev nlohmann-json3-dev
      libxxhash-dev zlib1g-dev liburing-dev python3 python3-pip)
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
