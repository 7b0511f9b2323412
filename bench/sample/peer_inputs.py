"""What the peer sampling benches (homo_peer_bench.py, hetero_sampler_bench.py) give every sampler
alike: a dataset's CSC read as the peers take it, and its training seeds in batches."""

import json
import os

import numpy as np
import torch


def read_csc(path, typed):
    """The manifest, indptr and int64 indices of the dataset at `path`, and its type_per_edge when
    `typed` (a dataset of the other kind is a SystemExit naming the bench to use)."""
    manifest = json.load(open(os.path.join(path, "manifest.json")))
    if ("hetero" in manifest) != typed:
        raise SystemExit(f"{path}: {'not ' if typed else ''}a typed dataset; use bench/sample/"
                         f"{'homo_peer_bench.py' if typed else 'hetero_sampler_bench.py'}")
    indptr = torch.from_numpy(np.fromfile(os.path.join(path, "indptr.bin"), dtype=np.int64))
    indices = torch.from_numpy(np.fromfile(os.path.join(path, "indices.bin"), dtype=manifest["indices_dtype"]))
    out = [manifest, indptr, indices.to(torch.int64)]
    if typed:
        out.append(torch.from_numpy(np.fromfile(os.path.join(path, "type_per_edge.bin"), dtype=np.uint8)))
    return tuple(out)


def seed_batches(dataset, batch, path):
    """The training ids of `dataset` (a graphtier.Dataset) shuffled with seed 0, in whole batches of
    `batch` (too few for one is a SystemExit)."""
    train = dataset.split("train").to(torch.int64)
    order = train[torch.randperm(train.numel(), generator=torch.Generator().manual_seed(0))]
    batches = [order[i:i + batch] for i in range(0, order.numel() - batch + 1, batch)]
    if not batches:
        raise SystemExit(f"{path}: fewer than --batch {batch} training seeds")
    return batches
