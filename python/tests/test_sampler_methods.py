"""The sampling method table bound from the engine (graphtier._core.sampler_methods): the one place
the method names live, which the loaders, the CLI, sample_minibatch and the distributed sampler parse."""

import pytest
import torch

from graphtier import LayerLoader, NeighborLoader, _core

BATCH, SEED, EPOCH = 64, 3, 1


def test_the_table_names_every_method_with_what_it_offers():
    methods = _core.sampler_methods()
    assert list(methods) == ["neighbor", "ladies", "fastgcn"]
    assert methods["neighbor"] == {"replace": True, "bulk": True, "rows": True}
    assert methods["ladies"] == {"replace": False, "bulk": True, "rows": True}
    assert methods["fastgcn"] == {"replace": False, "bulk": False, "rows": False}


@pytest.mark.parametrize("method", ["neighbor", "ladies", "fastgcn"])
def test_sample_minibatch_is_the_loaders_sampler(cora, method):
    """sample_minibatch goes through the loader's factory: the loader's batch, for every method."""
    dataset = _core.Dataset(cora)
    fanouts = [4, 3] if method == "neighbor" else [64, 32]
    if method == "neighbor":
        loader = NeighborLoader(dataset, fanouts, BATCH, split="train", seed=SEED, features=False, sample_threads=1)
    else:
        loader = LayerLoader(dataset, fanouts, BATCH, method=method, split="train", seed=SEED, sample_threads=1)
    loader.set_epoch(EPOCH)
    batch = next(iter(loader))
    d = _core.sample_minibatch(dataset, method, batch.seeds, fanouts, False, SEED,
                               _core.minibatch_stream(EPOCH, batch.index))
    assert torch.equal(d["input_nodes"], batch.input_nodes)
    assert len(d["blocks"]) == len(batch.blocks)
    for got, want in zip(d["blocks"], batch.blocks):
        assert got["num_dst"] == want.num_dst
        for key in ("src_nodes", "indptr", "indices"):
            assert torch.equal(got[key], getattr(want, key))
        assert (got["weights"] is None) == (want.weights is None)
        if want.weights is not None:
            assert torch.equal(got["weights"].view(torch.int32), want.weights.view(torch.int32))


def test_an_unknown_or_unfit_method_is_refused_by_the_engine(cora):
    dataset = _core.Dataset(cora)
    seeds = torch.tensor([0, 1])
    with pytest.raises(ValueError, match=r"unknown sampler 'sage' \(expected neighbor, ladies or fastgcn\)"):
        _core.sample_minibatch(dataset, "sage", seeds, [2], False, 0, 0)
    with pytest.raises(ValueError, match="replace applies to the neighbor sampler only"):
        _core.sample_minibatch(dataset, "ladies", seeds, [2], True, 0, 0)
