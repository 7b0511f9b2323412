"""Property tests of every public entry point that takes node ids, masks, node types or a dataset
(issue 49, the class of §1): seeded random wrong inputs get a clear error of the documented type
(IndexError for an id outside its range, TypeError for a dtype that is not ids, ValueError for a
shape, a mask length, a node type or a numbering that does not fit), never a crash and never a
batch; random right inputs give the nodes, labels and rows a naive reference gives.

The entry points: graphtier.NeighborLoader and LayerLoader (`dataset`, `ids=`: ids or a mask,
typed {type: ids}; `split=`), FeatureStore.gather, TypedFeatureStore.gather(node_type, ids),
Dataset.to_original / from_original / split / type_features, and the adapters' seeds,
graphtier.pyg.NeighborLoader's `input_nodes` and graphtier.dgl.DataLoader's `indices` (where their
framework is installed). The rules they follow: docs/architecture.md, "Node ids and their
numberings"."""

from pathlib import Path

import numpy as np
import pytest
import torch

import graphtier
from conftest import has_module

SEEDS = range(6)


def _errors(entry, cases):
    """Each (label, value, exception, regex) of `cases` through `entry(value)`: the exception, with
    its message."""
    for label, value, error, pattern in cases:
        with pytest.raises(error, match=pattern):
            entry(value)
            pytest.fail(f"{label}: accepted")


def wrong_ids(rng, n: int, name: str = "ids"):
    """Random wrong ids for a range of `n` nodes: (label, value, exception, message regex)."""
    k = int(rng.integers(1, 8))
    good = rng.integers(0, n, k)
    past = good.copy()
    past[rng.integers(0, k)] = n + int(rng.integers(0, 1000))
    negative = good.copy()
    negative[rng.integers(0, k)] = -1 - int(rng.integers(0, 1000))
    short = int(rng.integers(1, n))
    return [
        ("past the end", torch.from_numpy(past), IndexError, rf"\b{past.max()}\b.*\[0, {n}\)"),
        ("negative", negative.tolist(), IndexError, rf"{negative.min()}\b.*\[0, {n}\)"),
        ("float ids", torch.from_numpy(good.astype(np.float64) + rng.random(k)), TypeError,
         rf"{name}.*expected integer node ids, got float64"),
        ("float mask", torch.ones(n, dtype=torch.float32), TypeError,
         rf"{name}.*expected integer node ids, got float32"),
        ("mask too short", torch.ones(short, dtype=torch.bool), ValueError,
         rf"{name}.*a bool mask needs one entry per node \({n}\), got {short}"),
        ("mask too long", np.ones(n + k, dtype=bool), ValueError,
         rf"{name}.*a bool mask needs one entry per node \({n}\), got {n + k}"),
        ("two dimensions", torch.from_numpy(good).reshape(1, -1), ValueError, rf"{name}.* must be one-dimensional"),
        ("strings", [str(v) for v in good], TypeError, rf"{name}.*expected integer node ids, got str"),
    ]


def right_ids(rng, n: int):
    """Random right ids for `n` nodes, distinct, in random order: (the value, the ids it means in
    order)."""
    k = int(rng.integers(1, min(n, 200)))
    ids = torch.from_numpy(rng.choice(n, k, replace=False).astype(np.int64))
    mask = torch.from_numpy(rng.random(n) < 0.05)
    mask[int(rng.integers(0, n))] = True
    return [(ids, ids), (ids.to(torch.int32), ids), (ids.numpy(), ids), (ids.tolist(), ids),
            (mask, torch.nonzero(mask).flatten()), (mask.numpy(), torch.nonzero(mask).flatten())]


def _seeds(loader) -> torch.Tensor:
    return torch.cat([b.seeds for b in loader])


def _features(path: str, ds) -> torch.Tensor:
    """The naive reference for FeatureStore rows: features.bin read whole (Cora's rows are packed)."""
    return torch.from_numpy(np.fromfile(Path(path, "features.bin"), dtype=np.float32).reshape(ds.num_nodes, -1))


