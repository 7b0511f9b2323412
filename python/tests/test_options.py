"""Node numberings (Dataset.to_original / from_original, the loaders' ids_numbering) and the option
types (LoaderOptions, FeatureStoreOptions, Budget) as the Python layer takes them."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

import graphtier


def _raw(cora: str) -> str:
    """The Cora conftest converted before `prepare` renumbered it: the original numbering."""
    return str(Path(cora).parent / "raw")


def test_id_maps_of_a_prepared_dataset_follow_its_rows(cora):
    prepared, raw = graphtier.Dataset(cora), graphtier.Dataset(_raw(cora))
    assert prepared.prepared and not raw.prepared
    everything = torch.arange(prepared.num_nodes)
    to_original = prepared.to_original(everything)
    assert not torch.equal(to_original, everything), "wrpr renumbered Cora"
    # Node v of the converted input is node from_original(v) of the prepared dataset: same label.
    original = torch.tensor([0, 5, 2707, 5, 1000])
    mapped = prepared.from_original(original)
    assert torch.equal(prepared.labels()[mapped], raw.labels()[original])
    assert torch.equal(prepared.to_original(mapped), original)
    assert torch.equal(prepared.from_original(to_original), everything)
    # A mask over the original nodes is their ids.
    mask = torch.zeros(prepared.num_nodes, dtype=torch.bool)
    mask[[7, 3]] = True
    assert torch.equal(prepared.from_original(mask), prepared.from_original([3, 7]))


def test_id_maps_are_the_identity_without_a_renumbering_and_refuse_bad_ids(cora):
    raw, prepared = graphtier.Dataset(_raw(cora)), graphtier.Dataset(cora)
    ids = torch.tensor([9, 0, 4])
    assert torch.equal(raw.to_original(ids), ids) and torch.equal(raw.from_original(ids), ids)
    with pytest.raises(IndexError, match="original node id 2708 at position 1 is out of range"):
        prepared.from_original([0, 2708])
    with pytest.raises(IndexError, match="prepared node id -1 at position 0"):
        prepared.to_original([-1])
    with pytest.raises(TypeError):
        prepared.to_original([0.5])
    assert prepared.to_original([]).numel() == 0


def test_loader_ids_in_the_original_numbering(cora):
    ds = graphtier.Dataset(cora)
    original = torch.tensor([12, 7, 2000, 31, 5])
    seeds = []
    for numbering, ids in (("original", original), ("prepared", ds.from_original(original))):
        loader = graphtier.NeighborLoader(ds, [3], batch_size=2, ids=ids, shuffle=False, ids_numbering=numbering,
                                          features=False)
        seeds.append(torch.cat([b.seeds for b in loader]))
    assert torch.equal(seeds[0], ds.from_original(original)), "batches are in the dataset's own numbering"
    assert torch.equal(seeds[0], seeds[1])
    with pytest.raises(ValueError, match="renumbered by `graphtier prepare`"):  # no default: either is plausible
        graphtier.NeighborLoader(ds, [3], batch_size=8, ids=original, shuffle=False, features=False)
    with pytest.raises(IndexError, match="original node id 2708"):
        graphtier.NeighborLoader(ds, [3], ids=[1, 2708], ids_numbering="original")
    with pytest.raises(ValueError, match="applies to ids given, not to a split"):
        graphtier.NeighborLoader(ds, [3], split="train", ids_numbering="original")
    with pytest.raises(ValueError, match="unknown node numbering 'renumbered'"):
        graphtier.NeighborLoader(ds, [3], ids=[1], ids_numbering="renumbered")


def test_pyg_loader_takes_an_original_mask(cora):
    pytest.importorskip("torch_geometric")
    from graphtier.pyg import NeighborLoader

    ds = graphtier.Dataset(cora)
    mask = torch.zeros(ds.num_nodes, dtype=torch.bool)
    mask[[4, 40, 400]] = True
    loader = NeighborLoader(ds, num_neighbors=[2], input_nodes=mask, batch_size=3, ids_numbering="original")
    batch = next(iter(loader))
    seeds = batch.n_id[: batch.batch_size]
    assert sorted(ds.to_original(seeds).tolist()) == [4, 40, 400]
    assert torch.equal(loader.input_nodes[batch.input_id], ds.to_original(seeds))
    given = torch.tensor([400, 4, 40, 7])
    shuffled = NeighborLoader(ds, num_neighbors=[2], input_nodes=given, batch_size=3, shuffle=True,
                              ids_numbering="original")
    positions = []
    for b in shuffled:
        assert torch.equal(given[b.input_id], ds.to_original(b.n_id[: b.batch_size]))
        positions += b.input_id.tolist()
    assert sorted(positions) == [0, 1, 2, 3]
    by_split = NeighborLoader(ds, num_neighbors=[2], input_nodes="val", batch_size=50, shuffle=True)
    val = ds.split("val")
    for b in by_split:
        assert torch.equal(val[b.input_id], b.n_id[: b.batch_size]), "input_id: positions in the split"
    with pytest.raises(ValueError, match="dataset's own numbering"):
        NeighborLoader(ds, num_neighbors=[2], input_nodes="train", ids_numbering="original")


def test_option_types_are_the_engines(synthetic):
    o = graphtier.LoaderOptions(window=2, ids_numbering="original")
    assert (o.window, o.ids_numbering, o.batch_size, o.accumulate) == (2, "original", 1024, True)
    assert "window" in o.fields and "ids_numbering" in o.fields
    assert o.copy(window=0).window == 0 and o.window == 2 and o.copy().ids_numbering == "original"
    with pytest.raises(TypeError, match="no option 'windw'"):
        graphtier.LoaderOptions(windw=2)
    with pytest.raises(ValueError, match="unknown topology placement"):
        graphtier.LoaderOptions(topology="somewhere")
    s = graphtier.FeatureStoreOptions(gpu_cache="10%", host_cache=4096)
    assert (str(s.gpu_cache), str(s.host_cache), str(s.cpu_buffer)) == ("10%", "4096 B", "100%")
    assert s.gpu_cache == graphtier.Budget("10%")
    with pytest.raises(ValueError, match="percentage budget"):
        graphtier.FeatureStoreOptions(cpu_buffer="120%")
    with pytest.raises(TypeError):
        graphtier.FeatureStoreOptions(cpu_buffer=0.5)  # a budget is bytes or text, not a fraction
    store = graphtier.FeatureStore(synthetic, s, gpu_cache=0, host_cache="0")  # keywords override the object
    assert store.tiers["host_cache_rows"] == 0 and store.tiers["cpu_end"] == store.num_nodes
    with pytest.warns(DeprecationWarning, match="cpu= is deprecated"):
        old = graphtier.FeatureStore(synthetic, cpu="0")
    assert old.tiers["cpu_end"] == 0


def test_store_is_given_one_way(synthetic):
    ds = graphtier.Dataset(synthetic)
    store = graphtier.FeatureStore(ds, cpu_buffer="0")
    shared = graphtier.NeighborLoader(ds, [2], split="train", store=store, seed=3)
    assert shared.store is store
    with pytest.raises(ValueError, match="drop cpu_buffer="):
        graphtier.NeighborLoader(ds, [2], split="train", store=store, cpu_buffer="10%")
    made = graphtier.NeighborLoader(ds, [2], split="train", store=graphtier.FeatureStoreOptions(cpu_buffer="0"))
    assert made.store.tiers["cpu_end"] == 0
    with pytest.raises(TypeError, match="store: expected"):
        graphtier.NeighborLoader(ds, [2], split="train", store="10%")
    with pytest.raises(TypeError, match="set by the loader itself"):
        graphtier.NeighborLoader(ds, [2], split="train", output="device")


def test_train_flags_come_from_the_option_fields():
    out = subprocess.run([sys.executable, "-m", "graphtier.train", "--help"], check=True, capture_output=True,
                         text=True).stdout
    for flag in ("--cpu-buffer", "--gpu-hot", "--io-depth", "--window", "--no-accumulate", "--gpu-sampling",
                 "--pinned-path", "--max-merge"):
        assert flag in out
    assert "Static host (pinned) tier" in out  # the field's own doc
