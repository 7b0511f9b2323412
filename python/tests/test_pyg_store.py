"""graphtier behind PyG's own remote-backend interfaces (graphtier.pyg_store): the feature store
returns the dataset's tables, the graph store its CSC (typed: one per relation), and PyG's own
NodeLoader / LinkLoader over graphtier's sampler yield graphtier.pyg's batches for the same seed,
homogeneous and typed. Skipped, with the reason shown, where torch_geometric is not installed
(Debian's torch 1.13); scripts/setup-torch2.sh makes an environment with it."""

import json
from pathlib import Path

import numpy as np
import pytest
import torch

import graphtier
from conftest import assert_import_needs, has_module, read_csc, run_cli

needs_pyg = pytest.mark.skipif(not has_module("torch_geometric"),
                               reason="torch_geometric is not installed (scripts/setup-torch2.sh makes a torch 2.x "
                                      "environment with it)")
needs_pyg_sampler = pytest.mark.skipif(
    not (has_module("pyg_lib") or has_module("torch_sparse")),
    reason="PyG's own NeighborSampler needs pyg-lib or torch-sparse: neither is installed (no PyPI wheel for this "
           "torch: pyg-lib is not on PyPI, torch-sparse only as a source archive)")


def test_import_without_torch_geometric_says_how_to_get_it(monkeypatch):
    assert_import_needs(monkeypatch, "graphtier.pyg_store", "torch_geometric", r"pip install torch_geometric")


@pytest.fixture(scope="module")
def typed(tmp_path_factory) -> str:
    """A small IGBH-shaped typed graph WITH features (ACM has none): paper 984, author 1013,
    institute 1, fos 3 nodes; 8 relations (4 and their reverses); 8-d features on every type,
    4 classes on paper."""
    path = str(tmp_path_factory.mktemp("pyg_store") / "igbh")
    run_cli("generate", "--schema", "igbh", "--nodes", "2000", "--feature-dim", "8", "--classes", "4", "--seed", "1",
            "-o", path)
    return path


@pytest.fixture(scope="module")
def cora_raw(tmp_path_factory) -> str:
    """Cora as converted, never renumbered: one numbering, so loaders need no ids_numbering."""
    out = str(tmp_path_factory.mktemp("pyg_store") / "cora-raw")
    run_cli("convert", "planetoid", "--root", str(Path(__file__).resolve().parents[2] / "datasets" / "cora"),
            "--name", "cora", "--out", out)
    return out


def read_table(path: str, name: str, dim: int) -> torch.Tensor:
    """A packed float32 feature file of `path` read directly (not through graphtier)."""
    return torch.from_numpy(np.fromfile(Path(path, name), dtype=np.float32).reshape(-1, dim))


def read_labels(path: str) -> torch.Tensor:
    return torch.from_numpy(np.fromfile(Path(path, "labels.bin"), dtype=np.int32).astype(np.int64))


def stores(path: str):
    from graphtier.pyg_store import GraphtierFeatureStore, GraphtierGraphStore
    ds = graphtier.Dataset(path)
    return ds, GraphtierFeatureStore(ds), GraphtierGraphStore(ds)


@needs_pyg
def test_feature_store_reads_coras_tables_through_the_tiers(cora):
    ds, fs, _ = stores(cora)
    x = read_table(cora, "features.bin", ds.feature_dim)
    y = read_labels(cora)
    assert {(a.group_name, a.attr_name) for a in fs.get_all_tensor_attrs()} == {(None, "x"), (None, "y")}
    assert fs.get_tensor_size(None, "x") == (ds.num_nodes, ds.feature_dim)
    ids = torch.randperm(ds.num_nodes, generator=torch.Generator().manual_seed(0))[:300]
    assert torch.equal(fs.get_tensor(None, "x", ids), x[ids])
    assert torch.equal(fs.get_tensor(None, "y", ids), y[ids])
    mask = torch.zeros(ds.num_nodes, dtype=torch.bool)
    mask[[3, 7]] = True
    assert torch.equal(fs.get_tensor(None, "x", mask), x[[3, 7]])
    assert torch.equal(fs.get_tensor(None, "x", slice(10, 20)), x[10:20])
    assert torch.equal(fs.get_tensor(None, "x", 5), x[5])
    got_x, got_y = fs.multi_get_tensor([(None, "x", ids[:5]), (None, "y", ids[:5])])
    assert torch.equal(got_x, x[ids[:5]]) and torch.equal(got_y, y[ids[:5]])
    # The reads went through graphtier's store (its tiers count them), not a table in memory.
    assert fs.store.stats()["rows"] >= 300


