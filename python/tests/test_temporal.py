"""Temporal sampling (include/graphtier/sample/temporal.hpp, docs/format.md "Timestamps"): OGB's
node_year converted into node_time.bin, and the loaders' time_attr / input_time /
temporal_strategy on a tiny golden graph (the samples of "last" known by hand) and on a generated
one (every edge no later than its tree's time, as many as the fanout allows)."""

import gzip
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch

import graphtier
import graphtier.convert
from conftest import has_module, run_cli

# 6 nodes, node years 0:5 1:1 2:2 3:3 4:4 5:6; in-neighbours 0 <- {1..5}, 2 <- {1}, 3 <- {1, 2},
# 4 <- {1, 2, 3}, 5 <- {1, 2, 3, 4} (tests/sample/temporal_sampler_test.cpp's golden graph).
EDGES = [(1, 0), (2, 0), (3, 0), (4, 0), (5, 0), (1, 2), (1, 3), (2, 3), (1, 4), (2, 4), (3, 4), (1, 5), (2, 5),
         (3, 5), (4, 5)]
YEARS = [5, 1, 2, 3, 4, 6]


def write_gzip(path: Path, text: str) -> None:
    with gzip.open(path, "wt") as f:
        f.write(text)


def ogb_tree(root: Path, years: str) -> Path:
    raw = root / "raw"
    raw.mkdir(parents=True)
    write_gzip(raw / "edge.csv.gz", "".join(f"{s},{d}\n" for s, d in EDGES))
    write_gzip(raw / "num-node-list.csv.gz", "6\n")
    write_gzip(raw / "num-edge-list.csv.gz", f"{len(EDGES)}\n")
    write_gzip(raw / "node_year.csv.gz", years)
    return root


@pytest.fixture(scope="module")
def golden(tmp_path_factory) -> str:
    root = tmp_path_factory.mktemp("temporal")
    ogb_tree(root / "ogb", "".join(f"{y}\n" for y in YEARS))
    graphtier.convert.ogb(str(root / "ogb"), str(root / "ds"))
    return str(root / "ds")


def with_times(src: str, dst: Path, **arrays) -> str:
    """A copy of dataset `src` with int64 `node_time` / `edge_time` arrays added to its manifest
    (checksums are not checked on open; graphtier verify would)."""
    shutil.copytree(src, dst)
    manifest = json.loads((dst / "manifest.json").read_text())
    for name, values in arrays.items():
        data = np.asarray(values, dtype=np.int64)
        data.tofile(dst / f"{name}.bin")
        manifest["files"][name] = {"path": f"{name}.bin", "bytes": data.nbytes, "xxh3": "0" * 16}
    (dst / "manifest.json").write_text(json.dumps(manifest))
    return str(dst)


def test_ogb_node_year_becomes_node_time(golden, tmp_path):
    ds = graphtier.Dataset(golden)
    assert ds.node_time.tolist() == YEARS
    assert ds.edge_time is None
    # A year that is not an integer, and a count other than the nodes', name the file.
    ogb_tree(tmp_path / "float", "5\n1\n2.5\n3\n4\n6\n")
    with pytest.raises(ValueError, match=r"node_year\.csv\.gz:3:.*integer timestamp"):
        graphtier.convert.ogb(str(tmp_path / "float"), str(tmp_path / "out1"))
    ogb_tree(tmp_path / "short", "5\n1\n2\n")
    with pytest.raises(ValueError, match=r"node_year\.csv\.gz.*has 3 timestamps, expected one per node \(6\)"):
        graphtier.convert.ogb(str(tmp_path / "short"), str(tmp_path / "out2"))
    # The reader checks the arrays' sizes.
    bad = with_times(golden, tmp_path / "bad", edge_time=[1, 2, 3])
    with pytest.raises(ValueError, match=r"edge_time\.bin.*expected 120"):
        graphtier.Dataset(bad)


def test_prepare_moves_the_times(golden, tmp_path):
    timed = with_times(golden, tmp_path / "timed", edge_time=list(range(100, 100 + len(EDGES))))
    run_cli("prepare", "--dataset", timed, "--out", str(tmp_path / "p"), "--hotness", "degree")
    ds, before = graphtier.Dataset(str(tmp_path / "p")), graphtier.Dataset(timed)
    old = ds.to_original(torch.arange(6))
    assert ds.node_time.tolist() == [YEARS[v] for v in old.tolist()]
    # Each edge keeps its time: row v of the new graph is row old[v] of the input, in order.
    new_indptr = np.fromfile(Path(ds.path, "indptr.bin"), dtype=np.int64)
    old_indptr = np.fromfile(Path(timed, "indptr.bin"), dtype=np.int64)
    for v in range(6):
        o = int(old[v])
        assert ds.edge_time[new_indptr[v]:new_indptr[v + 1]].tolist() == \
            before.edge_time[old_indptr[o]:old_indptr[o + 1]].tolist()


