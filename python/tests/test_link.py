"""Link prediction through the package: `graphtier split-links` datasets read from Python, and
graphtier.LinkNeighborLoader's batches (labels, negatives, triplets, seed-edge exclusion,
reproducibility, refusals) checked against the dataset's own graph."""

import json
import subprocess
from pathlib import Path

import pytest
import torch

import graphtier
from conftest import cli, run_cli
from graphtier import link


@pytest.fixture(scope="session")
def cora_links(cora, tmp_path_factory) -> str:
    out = tmp_path_factory.mktemp("cora-links") / "ds"
    run_cli("split-links", "-d", cora, "-o", str(out), "--val", "0.05", "--test", "0.1", "--seed", "3")
    return str(out)


def _edge_set(ds) -> set:
    e = link.all_edges(ds)
    return set(zip(e[0].tolist(), e[1].tolist()))


def test_split_links_keeps_held_out_edges_out_of_the_graph(cora, cora_links):
    full, ds = graphtier.Dataset(cora), graphtier.Dataset(cora_links)
    info = link.link_split(ds)
    assert info["seed"] == 3 and info["val"] == 0.05 and info["disjoint"] == 0.0
    assert link.link_split(full) is None
    graph, full_graph = _edge_set(ds), _edge_set(full)
    assert graph < full_graph
    pairs = {}
    for split in ("train", "val", "test"):
        e = link.link_edges(ds, split)
        assert e.shape == (2, info["num_" + {"val": "valid"}.get(split, split)])
        pairs[split] = set(zip(e[0].tolist(), e[1].tolist()))
        assert pairs[split] <= full_graph  # each row is an edge of the input, in a stored direction
    # Cora is undirected: held-out edges are gone both ways; every training edge passes messages.
    for u, v in pairs["val"] | pairs["test"]:
        assert (u, v) not in graph and (v, u) not in graph
    for u, v in pairs["train"]:
        assert (u, v) in graph and (v, u) in graph
    num_pairs = len(pairs["train"]) + len(pairs["val"]) + len(pairs["test"])
    assert len(pairs["val"]) == int(0.05 * num_pairs) and len(pairs["test"]) == int(0.1 * num_pairs)
    assert ds.num_edges == 2 * len(pairs["train"])
    with pytest.raises(ValueError, match="has no link split"):
        link.link_edges(full, "train")


def test_split_links_refusals_are_one_line(cora, cora_links, tmp_path):
    for args, text in ((["--val", "0.7", "--test", "0.4"], "--val + --test must be below 1"),
                       (["--disjoint", "1"], "--disjoint must be a fraction in [0, 1)"),
                       (["--val", "-1"], "must not be negative")):
        r = subprocess.run([cli(), "split-links", "-d", cora, "-o", str(tmp_path / "o"), *args], capture_output=True,
                           text=True)
        assert r.returncode == 2 and text in r.stderr, r.stderr
        assert r.stderr.count("\n") == 1
    r = subprocess.run([cli(), "split-links", "-d", cora_links, "-o", str(tmp_path / "o")], capture_output=True,
                       text=True)
    assert r.returncode == 2 and "already holds a link split" in r.stderr
    r = subprocess.run([cli(), "--json", "split-links", "-d", cora_links.replace("cora-links", "nothing"), "-o",
                        str(tmp_path / "o")], capture_output=True, text=True)
    assert r.returncode == 1 and "cannot open" in r.stderr
    assert not (tmp_path / "o").exists()


def test_split_links_json_report(cora, tmp_path):
    r = subprocess.run([cli(), "--json", "-q", "split-links", "-d", cora, "-o", str(tmp_path / "s"), "--disjoint",
                        "0.3", "--seed", "1"], capture_output=True, text=True, check=True)
    report = json.loads(r.stdout)
    ds = graphtier.Dataset(str(tmp_path / "s"))
    assert report["num_message_edges"] == ds.num_edges
    assert report["num_train"] == link.link_split(ds)["num_train"] == int(0.3 * (report["num_pairs"] - report["num_valid"]
                                                                               - report["num_test"]))
    # Disjoint supervision edges pass no message.
    graph = _edge_set(ds)
    e = link.link_edges(ds, "train")
    assert all((u, v) not in graph for u, v in zip(e[0].tolist(), e[1].tolist()))


