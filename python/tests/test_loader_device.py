"""The device form of a minibatch (blocks left where the GPU sampler wrote them) reaches Python
through the same code path with or without a GPU: here a form faked in host memory (DLPack
kDLCPU) checks the views' shapes, dtypes, strides and ownership. test_gpu.py checks the real one."""

import gc

import numpy as np
import pytest
import torch

import graphtier
from graphtier import _core
from graphtier.loader import _batch_from_dict


def fake(num_dst, num_src, num_edges, edge_ids=True, weights=False):
    return _core._fake_device_batch(num_dst, num_src, num_edges, edge_ids, weights)


def test_device_blocks_are_views_of_the_right_shape_dtype_and_values():
    d = fake([4, 9], [9, 20], [11, 30])
    batch = _batch_from_dict(d)
    assert len(batch.blocks) == 2
    for l, (nd, ns, ne) in enumerate([(4, 9, 11), (9, 20, 30)]):
        b = batch.blocks[l]
        assert b.num_dst == nd and b.num_src == ns and b.num_edges == ne
        for name, n, base in (("src_nodes", ns, 0), ("indptr", nd + 1, 100), ("indices", ne, 200),
                              ("edge_ids", ne, 300)):
            t = getattr(b, name)
            assert t.dtype == torch.int64 and t.shape == (n,) and t.stride() == (1,), name
            assert t.device.type == "cpu" and t.is_contiguous()
            assert torch.equal(t, torch.arange(n, dtype=torch.int64) + 1000 * l + base), name
        assert b.weights is None
    # The seeds are the first block's dst nodes, the input nodes the last block's src nodes: views
    # of the same memory, not copies.
    assert torch.equal(batch.seeds, torch.arange(4))
    assert batch.seeds.data_ptr() == batch.blocks[0].src_nodes.data_ptr()
    assert batch.input_nodes.data_ptr() == batch.blocks[1].src_nodes.data_ptr()
    assert batch.input_nodes.shape == (20,)
    assert batch.to("cpu").blocks[0].src_nodes.data_ptr() == batch.blocks[0].src_nodes.data_ptr()


def test_layer_wise_device_blocks_carry_their_weights_as_float32_views():
    batch = _batch_from_dict(fake([4, 9], [9, 20], [11, 30], edge_ids=False, weights=True))
    for l, ne in enumerate((11, 30)):
        w = batch.blocks[l].weights
        assert w is not None and w.dtype == torch.float32 and w.shape == (ne,) and w.stride() == (1,)
        assert torch.equal(w, torch.arange(ne, dtype=torch.float32) / 2)
        assert batch.blocks[l].edge_ids is None
    assert batch.to("cpu").blocks[1].weights.data_ptr() == batch.blocks[1].weights.data_ptr()


def test_without_edge_ids_they_are_none_and_empty_blocks_are_empty_tensors():
    batch = _batch_from_dict(fake([3], [3], [0], edge_ids=False))
    b = batch.blocks[0]
    assert b.edge_ids is None and b.num_edges == 0 and b.indices.shape == (0,)
    assert torch.equal(b.indptr, torch.tensor([100, 101, 102, 103]))


def test_the_last_tensor_to_die_releases_the_batch():
    gc.collect()
    before = _core._live_batches()
    d = fake([2], [5], [6])
    assert _core._live_batches() == before + 1
    keep = d["blocks"][0]["indices"]
    del d
    gc.collect()
    assert _core._live_batches() == before + 1, "a view still alive keeps the batch"
    assert torch.equal(keep, torch.arange(6) + 200)  # its memory is still valid
    del keep
    gc.collect()
    assert _core._live_batches() == before


def test_loader_batches_are_released_when_dropped(synthetic):
    gc.collect()
    before = _core._live_batches()
    loader = graphtier.NeighborLoader(graphtier.Dataset(synthetic), [4, 3], batch_size=300, split="train")
    batches = list(loader)
    assert _core._live_batches() == before + len(batches)
    del batches
    gc.collect()
    assert _core._live_batches() == before


def test_gather_into_a_given_tensor_checks_it_and_fills_it(synthetic):
    store = graphtier.FeatureStore(synthetic)
    ids = np.array([5, 0, 5, 17], dtype=np.int64)
    assert store.feature_dim == 32 and store.dtype == "float32" and store.device == 0
    out = torch.full((4, 32), float("nan"))
    store.gather_into(ids, out)
    assert torch.equal(out, store.gather(ids))
    with pytest.raises(ValueError, match="contiguous \\[4, 32\\]"):
        store.gather_into(ids, torch.empty(3, 32))
    with pytest.raises(ValueError, match="dtype float32"):
        store.gather_into(ids, torch.empty(4, 32, dtype=torch.float64))