def test_edge_list_time_column(tmp_path):
    # 0 -> 1 twice (times 7 and 3: it keeps 3), 2 -> 1 at 5, 1 -> 0 at 9; column 1 lists 0, 2.
    (tmp_path / "e.txt").write_text("# src dst time\n0 1 7\n2,1,5\n1 0 9\n0 1 3\n")
    graphtier.convert.edge_list(tmp_path / "e.txt", tmp_path / "d", edge_time=True)
    ds = graphtier.Dataset(str(tmp_path / "d"))
    # CSC: 0 <- {1}, 1 <- {0, 2}, 2 <- {}.
    assert ds.edge_time.tolist() == [9, 3, 5]
    # Symmetrized, each edge's reverse takes its time; 0 <-> 1 is given both ways: the earliest, 3.
    graphtier.convert.edge_list(tmp_path / "e.txt", tmp_path / "s", edge_time=True, symmetrize=True)
    ds = graphtier.Dataset(str(tmp_path / "s"))
    assert ds.edge_time.tolist() == [3, 3, 5, 5]  # 0 <- {1}, 1 <- {0, 2}, 2 <- {1}
    (tmp_path / "bad.txt").write_text("0 1 7\n2 1 5.5\n")
    with pytest.raises(ValueError, match=r"bad\.txt:2:.*time '5\.5' is not an integer"):
        graphtier.convert.edge_list(tmp_path / "bad.txt", tmp_path / "b", edge_time=True)
    (tmp_path / "none.txt").write_text("0 1\n")
    with pytest.raises(ValueError, match=r"none\.txt:1:.*no time column"):
        graphtier.convert.edge_list(tmp_path / "none.txt", tmp_path / "n", edge_time=True)


def neighbours(block, i):
    ids = block.src_nodes[block.indices[block.indptr[i]:block.indptr[i + 1]]]
    return sorted(ids.tolist())


def test_last_on_the_golden_graph(golden):
    ds = graphtier.Dataset(golden)
    loader = graphtier.NeighborLoader(ds, [2, 2], 2, ids=[0, 5], input_time=[5, 2], time_attr="node_time",
                                      temporal_strategy="last", shuffle=False, features=False)
    batch = next(iter(loader))
    b0, b1 = batch.blocks
    # Tree 0 at 5: 0's eligible 1..4, the last two; tree 1 at 2: 5's eligible 1, 2.
    assert neighbours(b0, 0) == [3, 4] and neighbours(b0, 1) == [1, 2]
    assert b0.src_nodes.tolist() == [0, 5, 3, 4, 1, 2]
    assert b0.src_trees.tolist() == [0, 1, 0, 0, 1, 1]
    # Hop 2 keeps each tree's time: 4 (tree 0) takes 2, 3; 2 (tree 1) takes 1.
    assert neighbours(b1, 3) == [2, 3] and neighbours(b1, 5) == [1]
    assert b1.src_nodes.tolist().count(2) == 2  # in both trees
    # Without input_time the seeds' own node times (0: 5, 5: 6) are theirs: 5 reaches 3 and 4.
    loader = graphtier.NeighborLoader(ds, [2], 2, ids=[0, 5], time_attr="node_time", temporal_strategy="last",
                                      shuffle=False, features=False)
    b = next(iter(loader)).blocks[0]
    assert neighbours(b, 0) == [3, 4] and neighbours(b, 1) == [3, 4]
    # Untimed sampling of the same dataset is unchanged: no trees.
    assert next(iter(graphtier.NeighborLoader(ds, [2], 2, ids=[0, 5], features=False))).blocks[0].src_trees is None


