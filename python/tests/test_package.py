"""The Python layer over the C++ engine: datasets, feature store and loaders through DLPack."""

import gc
from pathlib import Path

import numpy as np
import pytest
import torch

import graphtier


def _features(path: str, ds: graphtier.Dataset) -> np.ndarray:
    table = np.fromfile(Path(path) / "features.bin", dtype=np.uint8)
    return table.view(np.float32).reshape(ds.num_nodes, -1)[:, : ds.feature_dim]


def test_dataset_views_match_the_files(cora):
    ds = graphtier.Dataset(cora)
    assert (ds.num_nodes, ds.num_edges, ds.num_classes, ds.feature_dim) == (2708, 10556, 7, 1433)
    assert ds.hotness == "wrpr"
    train = ds.split("train")
    assert train.dtype == torch.int64 and train.numel() == 140
    assert torch.equal(train, torch.from_numpy(np.fromfile(Path(cora) / "train.bin", dtype=np.int64)))
    labels = ds.labels()
    assert torch.equal(labels, torch.from_numpy(np.fromfile(Path(cora) / "labels.bin", dtype=np.int32)))
    expected_train = np.fromfile(Path(cora) / "train.bin", dtype=np.int64)
    del ds
    gc.collect()
    # The views keep the memory maps alive after the Dataset is gone: same values, not freed memory.
    assert torch.equal(train, torch.from_numpy(expected_train))
    assert int(train.sum()) == int(expected_train.sum())
    assert torch.equal(labels, torch.from_numpy(np.fromfile(Path(cora) / "labels.bin", dtype=np.int32)))


def test_errors_arrive_as_python_exceptions(synthetic, tmp_path):
    with pytest.raises(OSError, match="nowhere"):
        graphtier.Dataset(str(tmp_path / "nowhere"))
    ds = graphtier.Dataset(synthetic)
    with pytest.raises(ValueError, match="unknown split"):
        ds.split("everything")
    with pytest.raises(IndexError, match=str(ds.num_nodes)):
        graphtier.NeighborLoader(ds, [5], ids=[0, ds.num_nodes])
    with pytest.raises(ValueError, match="fanout"):
        graphtier.NeighborLoader(ds, [], split="train")
    with pytest.raises(ValueError, match="batch size"):
        graphtier.NeighborLoader(ds, [5], batch_size=0, split="train")
    store = graphtier.FeatureStore(synthetic)
    with pytest.raises(IndexError, match="-1"):
        store.gather(np.array([0, -1], dtype=np.int64))
    if not graphtier.cuda_available():
        with pytest.raises(NotImplementedError, match="GRAPHTIER_CUDA"):
            graphtier.NeighborLoader(ds, [5], split="train", device="cuda")


def test_truncated_features_are_rejected_by_name(synthetic, tmp_path):
    import shutil

    bad = tmp_path / "bad"
    shutil.copytree(synthetic, bad)
    with open(bad / "features.bin", "r+b") as f:
        f.truncate(1000)
    with pytest.raises(ValueError, match="features.bin"):
        graphtier.Dataset(str(bad))