@needs_pyg
def test_feature_store_reads_each_types_table_by_local_id(typed):
    ds, fs, _ = stores(typed)
    manifest = json.loads(Path(typed, "manifest.json").read_text())
    y = read_labels(typed)
    assert {(a.group_name, a.attr_name) for a in fs.get_all_tensor_attrs()} == \
        {(t, "x") for t in ds.node_types} | {("paper", "y")}
    g = torch.Generator().manual_seed(1)
    for t in manifest["hetero"]["node_types"]:
        name, dim = t["name"], t["features"]["dim"]
        begin, end = ds.node_type_ranges[name]
        table = read_table(typed, f"features.{name}.bin", dim)
        assert fs.get_tensor_size(name, "x") == (end - begin, dim) == tuple(table.shape)
        ids = torch.randint(0, end - begin, (50,), generator=g)
        assert torch.equal(fs.get_tensor(name, "x", ids), table[ids]), name
    begin, end = ds.node_type_ranges["paper"]
    assert torch.equal(fs.get_tensor("paper", "y", torch.arange(10)), y[begin:begin + 10])


@needs_pyg
def test_feature_store_refuses_what_it_does_not_hold(cora, typed):
    ds, fs, _ = stores(typed)
    with pytest.raises(KeyError, match=r"\('venue', 'x'\).*it holds"):
        fs.get_tensor("venue", "x", torch.arange(2))
    with pytest.raises(KeyError, match=r"\('author', 'y'\)"):  # labels live on paper only
        fs.get_tensor("author", "y", torch.arange(2))
    # Author 1000 is a global id inside the graph, but not a paper: local ids are checked per type.
    with pytest.raises(IndexError, match=r"index\['paper'\]: node id 984 is outside type 'paper''s ids \[0, 984\)"):
        fs.get_tensor("paper", "x", torch.tensor([0, 984]))
    with pytest.raises(IndexError, match=r"index\['fos'\]: node id -1 is outside type 'fos''s ids \[0, 3\)"):
        fs.get_tensor("fos", "x", torch.tensor([-1]))
    with pytest.raises(TypeError, match=r"index\[.paper.\]: expected integer node ids, got float32"):
        fs.get_tensor("paper", "x", torch.tensor([0.5]))
    with pytest.raises(NotImplementedError, match="read-only"):
        fs.put_tensor(torch.zeros(2, 8), "paper", "x", torch.arange(2))
    with pytest.raises(NotImplementedError, match="read-only"):
        fs.remove_tensor("paper", "x", None)
    _, fs, _ = stores(cora)
    with pytest.raises(IndexError, match=r"index: node id 2708 is outside the graph's ids \[0, 2708\)"):
        fs.get_tensor(None, "x", torch.tensor([2708]))
    with pytest.raises(KeyError, match=r"\(None, 'edge_attr'\)"):
        fs.get_tensor(None, "edge_attr", torch.tensor([0]))


@needs_pyg
def test_graph_store_hands_over_coras_csc(cora):
    from torch_geometric.data.graph_store import EdgeLayout
    indptr, indices = read_csc(cora)
    _, _, gs = stores(cora)
    (attr,) = gs.get_all_edge_attrs()
    assert attr.edge_type is None and attr.layout == EdgeLayout.CSC and attr.size == (2708, 2708)
    row, colptr = gs.get_edge_index(None, "csc")
    assert torch.equal(colptr, indptr) and torch.equal(row, indices)
    assert colptr.dtype == row.dtype == torch.int64
    # PyG's own conversions read it: COO is (sources, column of each edge).
    coo_row, coo_col, _ = gs.coo()
    assert torch.equal(coo_row, indices)
    assert torch.equal(coo_col, torch.repeat_interleave(torch.arange(2708), indptr[1:] - indptr[:-1]))
    with pytest.raises(KeyError, match="no edge type"):
        gs.get_edge_index(("a", "to", "b"), "csc")
    with pytest.raises(NotImplementedError, match="read-only"):
        gs.put_edge_index((row, colptr), None, "csc")