# -- homogeneous ----------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", SEEDS)
def test_loaders_refuse_random_wrong_ids_and_take_random_right_ones(cora, seed):
    rng = np.random.default_rng(seed)
    ds = graphtier.Dataset(cora)
    n = ds.num_nodes
    for numbering in ("prepared", "original"):
        _errors(lambda v: graphtier.NeighborLoader(ds, [2], 4, ids=v, ids_numbering=numbering, features=False),
                wrong_ids(rng, n))
    _errors(lambda v: graphtier.LayerLoader(ds, [4], 4, ids=v, ids_numbering="prepared", cpu_buffer="0"),
            wrong_ids(rng, n))
    # A renumbered dataset: either numbering is plausible for any ids, so none is assumed.
    value, _ = right_ids(rng, n)[0]
    with pytest.raises(ValueError, match="ids_numbering"):
        graphtier.NeighborLoader(ds, [2], 4, ids=value, features=False)
    labels = ds.labels().to(torch.int64)
    for value, expected in right_ids(rng, n):
        loader = graphtier.NeighborLoader(ds, [2], 64, ids=value, ids_numbering="prepared", shuffle=False,
                                          features=False)
        batches = list(loader)
        assert torch.equal(torch.cat([b.seeds for b in batches]), expected)
        assert torch.equal(torch.cat([b.y for b in batches]).to(torch.int64), labels[expected])
        original = graphtier.NeighborLoader(ds, [2], 64, ids=value, ids_numbering="original", shuffle=False,
                                            features=False)
        assert torch.equal(_seeds(original), ds.from_original(expected))


@pytest.mark.parametrize("seed", SEEDS)
def test_gathers_and_id_maps_refuse_random_wrong_ids_and_match_the_reference(cora, seed):
    rng = np.random.default_rng(100 + seed)
    ds = graphtier.Dataset(cora)
    n = ds.num_nodes
    store = graphtier.FeatureStore(ds)
    _errors(store.gather, wrong_ids(rng, n))
    _errors(ds.to_original, wrong_ids(rng, n))
    _errors(ds.from_original, wrong_ids(rng, n))
    table = _features(cora, ds)
    permutation = torch.from_numpy(np.fromfile(Path(cora, "permutation.bin"), dtype=np.int64))
    for value, expected in right_ids(rng, n):
        assert torch.equal(store.gather(value), table[expected])
        assert torch.equal(ds.to_original(value), permutation[expected])
        inverse = torch.empty_like(permutation)
        inverse[permutation] = torch.arange(n)
        assert torch.equal(ds.from_original(value), inverse[expected])


def test_datasets_and_splits_that_are_not_are_named(cora, tmp_path):
    ds = graphtier.Dataset(cora)
    for wrong in (123, {"path": cora}, ds.split("train")):
        with pytest.raises(TypeError, match="dataset: expected a graphtier.Dataset or a dataset directory"):
            graphtier.NeighborLoader(wrong, [2], split="train")
    with pytest.raises(OSError, match="not a graphtier dataset directory"):
        graphtier.NeighborLoader(str(tmp_path / "none"), [2], split="train")
    for name in ("everything", "Train", ""):
        with pytest.raises(ValueError, match="unknown split"):
            ds.split(name)
        with pytest.raises(ValueError, match="unknown split"):
            graphtier.NeighborLoader(ds, [2], split=name)
    with pytest.raises(ValueError, match="give exactly one of split= and ids="):
        graphtier.NeighborLoader(ds, [2], split="train", ids=[0], ids_numbering="prepared")


# -- typed ----------------------------------------------------------------------------------------

def wrong_typed_seeds(rng, ds, name: str = "ids"):
    """Random wrong seeds of a typed dataset as {type: ids}, with the exception and message."""
    labelled = ds.labelled_type
    begin, end = ds.node_type_ranges[labelled]
    count = end - begin
    other = next(t for t in ds.node_types if t != labelled)
    cases = [(label, {labelled: value}, error, pattern) for label, value, error, pattern in wrong_ids(rng, count, name)]
    k = int(rng.integers(1, 8))
    glob = torch.from_numpy(rng.integers(begin, end, k))
    glob[0] = end - 1  # a global paper id past the type's count
    cases += [
        ("global ids as ids within the type", {labelled: glob}, IndexError,
         rf"{name}\['{labelled}'\]: node id {end - 1} is outside type '{labelled}''s ids \[0, {count}\)"),
        ("bare global ids", glob, ValueError, rf"{name}: the dataset is typed"),
        ("bare global mask", torch.ones(ds.num_nodes, dtype=torch.bool), ValueError, rf"{name}: the dataset is typed"),
        ("unknown type", {labelled.upper() + "x": [0]}, ValueError,
         rf"{name}: unknown node type '{labelled.upper()}x'"),
        ("another type", {other: [0]}, ValueError, rf"{name}: seeds of one node type, the labelled type '{labelled}'"),
        ("two types", {labelled: [0], other: [0]}, ValueError, rf"{name}: seeds of one node type"),
        ("no type", {}, ValueError, rf"{name}: seeds of one node type"),
    ]
    return cases


def right_typed_seeds(rng, ds):
    """Random right seeds as {labelled type: ids or mask within it}, and the local ids they mean."""
    labelled = ds.labelled_type
    begin, end = ds.node_type_ranges[labelled]
    return [({labelled: value}, expected) for value, expected in right_ids(rng, end - begin)]


