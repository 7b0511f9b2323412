"""Typed (heterogeneous) minibatches through the engine's loader on ACM (datasets/acm): each batch is
`_core.sample_minibatch`'s with the same seeds, seed and stream, split by node type and relation
(typed_blocks) with every type and relation present and every id in its type's range; the
relation_fanouts option reaches the sampler by relation name, and bad ones are named errors."""

import pytest
import torch

import graphtier
from graphtier import _core, options
from graphtier.loader import Block

FANOUTS = [4, 3]
RELATION_FANOUTS = {"a:to:p": [2, 1], "s:to:p": [-1, 0], "p:to:a": [3, 0]}


def relation_types(ds):
    types = {name: t for t, name in enumerate(ds.node_types)}
    return [(types[r.split(":")[0]], types[r.split(":")[2]]) for r in ds.relations]


def by_id(ds, relation_fanouts):
    return {ds.relations.index(name): fanouts for name, fanouts in relation_fanouts.items()}


def check_typed_block(ds, typed, block, relations, previous=None):
    """The properties TypedBlock promises, against the untyped block it splits."""
    ranges = ds.node_type_ranges
    assert list(typed.src_nodes) == ds.node_types and list(typed.num_dst) == ds.node_types
    assert list(typed.relations) == ds.relations  # every relation present, empty ones too
    for t, nodes in typed.src_nodes.items():
        lo, hi = ranges[t]
        assert nodes.dtype == torch.int64
        assert bool(((nodes >= lo) & (nodes < hi)).all()), t
        if previous is not None:  # this block's dst nodes of type t are the previous block's src nodes
            assert torch.equal(nodes[: typed.num_dst[t]], previous.src_nodes[t])
    # The per-type lists partition the block's nodes, dst nodes first.
    assert sorted(torch.cat(list(typed.src_nodes.values())).tolist()) == sorted(block.src_nodes.tolist())
    assert sum(typed.num_dst.values()) == block.num_dst
    edges = 0
    for r, (name, rb) in enumerate(typed.relations.items()):
        src, _, dst = name.split(":")
        assert (rb.src_type, rb.dst_type) == (src, dst)
        assert rb.num_src == typed.src_nodes[src].numel() and rb.num_dst == typed.num_dst[dst]
        assert rb.indptr.numel() == rb.num_dst + 1
        assert bool((block.edge_types[rb.block_edges] == r).all())
        # Each edge joins the same global nodes as the block's edge it came from.
        s_global = typed.src_nodes[src][rb.indices]
        d_global = typed.src_nodes[dst][rb.dst_index]
        assert torch.equal(s_global, block.src_nodes[block.indices[rb.block_edges]])
        assert torch.equal(d_global, block.src_nodes[block.dst_index[rb.block_edges]])
        edges += rb.num_edges
    assert edges == block.num_edges


def test_a_typed_batch_is_the_samplers_split_by_type_and_relation(acm):
    ds = graphtier.Dataset(acm)
    assert ds.node_types == ["p", "a", "s"] and ds.labelled_type == "p"
    loader = graphtier.NeighborLoader(ds, FANOUTS, 256, split="train", relation_fanouts=RELATION_FANOUTS, seed=5,
                                      sample_threads=2)
    assert loader.options.relation_fanouts == RELATION_FANOUTS
    lo, hi = ds.node_type_ranges["p"]
    seen = 0
    for batch in loader:
        assert batch.x is None and batch.x_dict == {}  # ACM has no feature tables
        assert bool(((batch.seeds >= lo) & (batch.seeds < hi)).all())
        expected = _core.sample_minibatch(ds, "neighbor", batch.seeds.clone(), FANOUTS, False, 5,
                                          _core.minibatch_stream(0, batch.index),
                                          relation_fanouts=by_id(ds, RELATION_FANOUTS))
        assert len(batch.blocks) == len(expected["blocks"]) == len(batch.typed_blocks) == 2
        previous = None
        for block, d, typed in zip(batch.blocks, expected["blocks"], batch.typed_blocks):
            want = Block.from_dict(d)
            for field in ("src_nodes", "indptr", "indices", "edge_ids", "edge_types"):
                assert torch.equal(getattr(block, field), getattr(want, field)), field
            split = want.split(torch.tensor(ds.node_type_offset), relation_types(ds))
            for t, name in enumerate(ds.node_types):
                assert typed.num_dst[name] == split["num_dst"][t]
                assert torch.equal(typed.src_nodes[name], split["src_nodes"][t])
            for r, name in enumerate(ds.relations):
                for key in ("indptr", "indices", "block_edges"):
                    assert torch.equal(getattr(typed.relations[name], key), split["relations"][r][key])
            check_typed_block(ds, typed, block, ds.relations, previous)
            previous = typed
        assert torch.equal(batch.typed_blocks[0].src_nodes["p"][: batch.num_seeds], batch.seeds)
        assert torch.equal(batch.input_nodes_dict["a"], batch.typed_blocks[-1].src_nodes["a"])
        # The named fanouts hold: s:to:p takes every subject in block 0 and none in block 1.
        assert batch.typed_blocks[1].relations["s:to:p"].num_edges == 0
        assert batch.typed_blocks[0].relations["a:to:p"].dst_index.bincount().max() <= 2
        seen += batch.num_seeds
    assert seen == ds.split("train")["p"].numel() == 803