@needs_pyg
def test_graph_store_holds_one_csc_per_relation_in_type_ids(typed):
    indptr, indices = read_csc(typed)
    relation = torch.from_numpy(np.fromfile(Path(typed, "type_per_edge.bin"), dtype=np.uint8).astype(np.int64))
    column = torch.repeat_interleave(torch.arange(indptr.numel() - 1), indptr[1:] - indptr[:-1])
    ds, _, gs = stores(typed)
    ranges = ds.node_type_ranges
    assert [a.edge_type for a in gs.get_all_edge_attrs()] == [tuple(r.split(":")) for r in ds.relations]
    seen = torch.zeros(indices.numel(), dtype=torch.int64)
    for r, attr in enumerate(gs.get_all_edge_attrs()):
        src_type, _, dst_type = attr.edge_type
        assert attr.size == (ranges[src_type][1] - ranges[src_type][0], ranges[dst_type][1] - ranges[dst_type][0])
        row, colptr = gs.get_edge_index(attr.edge_type, "csc")
        assert colptr.numel() == attr.size[1] + 1
        e_ids = gs.edge_ids(attr.edge_type)
        seen[e_ids] += 1
        # Each of the relation's edges is the dataset's, in the types' own ids, in CSC order.
        assert bool((relation[e_ids] == r).all())
        assert torch.equal(row + ranges[src_type][0], indices[e_ids])
        assert torch.equal(torch.repeat_interleave(torch.arange(attr.size[1]), colptr[1:] - colptr[:-1])
                           + ranges[dst_type][0], column[e_ids])
        assert int(row.min()) >= 0 and int(row.max()) < attr.size[0]
    assert bool((seen == 1).all())  # the relations partition the edges


def check_node_batch(batch, indptr, indices, fanouts, seeds):
    """PyG's promises of a node batch: seeds first, every edge the graph's (at its e_id), a node of
    hop k hears from at most fanouts[k] neighbours, each at most once."""
    n = batch.num_nodes
    assert torch.equal(batch.n_id[:batch.batch_size], seeds)
    assert torch.unique(batch.n_id).numel() == n
    assert sum(batch.num_sampled_nodes) == n and sum(batch.num_sampled_edges) == batch.edge_index.size(1)
    src, dst = batch.n_id[batch.edge_index[0]], batch.n_id[batch.edge_index[1]]
    assert torch.equal(indices[batch.e_id], src)
    assert bool(((batch.e_id >= indptr[dst]) & (batch.e_id < indptr[dst + 1])).all())
    node_hop = torch.repeat_interleave(torch.arange(len(fanouts) + 1), torch.tensor(batch.num_sampled_nodes))
    indeg = torch.bincount(batch.edge_index[1], minlength=n)
    degree = indptr[batch.n_id + 1] - indptr[batch.n_id]
    for k, f in enumerate(fanouts):
        at = node_hop == k
        assert torch.equal(indeg[at], torch.clamp(degree[at], max=f))
    assert torch.unique(batch.e_id).numel() == batch.e_id.numel()


@needs_pyg
def test_pyg_node_loader_over_graphtier_yields_graphtier_pygs_batches(cora):
    from torch_geometric.loader import NodeLoader
    from graphtier.pyg import NeighborLoader
    from graphtier.pyg_store import GraphtierSampler
    indptr, indices = read_csc(cora)
    x = read_table(cora, "features.bin", 1433)
    y = read_labels(cora)
    ds, fs, gs = stores(cora)
    seeds = graphtier.Dataset(cora).split("train")
    fanouts = [5, 3]
    theirs = NodeLoader((fs, gs), node_sampler=GraphtierSampler(ds, fanouts, seed=7, ids_numbering="prepared"),
                        input_nodes=seeds, batch_size=32)
    ours = NeighborLoader(ds, fanouts, input_nodes=seeds, batch_size=32, seed=7, ids_numbering="prepared")
    pairs = list(zip(theirs, ours))
    assert len(pairs) == 5
    for b, (batch, expected) in enumerate(pairs):
        check_node_batch(batch, indptr, indices, fanouts, seeds[32 * b: 32 * (b + 1)])
        assert torch.equal(batch.x, x[batch.n_id]) and torch.equal(batch.y, y[batch.n_id])
        for key in ("n_id", "edge_index", "e_id", "x", "y", "input_id"):
            assert torch.equal(batch[key], expected[key]), (b, key)
        assert batch.num_sampled_nodes == expected.num_sampled_nodes
        assert batch.batch_size == expected.batch_size