def test_errors_name_the_problem(golden, cora):
    ds = graphtier.Dataset(golden)
    with pytest.raises(ValueError, match="input_time has 3 values for 2 ids"):
        graphtier.NeighborLoader(ds, [2], 2, ids=[0, 5], input_time=[1, 2, 3], time_attr="node_time")
    with pytest.raises(ValueError, match="input_time needs time_attr"):
        graphtier.NeighborLoader(ds, [2], 2, ids=[0, 5], input_time=[1, 2])
    with pytest.raises(ValueError, match="integer timestamps"):
        graphtier.NeighborLoader(ds, [2], 2, ids=[0, 5], input_time=[1.5, 2.0], time_attr="node_time")
    with pytest.raises(ValueError, match="has no edge times"):
        graphtier.NeighborLoader(ds, [2], 2, ids=[0, 5], time_attr="edge_time")
    with pytest.raises(ValueError, match="time_attr 'time'"):
        graphtier.NeighborLoader(ds, [2], 2, ids=[0, 5], time_attr="time")
    with pytest.raises(ValueError, match="unknown temporal strategy 'recent'"):
        graphtier.NeighborLoader(ds, [2], 2, ids=[0, 5], time_attr="node_time", temporal_strategy="recent")
    with pytest.raises(ValueError, match="has no node times"):
        graphtier.NeighborLoader(graphtier.Dataset(cora), [2], 8, split="train", time_attr="node_time")
    # The names front ends offer (graphtier.link's, from the engine) are the ones the loader takes.
    assert "node_time" in graphtier.link.TIME_ATTRS and len(graphtier.link.TEMPORAL_STRATEGIES) == 2
    for strategy in graphtier.link.TEMPORAL_STRATEGIES:
        graphtier.NeighborLoader(ds, [2], 2, ids=[0, 5], time_attr="node_time", temporal_strategy=strategy)


def test_uniform_keeps_every_edge_before_its_tree(synthetic, tmp_path):
    src = graphtier.Dataset(synthetic)
    rng = np.random.default_rng(0)
    node_time = rng.integers(0, 50, src.num_nodes)
    edge_time = rng.integers(0, 50, src.num_edges)
    ds = graphtier.Dataset(with_times(synthetic, tmp_path / "timed", node_time=node_time, edge_time=edge_time))
    indptr = torch.from_numpy(np.fromfile(Path(ds.path, "indptr.bin"), dtype=np.int64))
    ids = torch.arange(0, 600)
    input_time = torch.from_numpy(rng.integers(0, 50, 600))
    for attr, times in (("node_time", None), ("edge_time", torch.from_numpy(edge_time))):
        loader = graphtier.NeighborLoader(ds, [5, 3], 100, ids=ids, input_time=input_time, time_attr=attr,
                                          shuffle=True, seed=1)
        batches = 0
        for batch in loader:
            batches += 1
            seed_time = input_time[batch.seed_positions]
            assert batch.x.shape[0] == batch.input_nodes.numel()
            for l, block in enumerate(batch.blocks):
                t = seed_time[block.src_trees]  # each node's tree's time
                dst = block.dst_index
                if attr == "node_time":
                    edge_t = torch.from_numpy(node_time)[block.src_nodes[block.indices]]
                else:
                    edge_t = times[block.edge_ids]
                assert bool((edge_t <= t[dst]).all())
                assert bool((block.src_trees[block.indices] == block.src_trees[dst]).all())
                if l == 0:  # the seeds' hop: min(fanout, eligible) distinct edges each
                    for i in range(0, block.num_dst, 17):
                        v = int(block.src_nodes[i])
                        lo, hi = int(indptr[v]), int(indptr[v + 1])
                        col = (torch.from_numpy(node_time)[torch.from_numpy(
                            np.fromfile(Path(ds.path, "indices.bin"), dtype=np.int32)[lo:hi].astype(np.int64))]
                            if attr == "node_time" else times[lo:hi])
                        eligible = int((col <= t[i]).sum())
                        assert int(block.indptr[i + 1] - block.indptr[i]) == min(5, eligible)
        assert batches == 6


@pytest.mark.skipif(not has_module("torch_geometric"),
                    reason="torch_geometric is not installed (scripts/setup-torch2.sh makes a torch 2.x venv with it)")
def test_pyg_loader_takes_time_attr(golden):
    from graphtier.pyg import NeighborLoader
    ds = graphtier.Dataset(golden)
    loader = NeighborLoader(ds, num_neighbors=[2, 2], input_nodes=torch.tensor([0, 5]), input_time=torch.tensor([5, 2]),
                            time_attr="node_time", temporal_strategy="last", batch_size=2, seed=0)
    data = next(iter(loader))
    assert data.seed_time.tolist() == [5, 2]
    # PyG's disjoint layout: n_id seeds first, `batch` the tree of every node.
    assert data.n_id[:2].tolist() == [0, 5] and data.batch[:2].tolist() == [0, 1]
    assert data.batch.numel() == data.n_id.numel()
    src, dst = data.edge_index
    years = torch.tensor(YEARS)
    assert bool((years[data.n_id[src]] <= data.seed_time[data.batch[dst]]).all())
    assert bool((data.batch[src] == data.batch[dst]).all())
    with pytest.raises(ValueError, match="input_time needs time_attr"):
        NeighborLoader(ds, num_neighbors=[2], input_nodes=torch.tensor([0]), input_time=torch.tensor([1]))


