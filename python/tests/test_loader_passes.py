"""graphtier's own loaders: each iter(loader) is a fresh pass (one whole epoch), a bool mask of nodes
is a mask, and `adjs` is what its docstring says."""

import gc

import numpy as np
import pytest
import torch

import graphtier


def _loader(ds, **kw):
    return graphtier.NeighborLoader(ds, [5, 5], batch_size=128, split="train", seed=7, features=False, **kw)


def _epochs(loader, n):
    return [[(b.epoch, b.index, b.seeds.tolist()) for b in loader] for _ in range(n)]


def test_each_iter_is_a_fresh_pass_and_a_plain_loop_keeps_its_stream(synthetic):
    ds = graphtier.Dataset(synthetic)
    reference = _epochs(_loader(ds), 3)
    assert [[(e, i) for e, i, _ in epoch] for epoch in reference] == [[(e, i) for i in range(10)] for e in range(3)]

    loader = _loader(ds)
    first = next(iter(loader))  # a peek at epoch 0 takes nothing from the loop after it
    assert (first.epoch, first.index, first.seeds.tolist()) == reference[0][0]
    assert loader.position == (0, 1)
    assert [(b.epoch, b.index, b.seeds.tolist()) for b in loader] == reference[1]  # epoch 1, whole
    for i, _ in enumerate(loader):
        if i == 2:
            break  # epoch 2 abandoned after three batches
    assert loader.position == (2, 3), "position keeps where the abandoned pass stopped (checkpoints)"
    again = _loader(ds)
    again.set_epoch(*loader.position)  # resumes the abandoned pass
    assert [(b.epoch, b.index, b.seeds.tolist()) for b in again] == reference[2][3:]
    assert again.position == (3, 0)


def test_a_dataset_directory_opens_as_its_dataset_and_anything_else_is_refused(synthetic):
    from pathlib import Path

    assert _epochs(_loader(synthetic), 1) == _epochs(_loader(graphtier.Dataset(synthetic)), 1)
    link = graphtier.LinkNeighborLoader(Path(synthetic), [5], batch_size=64, seed=1)
    assert link.dataset.num_nodes == graphtier.Dataset(synthetic).num_nodes
    for loader in (_loader, lambda ds: graphtier.LinkNeighborLoader(ds, [5])):
        with pytest.raises(TypeError, match="dataset: expected a graphtier.Dataset or a dataset directory, got dict"):
            loader({"x": 1})


def test_a_newer_iterator_supersedes_an_older_one(synthetic):
    ds = graphtier.Dataset(synthetic)
    reference = _epochs(_loader(ds), 2)
    loader = _loader(ds)
    old = iter(loader)
    assert next(old).index == 0
    new = iter(loader)
    with pytest.raises(RuntimeError, match="superseded by a newer iter"):
        next(old)
    del old
    gc.collect()  # the older pass's end does not stop the newer one's pipeline
    assert [(b.epoch, b.index, b.seeds.tolist()) for b in new] == reference[1]
    with pytest.raises(StopIteration):
        next(new)


def test_set_epoch_chooses_the_next_pass_only(synthetic):
    ds = graphtier.Dataset(synthetic)
    reference = _epochs(_loader(ds), 3)
    loader = _loader(ds)
    loader.set_epoch(1, 8)
    assert loader.position == (1, 8)
    assert [(b.epoch, b.index, b.seeds.tolist()) for b in loader] == reference[1][8:]
    assert [(b.epoch, b.index, b.seeds.tolist()) for b in loader] == reference[2]
    loader.set_epoch(0, len(loader))  # an empty pass still moves on to the next epoch
    assert list(loader) == [] and loader.position == (1, 0)


def test_a_pass_after_a_whole_pass_is_a_fresh_loaders_pass_of_its_epoch(synthetic):
    # A pass that ran to its end leaves its pipeline sampling the next epoch's first batches: the
    # next pass (epoch 1, 2) starts on them, a set_epoch to another (5) drops them; the blocks of
    # every pass are those of a fresh loader started at that epoch.
    ds = graphtier.Dataset(synthetic)

    def blocks(loader):
        return [[(blk.src_nodes.tolist(), blk.indptr.tolist(), blk.indices.tolist()) for blk in b.blocks]
                for b in loader]

    chained = _loader(ds, sample_threads=2)
    for epoch in (0, 1, 2, 5):
        if epoch == 5:
            chained.set_epoch(5)
        got = blocks(chained)
        fresh = _loader(ds, sample_threads=2)
        fresh.set_epoch(epoch)
        assert got == blocks(fresh), f"epoch {epoch}"


def test_a_bool_mask_is_a_mask(synthetic):
    ds = graphtier.Dataset(synthetic)
    train = ds.split("train")
    mask = torch.zeros(ds.num_nodes, dtype=torch.bool)
    mask[train] = True
    expected = torch.sort(train).values.tolist()
    for value in (mask, mask.numpy()):
        loader = graphtier.NeighborLoader(ds, [3], batch_size=len(expected), ids=value, shuffle=False,
                                          features=False)
        assert next(iter(loader)).seeds.tolist() == expected
        layer = graphtier.LayerLoader(ds, [16], batch_size=len(expected), ids=value, shuffle=False, cpu_buffer="0")
        assert next(iter(layer)).seeds.tolist() == expected
    store = graphtier.FeatureStore(ds)
    torch.testing.assert_close(store.gather(mask), store.gather(expected), rtol=0, atol=0)
    for value in (torch.tensor([True, False, True]), np.ones(ds.num_nodes + 1, dtype=bool)):
        n = len(value)
        with pytest.raises(ValueError, match=rf"^ids: a bool mask needs one entry per node \({ds.num_nodes}\), got {n}$"):
            graphtier.NeighborLoader(ds, [3], ids=value, features=False)
        with pytest.raises(ValueError, match=rf"^ids: .*\({ds.num_nodes}\), got {n}$"):
            store.gather(value)
    with pytest.raises(ValueError, match="one-dimensional"):
        graphtier.NeighborLoader(ds, [3], ids=mask.reshape(2, -1), features=False)


def test_adjs_are_the_pairs_its_docstring_describes(synthetic):
    ds = graphtier.Dataset(synthetic)
    batch = next(iter(_loader(ds)))
    adjs = batch.adjs
    assert isinstance(adjs, list) and len(adjs) == len(batch.blocks)
    for (edge_index, size), block in zip(adjs, reversed(batch.blocks)):
        assert torch.equal(edge_index, block.edge_index) and edge_index.dtype == torch.int64
        assert size == (block.num_src, block.num_dst)
    doc = graphtier.Batch.adjs.__doc__
    assert "(edge_index, size)" in doc and "pair" in doc and "input side first" in doc
    assert "as PyG's NeighborSampler yields them" not in doc  # PyG yields (edge_index, e_id, size)
