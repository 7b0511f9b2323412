"""Ids that can be read in two numberings, and the rule that keeps each from passing as the other
(docs/architecture.md, "Node ids and their numberings"):

- typed datasets: ids given with their node type ({type: ids}, PyG's (type, ids), DGL's {type: ids},
  what Dataset.split returns) are local to the type; one outside the type is an error naming the
  type and its range, and a bare id tensor, whose numbering cannot be told, is refused;
- renumbered (prepared) datasets: ids and masks given to a loader need `ids_numbering` said
  ("original", the converted input's, or "prepared", the dataset's own), and the loader says at
  info level which one it read them in.

The PyG and DGL adapters' share of these checks runs where those frameworks are installed (the
torch 2.x and DGL environments); the rest everywhere."""

import pytest
import torch

import graphtier
from conftest import has_module

needs_pyg = pytest.mark.skipif(not has_module("torch_geometric"), reason="torch_geometric is not installed "
                               "(scripts/setup-torch2.sh makes a torch 2.x environment with it)")
needs_dgl = pytest.mark.skipif(not has_module("dgl"), reason="dgl is not installed (scripts/setup-dgl.sh makes an "
                               "environment with it)")


def _global_split(ds, name):
    """The split as stored: the engine's global ids."""
    return graphtier._core.Dataset.split(ds, name).to(torch.int64)


# -- typed seeds are checked against their own type ------------------------------------------------

def test_typed_seeds_outside_their_type_name_the_type_and_its_range(acm):
    """ACM has 4,019 papers (ids 0..4018 of 11,246 nodes): paper 5000 is no paper, whatever the
    graph's size; a negative id neither."""
    ds = graphtier.Dataset(acm)
    assert ds.node_type_ranges["p"] == (0, 4019) and ds.num_nodes > 5000
    for bad in (5000, 4019, -1):
        with pytest.raises(IndexError, match=rf"ids\['p'\]: node id {bad} is outside type 'p''s ids \[0, 4019\)"):
            graphtier.NeighborLoader(ds, [2], 4, ids={"p": torch.tensor([3, bad])}, features=False)
    with pytest.raises(ValueError, match=r"a bool mask needs one entry per node \(4019\), got 11246"):
        graphtier.NeighborLoader(ds, [2], 4, ids={"p": torch.ones(ds.num_nodes, dtype=torch.bool)}, features=False)


def test_typed_seeds_of_another_or_an_unknown_type_are_refused(acm):
    ds = graphtier.Dataset(acm)
    with pytest.raises(ValueError, match=r"ids: seeds of one node type, the labelled type 'p'; got types 'a'"):
        graphtier.NeighborLoader(ds, [2], 4, ids={"a": [0]}, features=False)
    with pytest.raises(ValueError, match=r"ids: unknown node type 'paper' \(the dataset's: p, a, s\)"):
        graphtier.NeighborLoader(ds, [2], 4, ids={"paper": [0]}, features=False)


# -- one numbering for typed ids: local to the type, keyed by it ------------------------------------

def test_a_typed_split_is_keyed_by_type_and_local_to_it(typed_late):
    """Dataset.split on a typed dataset is OGB's layout, {labelled type: ids within it}: the same
    papers as the stored (global) split, and the loader reads them as those papers."""
    ds = graphtier.Dataset(typed_late)
    begin, end = ds.node_type_ranges["paper"]
    assert begin == 150
    for name in ("train", "val", "test"):
        split = ds.split(name)
        assert list(split) == ["paper"]
        assert torch.equal(split["paper"] + begin, _global_split(ds, name))
        assert int(split["paper"].min()) >= 0 and int(split["paper"].max()) < end - begin
    loader = graphtier.NeighborLoader(ds, [2], 64, ids=ds.split("train"), shuffle=False, features=False)
    seeds = torch.cat([b.seeds for b in loader])
    assert torch.equal(seeds, _global_split(ds, "train"))
    labels = ds.labels()
    assert bool((labels[seeds] >= 0).all())  # papers, all labelled
    by_name = graphtier.NeighborLoader(ds, [2], 64, split="train", shuffle=False, features=False)
    assert torch.equal(torch.cat([b.seeds for b in by_name]), seeds)