@needs_pyg
def test_pyg_node_loader_over_graphtier_typed(typed):
    from torch_geometric.loader import NodeLoader
    from graphtier.pyg import NeighborLoader
    from graphtier.pyg_store import GraphtierSampler
    ds, fs, gs = stores(typed)
    tables = {t: ds.type_features(t) for t in ds.node_types}
    seeds = torch.arange(0, 984, 7)
    fanouts = {("paper", "cites", "paper"): [3, 2], ("author", "rev_written_by", "paper"): [2, 2],
               ("paper", "written_by", "author"): [0, 2]}
    theirs = NodeLoader((fs, gs), node_sampler=GraphtierSampler(ds, fanouts, seed=3), input_nodes=("paper", seeds),
                        batch_size=40)
    ours = NeighborLoader(ds, fanouts, input_nodes=("paper", seeds), batch_size=40, seed=3)
    batches = 0
    for batch, expected in zip(theirs, ours):
        assert torch.equal(batch["paper"].n_id[:batch["paper"].batch_size], seeds[40 * batches: 40 * (batches + 1)])
        for t in ds.node_types:
            assert torch.equal(batch[t].n_id, expected[t].n_id), t
            assert torch.equal(batch[t].x, tables[t][batch[t].n_id]), t
            assert batch[t].num_sampled_nodes == expected.num_sampled_nodes[t], t
        for edge_type in batch.edge_types:
            assert torch.equal(batch[edge_type].edge_index, expected[edge_type].edge_index), edge_type
        assert batch[("paper", "cites", "paper")].edge_index.size(1) > 0
        assert batch[("paper", "topic", "fos")].edge_index.size(1) == 0  # not in num_neighbors
        assert torch.equal(batch["paper"].y, expected["paper"].y)
        batches += 1
    assert batches == 4


@needs_pyg
def test_dataloader_workers_draw_apart(cora_raw):
    """In PyG's DataLoader workers each worker's sampler counts its own batches: the sampler takes
    the worker's seed, so two workers' first batches of the same seeds are drawn apart, and their
    features still come through the store."""
    from torch_geometric.loader import NodeLoader
    from graphtier.pyg_store import GraphtierSampler
    indptr, indices = read_csc(cora_raw)
    x = read_table(cora_raw, "features.bin", 1433)
    ds, fs, gs = stores(cora_raw)
    seeds = torch.arange(0, 2708, 9)
    loader = NodeLoader((fs, gs), node_sampler=GraphtierSampler(ds, [3, 3], seed=0),
                        input_nodes=torch.cat([seeds, seeds]), batch_size=seeds.numel(), num_workers=2)
    first, second = list(loader)
    for batch in (first, second):
        check_node_batch(batch, indptr, indices, [3, 3], seeds)
        assert torch.equal(batch.x, x[batch.n_id])
    assert not torch.equal(first.e_id, second.e_id)


@needs_pyg
def test_a_typed_dataset_without_features_holds_its_labels_only(acm):
    """ACM has no feature tables: the store holds paper labels, and PyG's loader still gives every
    type its nodes (num_nodes from n_id)."""
    from torch_geometric.loader import NodeLoader
    from graphtier.pyg_store import GraphtierSampler
    ds, fs, gs = stores(acm)
    assert [(a.group_name, a.attr_name) for a in fs.get_all_tensor_attrs()] == [("p", "y")]
    begin, end = ds.node_type_ranges["p"]
    assert torch.equal(fs.get_tensor("p", "y", None), read_labels(acm)[begin:end])
    with pytest.raises(KeyError, match=r"\('p', 'x'\).*it holds \('p', 'y'\)"):
        fs.get_tensor("p", "x", torch.arange(2))
    loader = NodeLoader((fs, gs), node_sampler=GraphtierSampler(ds, [3, 2], seed=0),
                        input_nodes=("p", torch.arange(20)), batch_size=10)
    batch = next(iter(loader))
    assert torch.equal(batch["p"].n_id[:10], torch.arange(10))
    assert torch.equal(batch["p"].y, read_labels(acm)[batch["p"].n_id + begin])
    for t in ds.node_types:
        assert batch[t].num_nodes == batch[t].n_id.numel()


