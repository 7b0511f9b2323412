"""Per-relation neighbour sampling through the binding (graphtier._core.sample_minibatch's typed
arguments) and a block's split by node type and relation (Block.split, _core.split_block), on the
tiny typed graph of tests/sample/hetero_sampler_test.cpp written as an edge list."""

import pytest
import torch

from graphtier import _core
from graphtier.loader import Block

from conftest import run_cli

# Papers 0..3, authors 4..6, institutes none. Relations: 0 cites paper -> paper, 1 writes
# author -> paper, 2 written_by paper -> author, 3 affiliated institute -> author (no edges).
OFFSETS = torch.tensor([0, 4, 7, 7])
RELATIONS = [(0, 0), (1, 0), (0, 1), (2, 1)]
EDGES = [(1, 0), (2, 0), (3, 0), (4, 0), (5, 0), (0, 1), (4, 1), (3, 2), (6, 2), (0, 4), (1, 4), (0, 5), (2, 6)]


def relation_of(src: int, dst: int) -> int:
    paper = lambda v: v < 4  # noqa: E731
    if paper(dst):
        return 0 if paper(src) else 1
    return 2


@pytest.fixture(scope="module")
def typed(tmp_path_factory):
    """The dataset and its type_per_edge, read back from the CSC the converter wrote (each column
    sorted by source id, which sorts it by relation here: authors' ids follow the papers')."""
    root = tmp_path_factory.mktemp("typed")
    (root / "edges.txt").write_text("".join(f"{s} {d}\n" for s, d in EDGES))
    run_cli("convert", "edge-list", str(root / "edges.txt"), "-o", str(root / "g"))
    dataset = _core.Dataset(str(root / "g"))
    indptr, indices, _ = _core.extract_rows(dataset, torch.arange(7), 0)
    types = [relation_of(int(indices[e]), v) for v in range(7) for e in range(int(indptr[v]), int(indptr[v + 1]))]
    return dataset, torch.tensor(types, dtype=torch.uint8)


def sample(dataset, types, seeds, fanouts, **kwargs):
    return _core.sample_minibatch(dataset, "neighbor", torch.tensor(seeds), fanouts, False, 11, 5,
                                  node_type_offset=OFFSETS, relations=RELATIONS, type_per_edge=types, **kwargs)


def test_relation_fanouts_reach_the_sampler_and_blocks_carry_edge_types(typed):
    dataset, types = typed
    # cites 0, the others all: paper 0 keeps its authors 4, 5; author 4 its papers 0, 1.
    d = sample(dataset, types, [0, 4], [-1], relation_fanouts={0: [0]})
    block = Block.from_dict(d["blocks"][0])
    assert block.src_nodes.tolist() == [0, 4, 5, 1]
    assert block.indices.tolist() == [1, 2, 0, 3]
    assert block.edge_types.dtype == torch.uint8
    assert block.edge_types.tolist() == [1, 1, 2, 2]
    # The relation's fanout, not the default: all cites of paper 0 with {0: [-1]} and fanouts 0.
    d = sample(dataset, types, [0], [0], relation_fanouts={0: [-1]})
    assert Block.from_dict(d["blocks"][0]).edge_types.tolist() == [0, 0, 0]


def test_a_block_splits_by_type_and_relation_with_every_type_and_relation_present(typed):
    dataset, types = typed
    d = sample(dataset, types, [0, 4], [-1], relation_fanouts={0: [0]})
    split = Block.from_dict(d["blocks"][0]).split(OFFSETS, RELATIONS)
    assert split["num_dst"] == [1, 1, 0]
    assert [t.tolist() for t in split["src_nodes"]] == [[0, 1], [4, 5], []]
    assert len(split["relations"]) == 4
    cites, writes, written_by, affiliated = split["relations"]
    assert cites["indptr"].tolist() == [0, 0] and cites["indices"].numel() == 0
    assert writes["indptr"].tolist() == [0, 2] and writes["indices"].tolist() == [0, 1]
    assert writes["block_edges"].tolist() == [0, 1]
    assert written_by["indices"].tolist() == [0, 1] and written_by["block_edges"].tolist() == [2, 3]
    assert affiliated["indptr"].tolist() == [0, 0]


def test_bad_relation_fanouts_and_types_are_refused(typed):
    dataset, types = typed
    with pytest.raises(ValueError, match=r"unknown relation 7 \(the graph has 4 relations, 0 to 3\)"):
        sample(dataset, types, [0], [2], relation_fanouts={7: [1]})
    with pytest.raises(ValueError, match=r"relation_fanouts\[1\] has 2 hops, fanouts has 1"):
        sample(dataset, types, [0], [2], relation_fanouts={1: [1, 1]})
    with pytest.raises(ValueError, match="the graph has no relations"):
        _core.sample_minibatch(dataset, "neighbor", torch.tensor([0]), [2], False, 0, 0, relation_fanouts={0: [1]})
    with pytest.raises(ValueError, match="node_type_offset, relations and type_per_edge together"):
        _core.sample_minibatch(dataset, "neighbor", torch.tensor([0]), [2], False, 0, 0, node_type_offset=OFFSETS)
    unsorted = types.clone()
    unsorted[[2, 3]] = types[[3, 2]]  # column 0: cites, cites, writes, cites, writes; sources unmoved
    with pytest.raises(ValueError, match="edge 2 of relation 1 starts at node 3 of type 0, not of type 1"):
        sample(dataset, unsorted, [0], [2])
    with pytest.raises(ValueError, match="sampled per relation by the neighbor method"):
        _core.sample_minibatch(dataset, "ladies", torch.tensor([0]), [2], False, 0, 0, node_type_offset=OFFSETS,
                               relations=RELATIONS, type_per_edge=types)


def test_a_homogeneous_block_has_no_edge_types(typed):
    dataset, _ = typed
    d = _core.sample_minibatch(dataset, "neighbor", torch.tensor([0]), [-1], False, 0, 0)
    block = Block.from_dict(d["blocks"][0])
    assert block.edge_types is None
    with pytest.raises(ValueError, match="has no edge types"):
        block.split(OFFSETS, RELATIONS)