def test_bare_ids_on_a_typed_dataset_are_refused(typed_late):
    """A bare tensor does not say whether it holds global ids (150..549 for papers) or ids within
    the type (0..399); reading one as the other picks other papers, so neither is guessed."""
    ds = graphtier.Dataset(typed_late)
    for bare in (torch.tensor([0, 1]), _global_split(ds, "train"), torch.ones(ds.num_nodes, dtype=torch.bool)):
        with pytest.raises(ValueError, match=r"ids: the dataset is typed, so its seeds are given with their type, "
                                             r"as \{'paper': ids within the type"):
            graphtier.NeighborLoader(ds, [2], 4, ids=bare, features=False)


def test_global_ids_given_as_ids_within_the_type_are_an_error_not_other_papers(typed_late):
    """The stored split's global ids passed where ids within the type are read: those past the
    type's 400 papers make it an error naming the type, never a batch of other papers."""
    ds = graphtier.Dataset(typed_late)
    with pytest.raises(IndexError, match=r"outside type 'paper''s ids \[0, 400\)"):
        graphtier.NeighborLoader(ds, [2], 4, ids={"paper": _global_split(ds, "train")}, features=False)


# -- renumbered datasets: the numbering of the ids given is said -------------------------------------

def test_a_renumbered_dataset_refuses_ids_without_their_numbering(cora):
    ds = graphtier.Dataset(cora)
    assert ds.prepared
    with pytest.raises(ValueError, match=r"renumbered by `graphtier prepare`.*ids_numbering='original'"):
        graphtier.NeighborLoader(ds, [2], 4, ids=[0, 1, 2], features=False)
    mask = torch.zeros(ds.num_nodes, dtype=torch.bool)
    mask[:140] = True
    with pytest.raises(ValueError, match="ids_numbering"):
        graphtier.NeighborLoader(ds, [2], 4, ids=mask, features=False)
    # A split name is the dataset's own ids: nothing to say.
    assert len(graphtier.NeighborLoader(ds, [2], 4, split="train", features=False)) == 35


def test_the_numbering_said_is_the_one_read_and_logged(cora, capfd):
    """A PyG train_mask (original numbering, Planetoid's first 140 nodes) selects the same labelled
    nodes as the dataset's own train split once the numbering is said; the loader's info line says it
mapped them."""
    ds = graphtier.Dataset(cora)
    mask = torch.zeros(ds.num_nodes, dtype=torch.bool)
    mask[:140] = True
    capfd.readouterr()
    loader = graphtier.NeighborLoader(ds, [2], 140, ids=mask, ids_numbering="original", shuffle=False,
                                      features=False)
    seeds = next(iter(loader)).seeds
    assert "loader ids: 140 ids read in the original numbering, mapped to the dataset's own" in capfd.readouterr().err
    assert torch.equal(torch.sort(seeds).values, torch.sort(ds.split("train").to(torch.int64)).values)
    own = graphtier.NeighborLoader(ds, [2], 140, ids=seeds, ids_numbering="prepared", shuffle=False, features=False)
    assert torch.equal(next(iter(own)).seeds, seeds)
    assert "numbering" not in capfd.readouterr().err  # the ids as given: nothing mapped
    # The option object carries it too; unset, it is None.
    assert graphtier.LoaderOptions().ids_numbering is None
    options = graphtier.LoaderOptions(ids_numbering="original")
    assert torch.equal(next(iter(graphtier.NeighborLoader(ds, [2], 140, ids=mask, shuffle=False, features=False,
                                                         options=options))).seeds, seeds)


def test_a_dataset_never_renumbered_reads_ids_as_its_own(cora):
    from pathlib import Path
    raw = graphtier.Dataset(str(Path(cora).parent / "raw"))
    assert not raw.prepared
    loader = graphtier.NeighborLoader(raw, [2], 3, ids=[5, 0, 7], shuffle=False, features=False)
    assert next(iter(loader)).seeds.tolist() == [5, 0, 7]


