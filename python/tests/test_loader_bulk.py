"""bulk=k: the loaders sample k minibatches per call with the bulk matrix samplers; a batch does not
depend on k, on striding or on which batches share its call, and bulk blocks are the bulk
samplers' (no LADIES self-loops), not the one-at-a-time samplers'."""

import pytest
import torch

import graphtier
from graphtier import train


def _blocks(b):
    return [(k.src_nodes.tolist(), k.indptr.tolist(), k.indices.tolist(),
             None if k.edge_ids is None else k.edge_ids.tolist(),
             None if k.weights is None else k.weights.tolist()) for k in b.blocks]


def _batches(loader):
    return {b.index: (b.seeds.tolist(), _blocks(b), b.x) for b in loader}


@pytest.mark.parametrize("cls,sizes", [(graphtier.NeighborLoader, [5, 5]), (graphtier.LayerLoader, [64, 64])])
def test_a_bulk_batch_does_not_depend_on_k_or_striding(synthetic, cls, sizes):
    ds = graphtier.Dataset(synthetic)
    make = lambda **kw: cls(ds, sizes, batch_size=128, split="train", seed=7, **kw)  # noqa: E731
    one = _batches(make(bulk=1))
    assert sorted(one) == list(range(10))
    for kw in [dict(bulk=3), dict(bulk=4, batch_offset=1, batch_stride=3), dict(bulk=2, batch_stride=2)]:
        got = _batches(make(**kw))
        assert sorted(got) == list(range(kw.get("batch_offset", 0), 10, kw.get("batch_stride", 1))), kw
        for i, (seeds, blocks, x) in got.items():
            assert seeds == one[i][0] and blocks == one[i][1] and torch.equal(x, one[i][2]), (kw, i)
    unbulked = _batches(make())
    assert all(unbulked[i][0] == one[i][0] for i in one), "bulk keeps the epoch's seeds"
    assert any(unbulked[i][1] != one[i][1] for i in one), "bulk blocks are the bulk sampler's"


def test_bulk_ladies_blocks_have_no_added_self_loops(synthetic):
    ds = graphtier.Dataset(synthetic)
    plain = next(iter(graphtier.LayerLoader(ds, [64], batch_size=128, split="train", seed=7)))
    bulk = next(iter(graphtier.LayerLoader(ds, [64], batch_size=128, split="train", seed=7, bulk=2)))

    def self_loops(block):
        dst = block.dst_index
        return int((block.indices == dst).sum())

    assert self_loops(plain.blocks[0]) == plain.blocks[0].num_dst  # LayerSampler adds one per dst node
    assert self_loops(bulk.blocks[0]) == 0  # the generated graph has none of its own
    assert bulk.blocks[0].edge_ids is not None and plain.blocks[0].edge_ids is None
    rows = torch.zeros(bulk.blocks[0].num_dst, dtype=torch.float64).index_add_(
        0, bulk.blocks[0].dst_index, bulk.blocks[0].weights.double())
    nonempty = bulk.blocks[0].indptr[1:] > bulk.blocks[0].indptr[:-1]
    assert torch.allclose(rows[nonempty], torch.ones_like(rows[nonempty]), atol=1e-5)


def test_bad_bulk_is_a_value_error_naming_it(synthetic):
    ds = graphtier.Dataset(synthetic)
    with pytest.raises(ValueError, match="bulk"):
        graphtier.NeighborLoader(ds, [5], split="train", bulk=-1, features=False)
    with pytest.raises(ValueError, match="bulk with fastgcn"):
        graphtier.LayerLoader(ds, [64], split="train", method="fastgcn", bulk=2)
    with pytest.raises(ValueError, match="--bulk"):
        train.parse_args([synthetic, "--bulk", "-1"])
    with pytest.raises(ValueError, match="bulk with fastgcn"):
        train.run(train.parse_args([synthetic, "--model", "fastgcn", "--bulk", "2", "--epochs", "1", "--quiet"]))