def test_binary_batches_label_positives_and_negatives(cora_links):
    ds = graphtier.Dataset(cora_links)
    loader = graphtier.LinkNeighborLoader(ds, [5, 5], batch_size=64, negatives="binary", amount=2, shuffle=True,
                                          seed=7, exclude_seed_edges=False)
    edges = link.link_edges(ds, "train")
    assert len(loader) == -(-edges.shape[1] // 64)
    seen = []
    for batch in loader:
        p = batch.input_id.numel()
        assert batch.label_index.shape == (2, p + 2 * p) and batch.label.shape == (3 * p,)
        assert torch.equal(batch.label[:p], torch.ones(p)) and torch.equal(batch.label[p:], torch.zeros(2 * p))
        assert torch.equal(batch.seeds, torch.unique(batch.seeds))
        src, dst = batch.seeds[batch.label_index[0]], batch.seeds[batch.label_index[1]]
        assert torch.equal(torch.stack([src[:p], dst[:p]]), edges[:, batch.input_id])
        assert torch.equal(batch.blocks[0].src_nodes[: batch.num_seeds], batch.seeds)
        assert batch.x.shape == (batch.input_nodes.numel(), ds.feature_dim)
        seen.append(batch.input_id)
    assert torch.equal(torch.sort(torch.cat(seen)).values, torch.arange(edges.shape[1]))
    # Reproducible: the same epoch again draws the same batches.
    loader.set_epoch(0)
    first = next(iter(loader))
    loader.set_epoch(0)
    again = next(iter(loader))
    assert torch.equal(first.label_index, again.label_index) and torch.equal(first.seeds, again.seeds)
    assert not torch.equal(next(iter(loader)).input_id, first.input_id)  # epoch 1: another order


def test_prefetched_batches_are_the_batches_made_on_demand(cora_links):
    ds = graphtier.Dataset(cora_links)
    store = graphtier.FeatureStore(ds)

    def epoch(prefetch: int, stop: int = -1) -> list:
        loader = graphtier.LinkNeighborLoader(ds, [5, 5], batch_size=256, negatives="binary", shuffle=True, seed=3,
                                              store=store, prefetch=prefetch)
        out = []
        for i, b in enumerate(loader):
            if i == stop:
                break  # leaves the worker's batches behind: cancelled or finished, never yielded
            out.append((b.input_id, b.seeds, b.label_index, b.x, [blk.indices for blk in b.blocks]))
        return out

    def same(a, b) -> bool:
        return len(a) == len(b) and all(torch.equal(x, y) for p, q in zip(a, b) for x, y in zip(
            (*p[:4], *p[4]), (*q[:4], *q[4])))

    on_demand = epoch(0)
    assert len(on_demand) > 4
    assert same(epoch(3), on_demand)
    assert same(epoch(1, stop=2), on_demand[:2])
    # A batch that cannot be made raises where the caller takes it, with the worker's message.
    with pytest.raises(ValueError, match="whole number"):
        next(iter(graphtier.LinkNeighborLoader(ds, [5], negatives="triplet", amount=1.5, prefetch=2)))
    with pytest.raises(ValueError, match="prefetch"):
        graphtier.LinkNeighborLoader(ds, [5], prefetch=-1)


def test_triplet_batches_and_guaranteed_non_edges(cora_links):
    ds = graphtier.Dataset(cora_links)
    graph = _edge_set(ds)
    held = set()
    for split in ("val", "test"):
        e = link.link_edges(ds, split)
        held |= set(zip(e[0].tolist(), e[1].tolist())) | set(zip(e[1].tolist(), e[0].tolist()))
    loader = graphtier.LinkNeighborLoader(ds, [4], batch_size=128, negatives="triplet", amount=3, non_edges=True)
    for i, batch in enumerate(loader):
        p = batch.input_id.numel()
        assert batch.src_index.shape == (p,) and batch.dst_neg_index.shape == (p, 3)
        assert batch.label_index is None and batch.unverified == 0
        src = batch.seeds[batch.src_index].tolist()
        for k, u in enumerate(src):
            for v in batch.seeds[batch.dst_neg_index[k]].tolist():
                assert (u, v) not in graph and (u, v) not in held
        if i == 3:
            break


def test_seed_edges_pass_no_message(cora_links):
    ds = graphtier.Dataset(cora_links)
    kept = graphtier.LinkNeighborLoader(ds, [-1, -1], batch_size=32, exclude_seed_edges=False)
    excluded = graphtier.LinkNeighborLoader(ds, [-1, -1], batch_size=32)
    with_edges, without = next(iter(kept)), next(iter(excluded))
    edges = link.link_edges(ds, "train")[:, :32]
    seed_pairs = set(zip(edges[0].tolist(), edges[1].tolist())) | set(zip(edges[1].tolist(), edges[0].tolist()))

    def messages(batch):
        out = set()
        for b in batch.blocks:
            e = b.edge_index
            out |= set(zip(b.src_nodes[e[0]].tolist(), b.src_nodes[e[1]].tolist()))
        return out

    assert seed_pairs & messages(with_edges)  # all neighbours: the training edges are there...
    assert not seed_pairs & messages(without)  # ...and excluded, none is
    assert messages(without) <= messages(with_edges)


def test_refusals(cora_links, cora):
    ds = graphtier.Dataset(cora_links)
    with pytest.raises(ValueError, match="negatives"):
        graphtier.LinkNeighborLoader(ds, [5], negatives="ternary")
    with pytest.raises(ValueError, match=r"\[2, num_edges\]"):
        graphtier.LinkNeighborLoader(ds, [5], edges=torch.zeros(3, 4, dtype=torch.int64))
    with pytest.raises(IndexError, match=rf"edges: node id {ds.num_nodes} is outside the graph's ids \[0, {ds.num_nodes}\)"):
        graphtier.LinkNeighborLoader(ds, [5], edges=torch.tensor([[0], [ds.num_nodes]]))
    with pytest.raises(TypeError, match="integer node ids"):
        graphtier.LinkNeighborLoader(ds, [5], edges=torch.zeros(2, 4))
    for name, value in (("batch_size", 1.5), ("prefetch", 2.5), ("seed", 0.5), ("batch_size", True)):
        with pytest.raises(TypeError, match=f"{name}: expected an integer, got {value!r}"):
            graphtier.LinkNeighborLoader(ds, [5], **{name: value})
    with pytest.raises(ValueError, match="one per edge"):
        graphtier.LinkNeighborLoader(ds, [5], edges=torch.zeros(2, 4, dtype=torch.int64), labels=torch.ones(3),
                                     ids_numbering="prepared")
    with pytest.raises(ValueError, match="whole number"):
        next(iter(graphtier.LinkNeighborLoader(ds, [5], negatives="triplet", amount=1.5)))
    # A dataset without a split: every edge of its graph supervises.
    loader = graphtier.LinkNeighborLoader(graphtier.Dataset(cora), [2], batch_size=1000)
    assert len(loader) == -(-graphtier.Dataset(cora).num_edges // 1000)


@pytest.mark.parametrize("negatives, amount", [("triplet", 1.5), ("triplet", 0), ("triplet", float("inf")),
                                               ("triplet", 1e15), ("binary", 0), ("binary", -1.0),
                                               ("binary", float("nan"))])
def test_bad_negative_options_are_refused_when_the_loader_is_made(cora_links, negatives, amount):
    # Refused by the constructor, naming the amount: not at the first batch, in the prefetch thread.
    with pytest.raises(ValueError, match=f"{negatives} negative sampling: amount"):
        graphtier.LinkNeighborLoader(graphtier.Dataset(cora_links), [5], batch_size=512, negatives=negatives,
                                     amount=amount)


def test_every_option_is_checked_when_the_loader_is_made(cora_links):
    ds = graphtier.Dataset(cora_links)
    for kwargs, error, message in [({"seed": -1}, ValueError, r"seed: expected an integer in \[0, 2\^64\), got -1"),
                                   ({"fanouts": [-2]}, ValueError, "fanouts"), ({"fanouts": []}, ValueError, "fanouts"),
                                   ({"batch_size": 0}, ValueError, "batch_size"),
                                   ({"prefetch": -1}, ValueError, "prefetch"),
                                   ({"temporal_strategy": "first"}, ValueError, "temporal_strategy"),
                                   ({"time_attr": "edge_time"}, ValueError, "edge_label_time"),
                                   ({"edge_label_time": torch.zeros(4488)}, ValueError, "time_attr"),
                                   ({"ids_numbering": "renumbered", "edges": torch.tensor([[0], [1]])}, ValueError,
                                    "'renumbered'")]:
        options = {"fanouts": [5], **kwargs}
        with pytest.raises(error, match=message):
            graphtier.LinkNeighborLoader(ds, options.pop("fanouts"), **options)


def test_edges_in_the_original_numbering(cora, cora_links):
    # `cora` is renumbered (graphtier prepare): edges given in the original numbering with
    # ids_numbering="original" are the dataset's edges once mapped, as NeighborLoader's ids.
    ds = graphtier.Dataset(cora_links)
    assert ds.prepared
    own = link.link_edges(ds, "test")[:, :40]
    original = ds.to_original(own.reshape(-1)).view(2, -1)
    assert not torch.equal(original, own)
    loader = graphtier.LinkNeighborLoader(ds, [3], 40, edges=original, ids_numbering="original")
    assert torch.equal(loader.edges, own)
    # Unsaid, the numbering of a tensor on a renumbered dataset is refused, as NeighborLoader's ids:
    # read as the dataset's own, these edges would be other, mostly non-existent, edges.
    with pytest.raises(ValueError, match=r"edges: dataset .* was renumbered by `graphtier prepare`.*ids_numbering="):
        graphtier.LinkNeighborLoader(ds, [3], 40, edges=original)
    assert torch.equal(graphtier.LinkNeighborLoader(ds, [3], 40, edges=own, ids_numbering="prepared").edges, own)
    batch = next(iter(loader))
    assert torch.equal(batch.seeds[batch.label_index], own)
    # A split is in the dataset's own numbering: the option is refused by its own name, not the
    # FeatureStoreOptions' the loader's other keywords go to.
    for edges in ("train", None):
        with pytest.raises(ValueError, match="ids_numbering 'original' applies to edges given as a tensor") as e:
            graphtier.LinkNeighborLoader(ds, [3], 40, edges=edges, ids_numbering="original")
        assert "FeatureStoreOptions" not in str(e.value)


# A loader left alive at exit, mid-epoch: the script of test_a_loader_alive_at_exit_leaks_nothing.
ALIVE_AT_EXIT = """
import sys
import graphtier
loader = graphtier.LinkNeighborLoader(sys.argv[1], [5, 5], 64, negatives="binary", shuffle=True)
batch = next(iter(loader))
if sys.argv[2] == "pyg":
    import graphtier.pyg
    pyg_loader = graphtier.pyg.LinkNeighborLoader(sys.argv[1], [5, 5], batch_size=64, neg_sampling="triplet")
    data = next(iter(pyg_loader))
print("exiting with", batch.index)
"""


def leaks_at_exit(dataset: str, kind: str) -> str:
    """The stderr of a process that makes link loaders (`kind` "pyg": graphtier's and PyG's),
    takes a batch and exits with them alive."""
    import sys
    r = subprocess.run([sys.executable, "-c", ALIVE_AT_EXIT, dataset, kind], capture_output=True, text=True)
    assert r.returncode == 0 and "exiting with 0" in r.stdout, r.stderr
    return r.stderr


def test_a_loader_alive_at_exit_leaks_nothing(cora_links):
    # Before, with PyTorch 2.x, nanobind reported the Dataset instance "leaked" at exit: the loader's
    # edges viewed the memory map with the Python Dataset as their owner, and the view's base tensor
    # is not freed while Python finalizes. (PyTorch 1.13 freed it: this fails on 2.x only.)
    assert "leaked" not in leaks_at_exit(cora_links, "plain")


@pytest.mark.parametrize("k", [0, 4, 9])
def test_a_link_loader_resumes_mid_epoch_from_its_state(cora_links, k):
    # state_dict after k batches, loaded into a fresh loader: exactly the remaining batches of the
    # uninterrupted pass (seeds, negatives, blocks), then the epoch after it.
    def make(**kw):
        options = dict(negatives="binary", amount=2, shuffle=True, seed=5, prefetch=2)
        return graphtier.LinkNeighborLoader(cora_links, [4, 3], 80, **{**options, **kw})

    whole = make()
    reference = [list(whole), list(whole)]
    assert len(reference[0]) == 57
    interrupted = make()
    list(interrupted)
    it = iter(interrupted)
    for _ in range(k):
        next(it)
    state = interrupted.state_dict()
    assert (state["epoch"], state["batch"]) == (1, k)
    del it
    fresh = make()
    fresh.load_state_dict(state)
    rest = list(fresh)
    assert [b.index for b in rest] == list(range(k, 57))
    for a, b in zip(rest, reference[1][k:], strict=True):
        assert torch.equal(a.seeds, b.seeds) and torch.equal(a.label_index, b.label_index)
        assert torch.equal(a.label, b.label)
        assert torch.equal(a.input_nodes, b.input_nodes)
        for x, y in zip(a.blocks, b.blocks, strict=True):
            assert torch.equal(x.indptr, y.indptr) and torch.equal(x.indices, y.indices)
    assert fresh.state_dict()["epoch"] == 2
    # A state of other options, or of other supervision edges, is refused naming the difference.
    with pytest.raises(ValueError, match="its amount is 2.0, this loader's 1.0"):
        make(amount=1).load_state_dict(state)
    with pytest.raises(ValueError, match="its edges is"):
        make(edges="valid").load_state_dict(state)
    with pytest.raises(ValueError, match="expected a graphtier loader's state_dict"):
        make().load_state_dict({"epoch": 1})