@pytest.mark.parametrize("seed", SEEDS)
def test_typed_loaders_refuse_random_wrong_seeds_and_take_random_right_ones(typed_late, seed):
    rng = np.random.default_rng(200 + seed)
    ds = graphtier.Dataset(typed_late)
    _errors(lambda v: graphtier.NeighborLoader(ds, [2], 4, ids=v, features=False), wrong_typed_seeds(rng, ds))
    labelled = ds.labelled_type
    begin = ds.node_type_ranges[labelled][0]
    labels = ds.labels().to(torch.int64)
    table = ds.type_features(labelled)
    for value, local in right_typed_seeds(rng, ds):
        batches = list(graphtier.NeighborLoader(ds, [2], 64, ids=value, shuffle=False))
        assert torch.equal(torch.cat([b.seeds for b in batches]), local + begin)
        assert torch.equal(torch.cat([b.y for b in batches]).to(torch.int64), labels[local + begin])
        for b in batches:
            assert torch.equal(b.x_dict[labelled][: b.num_seeds], table[b.seeds - begin])


@pytest.mark.parametrize("seed", SEEDS)
def test_typed_gathers_refuse_random_wrong_ids_and_match_the_tables(typed_late, seed):
    rng = np.random.default_rng(300 + seed)
    ds = graphtier.Dataset(typed_late)
    store = graphtier.TypedFeatureStore(ds, threads=1)
    for t, (begin, end) in ds.node_type_ranges.items():
        _errors(lambda v: store.gather(t, v), wrong_ids(rng, end - begin))
        table = ds.type_features(t)
        for value, expected in right_ids(rng, end - begin):
            assert torch.equal(store.gather(t, value), table[expected])
    for wrong in ("Paper", "venue", ""):
        with pytest.raises(ValueError, match=rf"unknown node type '{wrong}'"):
            store.gather(wrong, [0])
        with pytest.raises(ValueError, match=rf"has no node type '{wrong}'"):
            ds.type_features(wrong)


# -- the adapters ---------------------------------------------------------------------------------

@pytest.mark.skipif(not has_module("torch_geometric"), reason="torch_geometric is not installed")
@pytest.mark.parametrize("seed", SEEDS[:3])
def test_pyg_input_nodes_wrong_and_right(cora, typed_late, seed):
    from graphtier.pyg import NeighborLoader
    rng = np.random.default_rng(400 + seed)
    homo = graphtier.Dataset(cora)
    _errors(lambda v: NeighborLoader(homo, [2], input_nodes=v, batch_size=4, ids_numbering="prepared"),
            wrong_ids(rng, homo.num_nodes, "input_nodes"))
    ds = graphtier.Dataset(typed_late)
    pairs = [(label, tuple(value.items())[0] if isinstance(value, dict) and len(value) == 1 else value, error, pattern)
             for label, value, error, pattern in wrong_typed_seeds(rng, ds, "input_nodes")
             if label not in ("two types", "no type")]
    for label, value, error, pattern in pairs:
        if label in ("bare global ids", "bare global mask"):
            pattern = "input_nodes: on a typed dataset"
        with pytest.raises(error, match=pattern):
            NeighborLoader(ds, [2], input_nodes=value, batch_size=4)
    labelled = ds.labelled_type
    for value, local in right_typed_seeds(rng, ds):
        batches = list(NeighborLoader(ds, [2], input_nodes=(labelled, value[labelled]), batch_size=64))
        assert torch.equal(torch.cat([b[labelled].n_id[: b[labelled].batch_size] for b in batches]), local)


@pytest.mark.skipif(not has_module("dgl"), reason="dgl is not installed")
@pytest.mark.parametrize("seed", SEEDS[:3])
def test_dgl_indices_wrong_and_right(cora, typed_late, seed):
    from graphtier.dgl import DataLoader, NeighborSampler
    rng = np.random.default_rng(500 + seed)
    homo = graphtier.Dataset(cora)
    _errors(lambda v: DataLoader(homo, v, NeighborSampler([2]), batch_size=4, ids_numbering="prepared"),
            wrong_ids(rng, homo.num_nodes, "indices"))
    ds = graphtier.Dataset(typed_late)
    _errors(lambda v: DataLoader(ds, v, NeighborSampler([2]), batch_size=4), wrong_typed_seeds(rng, ds, "indices"))
    labelled = ds.labelled_type
    for value, local in right_typed_seeds(rng, ds):
        out = torch.cat([o[labelled] for _, o, _ in DataLoader(ds, value, NeighborSampler([2]), batch_size=64)])
        assert torch.equal(out, local)