@pytest.mark.parametrize("cpu_buffer,host_cache", [("100%", "0"), ("0", "0"), ("30%", "10%")])
def test_loader_epoch_covers_every_id_with_exact_features(synthetic, cpu_buffer, host_cache):
    ds = graphtier.Dataset(synthetic)
    x_all = _features(synthetic, ds)
    labels = ds.labels().numpy()
    loader = graphtier.NeighborLoader(ds, [10, 5], batch_size=256, split="train", seed=5, cpu_buffer=cpu_buffer,
                                      host_cache=host_cache)
    assert len(loader) == 5
    for epoch in range(2):
        seen = []
        for b, batch in enumerate(loader):
            assert (batch.epoch, batch.index) == (epoch, b)
            assert batch.x.dtype == torch.float32 and batch.x.shape == (batch.input_nodes.numel(), ds.feature_dim)
            np.testing.assert_array_equal(batch.x.numpy(), x_all[batch.input_nodes.numpy()])
            np.testing.assert_array_equal(batch.y.numpy(), labels[batch.seeds.numpy()])
            assert torch.equal(batch.input_nodes[: batch.num_seeds], batch.seeds)
            for inner, outer in zip(batch.blocks, batch.blocks[1:]):
                assert torch.equal(outer.src_nodes[: outer.num_dst], inner.src_nodes)
            for block in batch.blocks:
                ei = block.edge_index
                assert ei.shape == (2, block.num_edges)
                assert int(ei[0].max()) < block.num_src and int(ei[1].max()) < block.num_dst
                assert torch.equal(torch.bincount(ei[1], minlength=block.num_dst), block.indptr[1:] - block.indptr[:-1])
            seen.append(batch.seeds)
        assert torch.equal(torch.sort(torch.cat(seen)).values, torch.sort(ds.split("train")).values)
        assert loader.position == (epoch + 1, 0)
    stats = loader.stats()
    assert stats["batches"] == 5 and stats["features"]["rows"] > 0
    assert 0 <= stats["window_wait_seconds"] < stats["seconds"]
    if cpu_buffer == "0":
        assert stats["features"]["storage"]["rows"] > 0 and stats["features"]["io"]["reads"] > 0


def test_tensors_outlive_the_loader_and_early_exit_is_clean(synthetic):
    ds = graphtier.Dataset(synthetic)
    loader = graphtier.NeighborLoader(ds, [10, 10], batch_size=16, split="train", cpu_buffer="0", host_cache="5%")
    first = next(iter(loader))  # abandons the epoch after one batch: the stages are cancelled and joined
    expected = _features(synthetic, ds)[first.input_nodes.numpy()]
    del loader
    gc.collect()
    np.testing.assert_array_equal(first.x.numpy(), expected)

    again = graphtier.NeighborLoader(ds, [10, 10], batch_size=64, split="train")
    for i, _ in enumerate(again):
        if i == 2:
            break
    assert again.position == (0, 3)
    assert sum(1 for _ in again) == len(again), "the next iteration is a fresh pass (epoch 1, whole)"
    assert again.position == (2, 0)


def test_layer_loader_blocks_carry_row_normalised_weights(synthetic):
    ds = graphtier.Dataset(synthetic)
    loader = graphtier.LayerLoader(ds, [128, 128], batch_size=64, method="ladies", split="train", seed=2)
    batch = next(iter(loader))
    for block in batch.blocks:
        assert block.weights is not None and block.weights.dtype == torch.float32
        sums = torch.zeros(block.num_dst).index_add_(0, block.dst_index, block.weights)
        torch.testing.assert_close(sums, torch.ones(block.num_dst))
    with pytest.raises(ValueError, match="method"):
        graphtier.LayerLoader(ds, [64], method="graphsaint", split="train")


def test_feature_store_gather_is_byte_exact(synthetic):
    ds = graphtier.Dataset(synthetic)
    store = graphtier.FeatureStore(synthetic, cpu_buffer="20%", host_cache="10%")
    ids = np.random.default_rng(0).integers(0, ds.num_nodes, 500)
    np.testing.assert_array_equal(store.gather(ids).numpy(), _features(synthetic, ds)[ids])
    tiers = store.tiers
    assert 0 < tiers["cpu_end"] < ds.num_nodes and tiers["host_cache_rows"] > 0