@needs_pyg
def test_sampler_refuses_seeds_outside_their_type(cora, typed):
    from torch_geometric.loader import NodeLoader
    from graphtier.pyg_store import GraphtierSampler
    ds, fs, gs = stores(typed)
    loader = NodeLoader((fs, gs), node_sampler=GraphtierSampler(ds, [2]), input_nodes=("paper", torch.tensor([5, 984])),
                        batch_size=2)
    with pytest.raises(IndexError, match=r"input_nodes\['paper'\]: node id 984 is outside type 'paper''s ids \[0, 984\)"):
        next(iter(loader))
    loader = NodeLoader((fs, gs), node_sampler=GraphtierSampler(ds, [2]), input_nodes=("venue", torch.tensor([0])))
    with pytest.raises(ValueError, match="got node type 'venue'"):
        next(iter(loader))
    with pytest.raises(ValueError, match=r"\('p', 'x', 'q'\) is not an edge type"):
        GraphtierSampler(ds, {("p", "x", "q"): [1]})
    ds, fs, gs = stores(cora)
    loader = NodeLoader((fs, gs), node_sampler=GraphtierSampler(ds, [2], ids_numbering="prepared"),
                        input_nodes=torch.tensor([2708]))
    with pytest.raises(IndexError, match=r"input_nodes: node id 2708 is outside the graph's ids"):
        next(iter(loader))
    with pytest.raises(ValueError, match="needs a typed dataset"):
        GraphtierSampler(ds, {("a", "b", "c"): [1]}, ids_numbering="prepared")


@needs_pyg
@pytest.mark.parametrize("mode", ["binary", "triplet"])
def test_pyg_link_loader_over_graphtier_yields_graphtier_pygs_batches(cora_raw, mode):
    from torch_geometric.loader import LinkLoader
    from graphtier.pyg import LinkNeighborLoader
    from graphtier.pyg_store import GraphtierSampler
    indptr, indices = read_csc(cora_raw)
    x = read_table(cora_raw, "features.bin", 1433)
    ds, fs, gs = stores(cora_raw)
    g = torch.Generator().manual_seed(5)
    pick = torch.randint(0, indices.numel(), (100,), generator=g)
    dst = torch.repeat_interleave(torch.arange(2708), indptr[1:] - indptr[:-1])
    edges = torch.stack([indices[pick], dst[pick]])
    theirs = LinkLoader((fs, gs), link_sampler=GraphtierSampler(ds, [4, 2], seed=11), edge_label_index=(None, edges),
                        neg_sampling=mode, batch_size=25)
    ours = LinkNeighborLoader(ds, [4, 2], edge_label_index=edges, neg_sampling=mode, batch_size=25, seed=11)
    batches = 0
    for batch, expected in zip(theirs, ours):
        chosen = edges[:, 25 * batches: 25 * (batches + 1)]
        assert torch.equal(batch.x, x[batch.n_id])
        src, dst_ = batch.n_id[batch.edge_index[0]], batch.n_id[batch.edge_index[1]]
        assert torch.equal(indices[batch.e_id], src)
        assert bool(((batch.e_id >= indptr[dst_]) & (batch.e_id < indptr[dst_ + 1])).all())
        if mode == "binary":
            assert torch.equal(batch.n_id[batch.edge_label_index[:, :25]], chosen)
            assert torch.equal(batch.edge_label, torch.cat([torch.ones(25), torch.zeros(25)]))
            keys = ("edge_label_index", "edge_label")
        else:
            assert torch.equal(batch.n_id[batch.src_index], chosen[0])
            assert torch.equal(batch.n_id[batch.dst_pos_index], chosen[1])
            keys = ("src_index", "dst_pos_index", "dst_neg_index")
        for key in ("n_id", "edge_index", "e_id", "x", "input_id") + keys:
            assert torch.equal(batch[key], expected[key]), (batches, key)
        batches += 1
    assert batches == 4