def test_link_loader_samples_each_endpoint_at_its_edge_time(golden, synthetic, tmp_path):
    ds = graphtier.Dataset(golden)
    # Positives 1 -> 0 at 4 and 2 -> 5 at 2; "last" with fanout 2 (the golden graph's times known).
    edges, times = torch.tensor([[1, 2], [0, 5]]), torch.tensor([4, 2])
    loader = graphtier.LinkNeighborLoader(ds, [2], 2, edges=edges, edge_label_time=times, time_attr="node_time",
                                          temporal_strategy="last")
    b = next(iter(loader))
    # PyG's disjoint layout: sources, then destinations, one tree each at its edge's time.
    assert b.seeds.tolist() == [1, 2, 0, 5] and b.seed_time.tolist() == [4, 2, 4, 2]
    assert b.label_index.tolist() == [[0, 1], [2, 3]] and b.label.tolist() == [1.0, 1.0]
    block = b.blocks[0]
    # Tree 2 (node 0 at 4) takes 0's two latest in-neighbours no later than 4: 3 and 4; tree 3
    # (node 5 at 2) takes 1 and 2; nodes 1 (at 4) and 2 (at 2) have in-neighbours {} and {1}.
    assert neighbours(block, 2) == [3, 4] and neighbours(block, 3) == [1, 2] and neighbours(block, 1) == [1]
    assert b.batch.tolist() == (block.src_trees % 2).tolist()

    # Generated graph, node times: every edge of a tree and every negative no later than its time.
    src = graphtier.Dataset(synthetic)
    rng = np.random.default_rng(3)
    node_time = torch.from_numpy(rng.integers(0, 50, src.num_nodes))
    timed = graphtier.Dataset(with_times(synthetic, tmp_path / "timed", node_time=node_time.numpy()))
    k = 300
    pairs = torch.from_numpy(rng.integers(0, src.num_nodes, (2, k)))
    pair_time = torch.maximum(node_time[pairs[0]], node_time[pairs[1]]) + torch.from_numpy(rng.integers(0, 5, k))
    for negatives, amount in (("binary", 2.0), ("triplet", 3)):
        loader = graphtier.LinkNeighborLoader(timed, [4, 2], 64, edges=pairs, edge_label_time=pair_time,
                                              time_attr="node_time", negatives=negatives, amount=amount, seed=5,
                                              shuffle=True)
        seen = []
        for batch in loader:
            p = batch.input_id.numel()
            t = pair_time[batch.input_id]
            seen.append(batch.input_id)
            for block in batch.blocks:
                tree_t = batch.seed_time[block.src_trees]
                assert bool((node_time[block.src_nodes[block.indices]] <= tree_t[block.dst_index]).all())
                assert bool((block.src_trees[block.indices] == block.src_trees[block.dst_index]).all())
            if negatives == "binary":
                q = batch.label_index.shape[1] - p
                assert q == 2 * p and batch.seeds.numel() == 2 * (p + q)
                positive_t = t.repeat(3)[: p + q]  # negative i belongs to positive i mod P (PyG's)
                assert batch.seed_time.tolist() == positive_t.tolist() * 2
                assert bool((node_time[batch.seeds] <= batch.seed_time).all())
                ends = batch.seeds[batch.label_index]
                assert torch.equal(ends[:, :p], pairs[:, batch.input_id])
            else:
                assert batch.dst_neg_index.shape == (p, 3)
                neg = batch.seeds[batch.dst_neg_index]
                assert bool((node_time[neg] <= t.unsqueeze(1)).all())
                assert torch.equal(batch.seeds[batch.src_index], pairs[0, batch.input_id])
                assert torch.equal(batch.seeds[batch.dst_pos_index], pairs[1, batch.input_id])
            assert torch.equal(batch.batch, batch.blocks[-1].src_trees % p)
        assert torch.equal(torch.sort(torch.cat(seen)).values, torch.arange(k))

    with pytest.raises(ValueError, match="give edge_label_time"):
        graphtier.LinkNeighborLoader(ds, [2], 2, edges=edges, time_attr="node_time")
    with pytest.raises(ValueError, match="edge_label_time needs time_attr"):
        graphtier.LinkNeighborLoader(ds, [2], 2, edges=edges, edge_label_time=times)
    with pytest.raises(ValueError, match=r"edge_label_time: expected one per edge \(2\), got 3"):
        graphtier.LinkNeighborLoader(ds, [2], 2, edges=edges, edge_label_time=[1, 2, 3], time_attr="node_time")
    with pytest.raises(ValueError, match="exclude no seed edges"):
        graphtier.LinkNeighborLoader(ds, [2], 2, edges=edges, edge_label_time=times, time_attr="node_time",
                                     exclude_seed_edges=True)
    with pytest.raises(ValueError, match="has no edge times"):
        graphtier.LinkNeighborLoader(ds, [2], 2, edges=edges, edge_label_time=times, time_attr="edge_time")