def test_one_relation_alone_and_empty_relations_stay_present(acm):
    # fanouts 0 for every relation but a:to:p: a block of papers' authors, all of them.
    ds = graphtier.Dataset(acm)
    loader = graphtier.NeighborLoader(ds, [0], 64, split="valid", relation_fanouts={"a:to:p": [-1]}, shuffle=False)
    batch = next(iter(loader))
    typed = batch.typed_blocks[0]
    assert typed.relations["s:to:p"].num_edges == 0 and typed.relations["p:to:a"].num_edges == 0
    assert typed.relations["p:to:s"].indptr.tolist() == [0]  # no subject is a dst node: one entry
    assert typed.src_nodes["s"].numel() == 0 and typed.num_dst["s"] == 0
    authors = typed.relations["a:to:p"]
    assert authors.num_edges == batch.blocks[0].num_edges > 0
    assert typed.src_nodes["a"].numel() == authors.indices.unique().numel()


def test_bad_relation_fanouts_are_named_errors(acm, tmp_path):
    ds = graphtier.Dataset(acm)
    with pytest.raises(ValueError, match=r"relation_fanouts: unknown relation 'p:cites:p' \(the dataset's "
                                         r"relations: p:to:a, a:to:p, p:to:s, s:to:p\)"):
        graphtier.NeighborLoader(ds, [2, 2], split="train", relation_fanouts={"p:cites:p": [1, 1]})
    with pytest.raises(ValueError, match=r"relation_fanouts\['a:to:p'\] has 1 hops, fanouts has 2"):
        graphtier.NeighborLoader(ds, [2, 2], split="train", relation_fanouts={"a:to:p": [1]})
    with pytest.raises(ValueError, match=r"relation_fanouts\[1\]\[0\]"):
        graphtier.NeighborLoader(ds, [2], split="train", relation_fanouts={"a:to:p": [-2]})
    (tmp_path / "e.txt").write_text("0 1\n1 2\n2 0\n")
    from conftest import run_cli
    run_cli("convert", "edge-list", str(tmp_path / "e.txt"), "-o", str(tmp_path / "g"))
    plain = graphtier.Dataset(str(tmp_path / "g"))
    with pytest.raises(ValueError, match="relation_fanouts: .* is a homogeneous dataset \\(no relations\\); use fanouts"):
        graphtier.NeighborLoader(plain, [2], ids=[0, 1], relation_fanouts={"a:to:p": [1]})
    with pytest.raises(TypeError):
        graphtier.NeighborLoader(ds, [2], split="train", relation_fanouts=[1, 2])
    # A typed dataset is sampled per relation on the CPU only, by the neighbour sampler.
    with pytest.raises(ValueError, match="neighbor"):
        graphtier.LayerLoader(ds, [16], split="train")


def test_relation_fanouts_on_the_command_line():
    parse = options.parse_fanouts_by_name
    assert parse("p:to:a=10,5; a:to:p=-1,0") == {"p:to:a": [10, 5], "a:to:p": [-1, 0]}
    assert parse("") == {}
    for bad in ("p:to:a", "p:to:a=x", "=1,2", "p:to:a=1,,2"):
        with pytest.raises(Exception, match="is not NAME=F,F"):
            parse(bad)
    import argparse
    p = argparse.ArgumentParser()
    options.add_arguments(p, options.LoaderOptions, ["relation_fanouts"])
    assert p.parse_args([]).relation_fanouts == {}
    args = p.parse_args(["--relation-fanouts", "a:to:p=2,1"])
    assert options.from_arguments(args, options.LoaderOptions, ["relation_fanouts"]).relation_fanouts == {"a:to:p": [2, 1]}


@pytest.fixture(scope="module")
def igbh_tiny(tmp_path_factory) -> str:
    """An IGBH-shaped graph (4 types, 8 relations) with 8-d features on every type."""
    from conftest import run_cli
    path = str(tmp_path_factory.mktemp("igbh") / "igbh")
    run_cli("generate", "--schema", "igbh", "--nodes", "2000", "--feature-dim", "8", "--classes", "4", "--seed", "1",
            "-o", path)
    return path


@pytest.mark.parametrize("window", [0, 4])
def test_each_types_rows_through_the_window_and_merged_gathers(igbh_tiny, window):
    """Each type's rows reach x_dict from storage and the host cache alike, with or without the
    window announcing them to their type's store and with gathers merging the waiting batches: the
    rows of the type's table, in its input nodes' order."""
    ds = graphtier.Dataset(igbh_tiny)
    tables = {t: ds.type_features(t) for t in ds.node_types}
    loader = graphtier.NeighborLoader(ds, [4, 3], 64, split="train", seed=2, sample_threads=2, cpu_buffer="0",
                                      host_cache="10%", io_depth=64, window=window, max_merge=4)
    batches = 0
    for batch in loader:
        assert sorted(batch.x_dict) == sorted(ds.node_types)
        for t, x in batch.x_dict.items():
            begin = ds.node_type_ranges[t][0]
            assert torch.equal(x, tables[t][batch.input_nodes_dict[t] - begin]), (batch.index, t)
        batches += 1
    stats = loader.stats()
    assert stats["batches"] == batches > 1
    assert stats["gathers"] <= batches and stats["expected_storage_reads"] > 0
    features = stats["features"]
    assert features["storage"]["rows"] > 0 and features["host_cache"]["rows"] > 0, features
