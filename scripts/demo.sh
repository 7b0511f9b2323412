#!/usr/bin/env bash
# The main job: set up, build the engine and the Python package, convert Cora with the Planetoid
# split, rank and renumber it by weighted reverse PageRank, and train GraphSAGE on it through the
# pipelined loader, printing per-epoch statistics and the test accuracy. Extra arguments go to
# `python -m graphtier.train` (e.g. --model ladies, --cpu-buffer 0 to read every row from disk).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
# shellcheck source=scripts/compiler-cache.sh
source scripts/compiler-cache.sh
cmake --preset cpu >/dev/null
# One build: the package (extension and the `graphtier` command, installed into .venv/bin) and the
# benchmarks, in build/cpu (scripts/install-package.sh).
scripts/install-package.sh "_core;graphtier;benches"
gt=.venv/bin/graphtier
mkdir -p data
$gt convert planetoid --root datasets/cora --name cora --out data/cora --overwrite
$gt prepare --dataset data/cora --out data/cora-wrpr --hotness wrpr --overwrite
$gt verify data/cora-wrpr
.venv/bin/python -m graphtier.train data/cora-wrpr --epochs 30 --batch-size 64 "$@"