def test_gather_out_fills_the_callers_tensor_and_refuses_a_wrong_one(synthetic):
    ds = graphtier.Dataset(synthetic)
    store = graphtier.FeatureStore(synthetic, cpu_buffer="0", host_cache="10%")
    table = _features(synthetic, ds)
    out = torch.full((600, store.feature_dim), -1.0)
    for seed in (0, 1):  # the same tensor twice: a loop reusing it
        ids = np.random.default_rng(seed).integers(0, ds.num_nodes, 500)
        x = store.gather(ids, out=out)
        assert x.data_ptr() == out.data_ptr() and tuple(x.shape) == (500, store.feature_dim)
        np.testing.assert_array_equal(x.numpy(), table[ids])
    assert bool((out[500:] == -1.0).all()), "rows past len(ids) must stay untouched"
    with pytest.raises(ValueError, match="needs at least 500 rows"):
        store.gather(ids, out=torch.empty((499, store.feature_dim)))
    with pytest.raises(ValueError, match="host tensor"):
        store.gather(ids, memory="pinned", out=out)


def test_gather_into_host_memory_names_bad_memory_kinds(synthetic):
    store = graphtier.FeatureStore(synthetic)
    ids = np.array([3, 0, 3], dtype=np.int64)
    table = _features(synthetic, graphtier.Dataset(synthetic))
    np.testing.assert_array_equal(store.gather(ids, memory="host").numpy(), table[ids])
    with pytest.raises(ValueError, match="unknown output memory 'gpu'"):
        store.gather(ids, memory="gpu")


def test_loader_options_bind_by_name_and_a_wrong_name_fails(synthetic, monkeypatch):
    ds = graphtier.Dataset(synthetic)
    calls = []
    real = graphtier.loader._core.Loader

    def spy(*args, **kwargs):
        calls.append((args, kwargs))
        return real(*args, **kwargs)

    monkeypatch.setattr(graphtier.loader._core, "Loader", spy)
    loader = graphtier.NeighborLoader(ds, [4, 3], batch_size=100, split="train", seed=9, window=2, prefetch=3)
    monkeypatch.undo()
    (args, kwargs), = calls
    assert args == (), "the Python layer passes every argument by name"
    o = kwargs["options"]
    assert isinstance(o, graphtier.LoaderOptions)
    assert (o.batch_size, o.seed, o.window, o.prefetch) == (100, 9, 2, 3)
    assert o.fanouts == [4, 3] and len(loader) == 12  # 1200 train ids in batches of 100
    for name in kwargs:
        missing = {k: v for k, v in kwargs.items() if k != name}
        with pytest.raises(TypeError):
            real(**missing)
        misspelt = dict(missing)
        misspelt[name + "s"] = kwargs[name]
        with pytest.raises(TypeError):
            real(**misspelt)
    with pytest.raises(TypeError):
        real(*kwargs.values())  # positionally: refused, not bound by position
    with pytest.raises(TypeError, match="unknown option 'batchsize'"):
        graphtier.NeighborLoader(ds, [4], split="train", batchsize=100)
    with pytest.raises(TypeError):
        graphtier.FeatureStore(synthetic, "10%")  # budgets by name only
    with pytest.raises(TypeError, match="graphtier.Dataset"):
        graphtier.FeatureStore(42)


def test_loader_store_uses_the_open_dataset_without_reopening_it(synthetic, tmp_path):
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(synthetic, copy)
    ds = graphtier.Dataset(str(copy))
    x_all = _features(str(copy), ds)
    # The open Dataset maps the topology; any second open of the directory now fails.
    (copy / "indptr.bin").unlink()
    (copy / "indices.bin").unlink()
    with pytest.raises(OSError, match=r"(indices|indptr)\.bin: cannot open"):
        graphtier.Dataset(str(copy))
    loader = graphtier.NeighborLoader(ds, [5, 5], batch_size=64, split="train", cpu_buffer="30%")
    batch = next(iter(loader))
    np.testing.assert_array_equal(batch.x.numpy(), x_all[batch.input_nodes.numpy()])
    store = graphtier.FeatureStore(ds, cpu_buffer="0")
    ids = np.arange(0, ds.num_nodes, 97)
    np.testing.assert_array_equal(store.gather(ids).numpy(), x_all[ids])
    assert store.stats()["rows"] == len(ids) and store.stats()["storage"]["rows"] == len(ids)