@needs_pyg
def test_a_renumbered_dataset_takes_ids_only_in_a_named_numbering(cora):
    """On a dataset `graphtier prepare` renumbered, PyG's ids of the converted graph (a train_mask)
    would seed other nodes: the sampler asks which numbering they are in, and maps original ones."""
    from torch_geometric.loader import NodeLoader
    from graphtier.pyg_store import GraphtierSampler
    ds, fs, gs = stores(cora)
    with pytest.raises(ValueError, match="renumbered by `graphtier prepare`.*'original'.*'prepared'"):
        GraphtierSampler(ds, [2])
    with pytest.raises(ValueError, match="unknown node numbering 'raw' \\(expected prepared or original\\)"):
        GraphtierSampler(ds, [2], ids_numbering="raw")
    train = ds.split("train")
    original_mask = torch.zeros(ds.num_nodes, dtype=torch.bool)
    original_mask[ds.to_original(train)] = True  # PyG's train_mask of the converted graph
    expected = ds.from_original(original_mask.nonzero().view(-1))
    assert torch.equal(torch.sort(expected).values, torch.sort(train).values)
    seen = {}
    for numbering in ("original", "prepared"):
        loader = NodeLoader((fs, gs), node_sampler=GraphtierSampler(ds, [2], seed=0, ids_numbering=numbering),
                            input_nodes=original_mask, batch_size=len(train))
        (batch,) = list(loader)
        seen[numbering] = batch.n_id[:batch.batch_size]
    assert torch.equal(seen["original"], expected)
    assert not torch.equal(seen["prepared"], expected)  # the same mask read as the dataset's own ids


@needs_pyg
def test_link_sampling_on_a_typed_dataset_says_it_is_homogeneous_only(typed):
    from torch_geometric.loader import LinkLoader
    from graphtier.pyg_store import GraphtierSampler
    ds, fs, gs = stores(typed)
    edges = torch.tensor([[0, 1], [2, 3]])
    loader = LinkLoader((fs, gs), link_sampler=GraphtierSampler(ds, [2]),
                        edge_label_index=(("paper", "cites", "paper"), edges), batch_size=2)
    with pytest.raises(NotImplementedError, match="homogeneous"):
        next(iter(loader))


@needs_pyg
def test_pygs_own_neighbor_sampler_reads_the_graph_store(cora, typed):
    """PyG's NeighborSampler builds its CSC from the graph store with PyG's own code (no pyg-lib
    needed for that): it sees the dataset's topology."""
    import warnings
    from torch_geometric.loader import NeighborLoader
    indptr, indices = read_csc(cora)
    ds, fs, gs = stores(cora)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyG warns that neither pyg-lib nor torch-sparse is installed
        loader = NeighborLoader((fs, gs), num_neighbors=[3, 2], input_nodes=torch.arange(64), batch_size=16)
    assert torch.equal(loader.node_sampler.colptr, indptr) and torch.equal(loader.node_sampler.row, indices)
    ds, fs, gs = stores(typed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        loader = NeighborLoader((fs, gs), num_neighbors=[3, 2], input_nodes=("paper", torch.arange(64)), batch_size=16)
    assert len(loader.node_sampler.colptr_dict) == len(ds.relations)


@needs_pyg
@needs_pyg_sampler
def test_pygs_neighbor_loader_samples_over_graphtiers_stores(cora):
    from torch_geometric.loader import NeighborLoader
    indptr, indices = read_csc(cora)
    x = read_table(cora, "features.bin", 1433)
    ds, fs, gs = stores(cora)
    seeds = torch.arange(0, 2708, 50)
    loader = NeighborLoader((fs, gs), num_neighbors=[4, 2], input_nodes=seeds, batch_size=16)
    for b, batch in enumerate(loader):
        assert torch.equal(batch.n_id[:batch.batch_size], seeds[16 * b: 16 * (b + 1)])
        assert torch.equal(batch.x, x[batch.n_id])
        src, dst = batch.n_id[batch.edge_index[0]], batch.n_id[batch.edge_index[1]]
        for s, d in zip(src.tolist(), dst.tolist()):
            assert s in set(indices[indptr[d]: indptr[d + 1]].tolist())
