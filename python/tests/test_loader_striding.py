"""batch_offset/batch_stride: a loader delivers every batch_stride-th batch from batch_offset on, each
the same minibatch as the unstrided loader's batch of that index."""

import pytest
import torch

import graphtier


def _blocks(b):
    return [(k.src_nodes.tolist(), k.indptr.tolist(), k.indices.tolist()) for k in b.blocks]


@pytest.mark.parametrize("cls,sizes", [(graphtier.NeighborLoader, [5, 5]), (graphtier.LayerLoader, [64, 64])])
def test_strided_batches_are_the_unstrided_batches_of_their_index(synthetic, cls, sizes):
    ds = graphtier.Dataset(synthetic)
    whole = cls(ds, sizes, batch_size=128, split="train", seed=7)
    reference = {b.index: b for b in whole}
    assert len(whole) == whole.num_batches == len(reference) == 10
    for offset, stride in [(0, 3), (2, 3), (1, 4)]:
        strided = cls(ds, sizes, batch_size=128, split="train", seed=7, batch_offset=offset, batch_stride=stride)
        expected = list(range(offset, 10, stride))
        assert strided.num_batches == 10 and len(strided) == len(expected)
        got = list(strided)  # epoch 0, as the unstrided loader's pass
        assert [b.index for b in got] == expected and all(b.epoch == 0 for b in got)
        for b in got:
            r = reference[b.index]
            assert torch.equal(b.seeds, r.seeds) and _blocks(b) == _blocks(r)
            assert torch.equal(b.x, r.x) and torch.equal(b.y, r.y)
        assert strided.position == (1, 0)


def test_strided_position_resumes_at_the_next_delivered_batch(synthetic):
    ds = graphtier.Dataset(synthetic)
    loader = graphtier.NeighborLoader(ds, [5], batch_size=128, split="train", seed=7, features=False,
                                      batch_offset=1, batch_stride=4)
    it = iter(loader)
    assert next(it).index == 1 and loader.position == (0, 5)
    assert next(it).index == 5 and loader.position == (0, 9)
    assert next(it).index == 9 and loader.position == (1, 0)  # 13 is past the last batch
    loader.set_epoch(0, 2)  # a global batch index: starts at the first delivered batch >= 2
    assert [b.index for b in loader] == [5, 9]


@pytest.mark.parametrize("kw,name", [(dict(batch_offset=-1), "batch_offset"), (dict(batch_stride=0), "batch_stride")])
def test_bad_striding_is_a_value_error_naming_the_option(synthetic, kw, name):
    ds = graphtier.Dataset(synthetic)
    with pytest.raises(ValueError, match=name):
        graphtier.NeighborLoader(ds, [5], batch_size=128, split="train", features=False, **kw)