# -- the adapters go through the same checks -----------------------------------------------------------

@needs_pyg
def test_pyg_typed_seeds_are_checked_against_their_type(acm, typed_late):
    from graphtier.pyg import NeighborLoader
    ds = graphtier.Dataset(acm)
    with pytest.raises(IndexError, match=r"input_nodes\['p'\]: node id 5000 is outside type 'p''s ids \[0, 4019\)"):
        NeighborLoader(ds, num_neighbors=[2], input_nodes=("p", torch.tensor([5000])), batch_size=4)
    with pytest.raises(ValueError, match=r"input_nodes: unknown node type 'q'"):
        NeighborLoader(ds, num_neighbors=[2], input_nodes=("q", torch.tensor([0])), batch_size=4)
    late = graphtier.Dataset(typed_late)
    with pytest.raises(IndexError, match=r"input_nodes\['paper'\].*\[0, 400\)"):
        NeighborLoader(late, num_neighbors=[2], input_nodes=("paper", _global_split(late, "train")), batch_size=4)


@needs_pyg
def test_pyg_takes_the_typed_split_as_the_right_papers(typed_late):
    """Dataset.split's {type: ids} (or its tensor) as PyG's (type, ids): each batch's seeds are
    those papers, ids within the type, with their labels."""
    from graphtier.pyg import NeighborLoader
    ds = graphtier.Dataset(typed_late)
    begin = ds.node_type_ranges["paper"][0]
    labels = ds.labels().to(torch.int64)
    train = ds.split("train")
    for given in (train, train["paper"]):
        batches = list(NeighborLoader(ds, num_neighbors=[2, 2], input_nodes=("paper", given), batch_size=64))
        seeds = torch.cat([b["paper"].n_id[: b["paper"].batch_size] for b in batches])
        assert torch.equal(seeds, train["paper"])
        ys = torch.cat([b["paper"].y[: b["paper"].batch_size] for b in batches])
        assert torch.equal(ys, labels[train["paper"] + begin])


@needs_pyg
def test_pyg_mask_on_a_renumbered_dataset_needs_its_numbering(cora):
    from graphtier.pyg import NeighborLoader
    ds = graphtier.Dataset(cora)
    mask = torch.zeros(ds.num_nodes, dtype=torch.bool)
    mask[:140] = True
    with pytest.raises(ValueError, match="ids_numbering"):
        NeighborLoader(ds, num_neighbors=[2], input_nodes=mask, batch_size=140)
    batch = next(iter(NeighborLoader(ds, num_neighbors=[2], input_nodes=mask, batch_size=140,
                                     ids_numbering="original")))
    assert torch.equal(torch.sort(batch.n_id[:140]).values, torch.sort(ds.split("train").to(torch.int64)).values)
    # input_nodes=None, every node, needs no numbering.
    assert len(NeighborLoader(ds, num_neighbors=[2], input_nodes=None, batch_size=1000)) == 3


@needs_dgl
def test_dgl_typed_seeds_are_checked_and_the_typed_split_is_the_right_papers(acm, typed_late):
    import dgl
    from graphtier.dgl import DataLoader, NeighborSampler
    ds = graphtier.Dataset(acm)
    with pytest.raises(IndexError, match=r"indices\['p'\]: node id 11245 is outside type 'p''s ids \[0, 4019\)"):
        DataLoader(ds, {"p": torch.tensor([5000, 11245])}, NeighborSampler([2]), batch_size=4)
    late = graphtier.Dataset(typed_late)
    with pytest.raises(ValueError, match=r"indices: the dataset is typed"):
        DataLoader(late, _global_split(late, "train"), NeighborSampler([2]), batch_size=4)
    train = late.split("train")
    out = torch.cat([o["paper"] for _, o, _ in DataLoader(late, train, NeighborSampler([2]), batch_size=64)])
    assert torch.equal(out, train["paper"])
    _, output_nodes, blocks = next(iter(DataLoader(late, train, NeighborSampler([2]), batch_size=64)))
    assert torch.equal(blocks[-1].dstnodes["paper"].data[dgl.NID], output_nodes["paper"])