@pytest.mark.skipif(not has_module("torch_geometric"),
                    reason="torch_geometric is not installed (scripts/setup-torch2.sh makes a torch 2.x venv with it)")
def test_pyg_link_loader_takes_edge_label_time(golden):
    from graphtier.pyg import LinkNeighborLoader
    ds = graphtier.Dataset(golden)
    loader = LinkNeighborLoader(ds, num_neighbors=[2], edge_label_index=torch.tensor([[1, 2], [0, 5]]),
                                edge_label_time=torch.tensor([4, 2]), time_attr="node_time", batch_size=2,
                                neg_sampling="binary", seed=0)
    data = next(iter(loader))
    p = 2
    assert data.edge_label_index.tolist() == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert data.edge_label.tolist() == [1.0, 1.0, 0.0, 0.0] and data.edge_label_time.tolist() == [4, 2, 4, 2]
    assert data.n_id[:2].tolist() == [1, 2] and data.n_id[4:6].tolist() == [0, 5]
    assert bool((data.batch < p).all()) and data.batch.numel() == data.n_id.numel()
    src, dst = data.edge_index
    years = torch.tensor(YEARS)
    assert bool((years[data.n_id[src]] <= data.edge_label_time.repeat(2)[data.batch[dst] % 4]).all())


def test_typed_temporal_trees_per_relation(acm, tmp_path):
    """A typed dataset samples temporally per relation: every relation's edges reach only nodes no
    later than their tree's time, each type's nodes carry their trees, and graphtier.pyg yields
    HeteroData with `batch` per type and `seed_time`."""
    src = graphtier.Dataset(acm)
    rng = np.random.default_rng(2)
    node_time = torch.from_numpy(rng.integers(0, 20, src.num_nodes))
    ds = graphtier.Dataset(with_times(acm, tmp_path / "acm-timed", node_time=node_time.numpy()))
    begin, end = ds.node_type_ranges[ds.labelled_type]
    ids = torch.arange(begin, begin + 120)
    input_time = torch.from_numpy(rng.integers(5, 20, 120))
    loader = graphtier.NeighborLoader(ds, [3, 2], 40, ids={ds.labelled_type: ids - begin}, input_time=input_time,
                                      time_attr="node_time", shuffle=True, seed=3)
    edges = 0
    for batch in loader:
        seed_time = input_time[batch.seed_positions]
        for block in batch.typed_blocks:
            assert block.src_trees is not None
            for name, rel in block.relations.items():
                s, _, d = name.split(":")
                src_nodes, src_trees = block.src_nodes[s], block.src_trees[s]
                dst_trees = block.src_trees[d]
                assert bool((src_trees[rel.indices] == dst_trees[rel.dst_index]).all())
                assert bool((node_time[src_nodes[rel.indices]] <= seed_time[dst_trees[rel.dst_index]]).all())
                edges += int(rel.indices.numel())
    assert edges > 500
    if not has_module("torch_geometric"):
        return
    from graphtier.pyg import NeighborLoader
    pyg = NeighborLoader(ds, num_neighbors=[3, 2], input_nodes=(ds.labelled_type, ids - begin),
                         input_time=input_time, time_attr="node_time", batch_size=40, seed=3)
    data = next(iter(pyg))
    p = ds.labelled_type
    assert data[p].seed_time.tolist() == input_time[:40].tolist()
    assert data[p].batch[:40].tolist() == list(range(40))
    for (s, rel, d), store in data.edge_items():
        ei = store.edge_index
        assert bool((data[s].batch[ei[0]] == data[d].batch[ei[1]]).all())
        src_global = data[s].n_id[ei[0]] + ds.node_type_ranges[s][0]
        assert bool((node_time[src_global] <= data[p].seed_time[data[d].batch[ei[1]]]).all())
