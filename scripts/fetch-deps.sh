#!/usr/bin/env bash
# Downloads the Debian packages of graphtier's C++ build dependencies into .deps/ (ignored by git),
# for a machine that has a compiler but cannot fetch them: the GPU machine. Name .deps in the
# device call's carry; scripts/gpu-check.sh unpacks them into .deps/root and builds against them.
# Debian 12's packages need glibc 2.36 at most, so they run on the GPU image's newer system.
# The runtime zlib is left out: every system has one (gpu-check links against the machine's own).
set -euo pipefail
cd "$(dirname "$0")/.."
debs=(liburing-dev liburing2 libxxhash-dev libxxhash0 nlohmann-json3-dev libcli11-dev
      libgtest-dev zlib1g-dev)
rm -rf .deps.tmp && mkdir -p .deps.tmp
# apt-get download runs as _apt when it can: the folder must be writable by it.
chmod 777 .deps.tmp
(cd .deps.tmp && apt-get download -q "${debs[@]}")
rm -rf .deps && mv .deps.tmp .deps
ls -l .deps
