#!/usr/bin/env bash
# The main job until the training loop lands: set up, build, convert Cora with the Planetoid
# split, rank and renumber it by weighted reverse PageRank, and print its summary.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cmake --preset cpu >/dev/null
cmake --build --preset cpu -j "$(nproc)" --target graphtier
gt=build/cpu/graphtier
mkdir -p data
$gt convert planetoid --root ../shared/datasets/cora --name cora --out data/cora --overwrite
$gt prepare --dataset data/cora --out data/cora-wrpr --hotness wrpr --overwrite
$gt verify data/cora-wrpr
$gt info data/cora-wrpr --gpu-budget 10% --cpu-budget 30%
