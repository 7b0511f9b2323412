"""bulk=k: the loaders sample k minibatches per call with the bulk matrix samplers; a batch does not
depend on k, on striding or on which batches share its call, and bulk blocks are the bulk
samplers' (LADIES: cut from A + I with merged parallel edges and no edge ids), not the one-at-a-time
samplers'."""

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


def test_bulk_ladies_blocks_keep_a_self_loop_per_dst_row_as_one_at_a_time(synthetic):
    # Both LADIES samplers cut their blocks from A + I: without the self-loops (before issue 28),
    # LayerGCN, which has no root weight, trained bulk LADIES to 0.663 on Cora against 0.774.
    ds = graphtier.Dataset(synthetic)
    plain = next(iter(graphtier.LayerLoader(ds, [64, 64], batch_size=128, split="train", seed=7)))
    bulk = next(iter(graphtier.LayerLoader(ds, [64, 64], batch_size=128, split="train", seed=7, bulk=2)))

    def self_loops(block):
        return int((block.indices == block.dst_index).sum())

    for p, b in zip(plain.blocks, bulk.blocks):
        assert self_loops(p) == p.num_dst  # the generated graph has no stored self-loop
        assert self_loops(b) == b.num_dst
        assert b.edge_ids is None and p.edge_ids is None  # a self-loop is not an edge of the graph
        rows = torch.zeros(b.num_dst, dtype=torch.float64).index_add_(0, b.dst_index, b.weights.double())
        assert torch.allclose(rows, torch.ones_like(rows), atol=1e-5)  # no row is empty


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
