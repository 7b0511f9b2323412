"""The stateful-dataloader protocol (torchdata's StatefulDataLoader): state_dict() taken after k
batches of a pass, loaded into a fresh loader, gives exactly the remaining batches of the
uninterrupted pass (and the epochs after it); a state of another loader is refused in one line."""

import pytest
import torch

import graphtier
from conftest import has_module

OPTIONS = dict(batch_size=64, seed=7, window=2)


def _same(a: graphtier.Batch, b: graphtier.Batch) -> None:
    assert a.index == b.index
    assert torch.equal(a.seeds, b.seeds) and torch.equal(a.input_nodes, b.input_nodes)
    assert torch.equal(a.x, b.x)
    for x, y in zip(a.blocks, b.blocks, strict=True):
        assert torch.equal(x.indptr, y.indptr) and torch.equal(x.indices, y.indices)


@pytest.mark.parametrize("k", [0, 3, 8])
def test_resume_mid_epoch_gives_the_remaining_batches(synthetic, k):
    whole = graphtier.NeighborLoader(synthetic, [5, 5], split="train", **OPTIONS)
    reference = [list(whole), list(whole)]  # epochs 0 and 1, uninterrupted
    assert len(reference[0]) == 19 and k < len(reference[0])

    interrupted = graphtier.NeighborLoader(synthetic, [5, 5], split="train", **OPTIONS)
    list(interrupted)  # epoch 0 whole: the state is of epoch 1
    it = iter(interrupted)
    for _ in range(k):
        next(it)
    state = interrupted.state_dict()
    assert (state["epoch"], state["batch"]) == (1, k)
    del it

    fresh = graphtier.NeighborLoader(synthetic, [5, 5], split="train", **OPTIONS)
    fresh.load_state_dict(state)
    rest = list(fresh)
    assert len(rest) == len(reference[1]) - k
    for a, b in zip(rest, reference[1][k:]):
        _same(a, b)
    assert fresh.state_dict()["epoch"] == 2  # and the pass after it is epoch 2, as for the whole run
    _same(next(iter(fresh)), next(iter(whole)))


@pytest.mark.skipif(not has_module("torch_geometric"), reason="torch_geometric is not installed (the torch 2.x "
                    "environment of scripts/setup-torch2.sh has it)")
def test_resume_through_the_pyg_adapter(synthetic):
    import graphtier.pyg

    def loader():
        return graphtier.pyg.NeighborLoader(synthetic, num_neighbors=[4, 4], input_nodes="train", batch_size=100, seed=3)

    reference = [(d.n_id, d.edge_index, d.x) for d in loader()]
    first = loader()
    it = iter(first)
    next(it), next(it)
    state = first.state_dict()
    del it
    second = loader()
    second.load_state_dict(state)
    rest = [(d.n_id, d.edge_index, d.x) for d in second]
    assert len(rest) == len(reference) - 2
    for got, want in zip(rest, reference[2:]):
        assert all(torch.equal(g, w) for g, w in zip(got, want))


@pytest.mark.skipif(not has_module("dgl"), reason="dgl is not installed (scripts/setup-dgl.sh makes an environment "
                    "with it)")
def test_resume_through_the_dgl_adapter(synthetic):
    from graphtier.dgl import DataLoader, NeighborSampler

    def loader():
        return DataLoader(synthetic, "train", NeighborSampler([4, 4]), batch_size=100, shuffle=True, seed=3)

    reference = list(loader())
    first = loader()
    it = iter(first)
    next(it), next(it), next(it)
    state = first.state_dict()
    del it
    second = loader()
    second.load_state_dict(state)
    rest = list(second)
    assert len(rest) == len(reference) - 3
    for (inputs, outputs, blocks), (want_inputs, want_outputs, want_blocks) in zip(rest, reference[3:]):
        assert torch.equal(inputs, want_inputs) and torch.equal(outputs, want_outputs)
        assert all(torch.equal(torch.stack(a.edges()), torch.stack(b.edges())) for a, b in zip(blocks, want_blocks))


@pytest.mark.parametrize("change, key", [(dict(seed=8), "seed"), (dict(batch_size=32), "batch_size"),
                                         (dict(fanouts=[5, 4]), "fanouts"), (dict(split="valid"), "seeds")])
def test_a_state_of_another_loader_is_refused(synthetic, change, key):
    args = dict(fanouts=[5, 5], split="train", **OPTIONS)
    state = graphtier.NeighborLoader(synthetic, **args).state_dict()
    other = graphtier.NeighborLoader(synthetic, **{**args, **change})
    with pytest.raises(ValueError, match=f"^load_state_dict: the state is of another loader: its {key} is "):
        other.load_state_dict(state)


def test_a_state_of_another_dataset_is_refused(synthetic, cora):
    state = graphtier.NeighborLoader(cora, [5, 5], split="train", **OPTIONS).state_dict()
    other = graphtier.NeighborLoader(synthetic, [5, 5], split="train", **OPTIONS)
    with pytest.raises(ValueError, match="its dataset is 'cora [0-9a-f]{16}', this loader's 'g [0-9a-f]{16}'"):
        other.load_state_dict(state)
    with pytest.raises(ValueError, match="expected a graphtier loader's state_dict"):
        other.load_state_dict({"epoch": 0})
