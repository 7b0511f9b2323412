"""graphtier.pyg.NeighborLoader against real PyTorch Geometric: its batches keep PyG's layout and
invariants, PyG's own sampler draws the same subgraph where the draw is deterministic (all
neighbours), and PyG's GraphSAGE example trains on it. Skipped, with the reason shown, where
torch_geometric is not installed (Debian's torch 1.13); scripts/setup-torch2.sh makes an
environment with it."""

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

import graphtier
from conftest import assert_import_needs, has_module, read_csc

ROOT = Path(__file__).resolve().parents[2]
needs_pyg = pytest.mark.skipif(not has_module("torch_geometric"),
                               reason="torch_geometric is not installed (scripts/setup-torch2.sh makes a torch 2.x "
                                      "environment with it)")


def test_import_without_torch_geometric_says_how_to_get_it(monkeypatch):
    assert_import_needs(monkeypatch, "graphtier.pyg", "torch_geometric", r"pip install torch_geometric")


def check_pyg_invariants(batch, fanouts, indptr, indices, seeds=None):
    """What PyG's NeighborLoader promises of a batch (and what trim_to_layer relies on)."""
    n = batch.num_nodes
    hops = len(fanouts)
    assert batch.n_id.numel() == n and torch.unique(batch.n_id).numel() == n
    if seeds is not None:
        assert torch.equal(batch.n_id[: batch.batch_size], seeds)
    assert len(batch.num_sampled_nodes) == hops + 1 and len(batch.num_sampled_edges) == hops
    assert int(batch.num_sampled_nodes[0]) == batch.batch_size
    assert sum(int(c) for c in batch.num_sampled_nodes) == n
    assert sum(int(c) for c in batch.num_sampled_edges) == batch.edge_index.size(1)
    src, dst = batch.edge_index
    assert int(src.min()) >= 0 and int(src.max()) < n and int(dst.min()) >= 0 and int(dst.max()) < n
    node_hop = torch.repeat_interleave(torch.arange(hops + 1), torch.tensor([int(c) for c in batch.num_sampled_nodes]))
    edge_hop = torch.repeat_interleave(torch.arange(hops), torch.tensor([int(c) for c in batch.num_sampled_edges]))
    # Hop k's edges end at the nodes first reached in hop k and start at nodes reached by hop k + 1.
    assert torch.equal(node_hop[dst], edge_hop)
    assert bool((node_hop[src] <= edge_hop + 1).all())
    # Every edge is the graph's: n_id[src] is an in-neighbour of n_id[dst], at e_id where given.
    gsrc, gdst = batch.n_id[src], batch.n_id[dst]
    for s, d in zip(gsrc.tolist(), gdst.tolist()):
        assert s in set(indices[indptr[d]: indptr[d + 1]].tolist())
    if "e_id" in batch:
        assert torch.equal(indices[batch.e_id], gsrc)
        assert bool(((batch.e_id >= indptr[gdst]) & (batch.e_id < indptr[gdst + 1])).all())
    # In-degree: at most the hop's fanout, each neighbour once (no replacement), all of them for -1.
    indeg = torch.bincount(dst, minlength=n)
    degree = indptr[batch.n_id + 1] - indptr[batch.n_id]
    for k, f in enumerate(fanouts):
        at_hop = node_hop == k
        expected = degree[at_hop] if f < 0 else torch.clamp(degree[at_hop], max=f)
        assert torch.equal(indeg[at_hop], expected)
    assert torch.unique(gsrc * (int(indptr.numel()) + 1) + gdst).numel() == gsrc.numel()


@needs_pyg
def test_batches_keep_pyg_layout_and_invariants(cora):
    import graphtier
    from torch_geometric.data import Data
    from torch_geometric.utils import trim_to_layer

    from graphtier.pyg import NeighborLoader
    from graphtier.training import load_feature_table

    ds = graphtier.Dataset(cora)
    indptr, indices = read_csc(cora)
    table = load_feature_table(ds)
    labels = ds.labels().to(torch.int64)
    train = ds.split("train").to(torch.int64)
    fanouts = [5, 3]
    loader = NeighborLoader(cora, num_neighbors=fanouts, input_nodes="train", batch_size=32, shuffle=True, seed=4)
    seen = []
    for batch in loader:
        assert isinstance(batch, Data)
        check_pyg_invariants(batch, fanouts, indptr, indices, seeds=train[batch.input_id])
        assert torch.equal(batch.x, table[batch.n_id])
        assert torch.equal(batch.y, labels[batch.n_id])
        # trim_to_layer after the first layer drops the last hop's nodes and edges, and what stays
        # is closed: no edge names a trimmed node.
        x, edge_index, _ = trim_to_layer(1, batch.num_sampled_nodes, batch.num_sampled_edges, batch.x,
                                         batch.edge_index)
        assert x.size(0) == batch.num_nodes - batch.num_sampled_nodes[-1]
        assert int(edge_index.max()) < x.size(0)
        seen.append(batch.input_id)
    assert torch.equal(torch.sort(torch.cat(seen)).values, torch.arange(train.numel()))  # one epoch, each seed once

    # A bool mask and ids select the same seeds as the split name; id order is kept without shuffling.
    mask = torch.zeros(ds.num_nodes, dtype=torch.bool)
    mask[train] = True
    first = next(iter(NeighborLoader(ds, [2], input_nodes=mask, batch_size=8, ids_numbering="prepared")))
    assert torch.equal(first.n_id[:8], torch.sort(train).values[:8])
    ids = train.flip(0)
    first = next(iter(NeighborLoader(ds, [2], input_nodes=ids, batch_size=8, ids_numbering="prepared",
                                     transform=lambda d: d.update({"tag": 1}))))
    assert torch.equal(first.n_id[:8], ids[:8]) and torch.equal(first.input_id, torch.arange(8)) and first.tag == 1
    assert len(NeighborLoader(ds, [2], input_nodes="val", batch_size=64, drop_last=True)) == 500 // 64


@needs_pyg
def test_torch_manual_seed_decides_the_streams_without_seed(cora):
    """Without seed= the loader's seed is torch's (torch.initial_seed()): one torch.manual_seed
    gives one epoch, another a different one, and an explicit seed= is kept whatever torch's state."""
    from graphtier.pyg import NeighborLoader

    def epoch(**kwargs):
        loader = NeighborLoader(cora, num_neighbors=[4, 2], input_nodes="train", batch_size=40, shuffle=True, **kwargs)
        return [(b.n_id.clone(), b.edge_index.clone()) for b in loader]

    def same(a, b):
        return len(a) == len(b) and all(torch.equal(x[0], y[0]) and torch.equal(x[1], y[1]) for x, y in zip(a, b))

    torch.manual_seed(1)
    first = epoch()
    torch.manual_seed(1)
    assert same(epoch(), first)
    torch.manual_seed(2)
    assert not same(epoch(), first)
    torch.manual_seed(1)
    seeded = epoch(seed=7)
    torch.manual_seed(2)
    assert same(epoch(seed=7), seeded)
    assert not same(seeded, first)


@needs_pyg
def test_all_neighbours_give_pyg_samplers_subgraph(cora):
    """With every neighbour taken the draw is deterministic: PyG's own NeighborLoader on the same
    graph returns the same nodes per hop and the same edges per hop."""
    from torch_geometric.data import Data
    from torch_geometric.loader import NeighborLoader as PygNeighborLoader

    import graphtier
    from graphtier.pyg import NeighborLoader

    ds = graphtier.Dataset(cora)
    indptr, indices = read_csc(cora)
    dst = torch.repeat_interleave(torch.arange(ds.num_nodes), indptr[1:] - indptr[:-1])
    graph = Data(edge_index=torch.stack([indices, dst]), num_nodes=ds.num_nodes)
    seeds = ds.split("test").to(torch.int64)[:48]
    fanouts = [-1, -1]
    try:
        pyg = list(PygNeighborLoader(graph, num_neighbors=fanouts, input_nodes=seeds, batch_size=16))
    except ImportError as e:  # PyG's sampler needs pyg-lib or torch-sparse, which PyPI has no wheels of
        pytest.skip(f"PyG's NeighborLoader cannot sample here: {e}")
    ours = list(NeighborLoader(ds, fanouts, input_nodes=seeds, batch_size=16, ids_numbering="prepared"))
    # PyG sorts each node's neighbours by id when it makes its CSC (to_csc); graphtier keeps the
    # dataset's order (prepare's renumbering leaves lists unsorted), so a hop's new nodes may come in
    # another order: the same nodes per hop, the same edges.
    _same_subgraphs(ours, pyg, fanouts, indptr, indices, seeds, same_order=False)


def _reference_all_neighbours(indptr, indices, seeds, hops):
    """PyG's documented sampling with every neighbour taken: hop k expands only the nodes first
    reached in hop k - 1, a neighbour already reached keeps its position (as pyg-lib does)."""
    from torch_geometric.data import Data

    nodes = seeds.tolist()
    position = {v: i for i, v in enumerate(nodes)}
    frontier, rows, cols, per_hop_nodes, per_hop_edges = list(nodes), [], [], [len(nodes)], []
    for _ in range(hops):
        new, edges = [], 0
        for t in frontier:
            for s in indices[indptr[t]: indptr[t + 1]].tolist():
                if s not in position:
                    position[s] = len(nodes)
                    nodes.append(s)
                    new.append(s)
                rows.append(position[s])
                cols.append(position[t])
                edges += 1
        per_hop_nodes.append(len(new))
        per_hop_edges.append(edges)
        frontier = new
    data = Data(n_id=torch.tensor(nodes), edge_index=torch.tensor([rows, cols]), num_nodes=len(nodes))
    data.batch_size, data.input_id = seeds.numel(), None
    data.num_sampled_nodes, data.num_sampled_edges = per_hop_nodes, per_hop_edges
    return data


@needs_pyg
def test_all_neighbours_give_the_reference_subgraph(cora):
    """The same comparison against PyG's sampling written out (runs where PyG's sampler cannot)."""
    import graphtier
    from graphtier.pyg import NeighborLoader

    ds = graphtier.Dataset(cora)
    indptr, indices = read_csc(cora)
    seeds = ds.split("test").to(torch.int64)[:48]
    fanouts = [-1, -1]
    ours = list(NeighborLoader(ds, fanouts, input_nodes=seeds, batch_size=16, ids_numbering="prepared"))
    reference = [_reference_all_neighbours(indptr, indices, seeds[i:i + 16], 2) for i in range(0, 48, 16)]
    for r, start in zip(reference, range(0, 48, 16)):
        r.input_id = torch.arange(start, start + 16)
    _same_subgraphs(ours, reference, fanouts, indptr, indices, seeds)


def _same_subgraphs(ours, theirs, fanouts, indptr, indices, seeds, same_order=True):
    assert len(ours) == len(theirs) == 3
    for a, b in zip(ours, theirs):
        check_pyg_invariants(b, fanouts, indptr, indices, seeds=seeds[b.input_id])  # the checker holds for PyG
        check_pyg_invariants(a, fanouts, indptr, indices, seeds=seeds[a.input_id])
        assert a.batch_size == b.batch_size and torch.equal(a.input_id, b.input_id)
        assert [int(c) for c in a.num_sampled_nodes] == [int(c) for c in b.num_sampled_nodes]
        assert [int(c) for c in a.num_sampled_edges] == [int(c) for c in b.num_sampled_edges]
        start = 0
        for count in a.num_sampled_nodes:
            assert set(a.n_id[start:start + count].tolist()) == set(b.n_id[start:start + count].tolist())
            start += count
        hop1 = a.num_sampled_nodes[0] + a.num_sampled_nodes[1]  # first appearance in the seeds' lists
        assert torch.equal(a.n_id[:hop1 if same_order else a.batch_size], b.n_id[:hop1 if same_order else b.batch_size])
        ea = set(zip(a.n_id[a.edge_index[0]].tolist(), a.n_id[a.edge_index[1]].tolist()))
        eb = set(zip(b.n_id[b.edge_index[0]].tolist(), b.n_id[b.edge_index[1]].tolist()))
        assert ea == eb


@needs_pyg
@pytest.mark.parametrize("trim", [False, True], ids=["plain", "trim_to_layer"])
def test_pyg_graphsage_example_reaches_pygs_accuracy(cora, trim):
    """examples/pyg_sage_cora.py: PyG's GraphSAGE with only its loader import and dataset lines
    changed; PyG's GraphSAGE reaches about 0.79-0.80 on Cora's public split."""
    command = [sys.executable, str(ROOT / "examples" / "pyg_sage_cora.py"), cora, "--epochs", "20"]
    if trim:
        command.append("--trim")
    run = subprocess.run(command, capture_output=True, text=True, timeout=300,  # a hang, not a slow shared machine
                         env={**os.environ, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "2")})
    assert run.returncode == 0, run.stderr[-2000:]
    accuracy = float(re.search(r"test accuracy (\S+)", run.stdout).group(1))
    assert accuracy >= 0.78, run.stdout[-1500:]


@needs_pyg
def test_pyg_hgt_example_learns_acm(acm):
    """examples/pyg_hgt_acm.py: PyG's HGTConv example (hgt_dblp.py) with its dataset lines changed, on
    ACM through one graphtier.pyg batch. Measured (torch 2.x venv, PyG 2.8.1, seed 0): test accuracy
    0.698 after 10 epochs, PyG's own full-batch HGT on the whole HeteroData 0.697 (0.715 and 0.712
    after 15); three classes, so 0.6 is far above chance and leaves room for another PyTorch."""
    command = [sys.executable, str(ROOT / "examples" / "pyg_hgt_acm.py"), acm, "--epochs", "10"]
    run = subprocess.run(command, capture_output=True, text=True, timeout=300,  # a hang, not a slow shared machine
                         env={**os.environ, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "2")})
    assert run.returncode == 0, run.stderr[-2000:]
    last = run.stdout.strip().splitlines()[-1]
    assert last.startswith("Epoch: 010"), run.stdout[-1500:]
    assert float(re.search(r"Test: (\S+)", last).group(1)) >= 0.6, run.stdout[-1500:]


@needs_pyg
def test_hetero_batches_keep_pygs_layout(acm):
    """A typed dataset with PyG's hetero arguments (num_neighbors by edge type, input_nodes=(type,
    ids)) yields HeteroData: every type and edge type present, n_id within the type, the seeds first,
    each edge a real edge of its relation reached in its hop, at most the hop's fanout per dst node
    and edge type, and the per-type / per-edge-type counts that trim_to_layer reads."""
    from torch_geometric.data import HeteroData
    from graphtier.pyg import NeighborLoader

    ds = graphtier.Dataset(acm)
    indptr, indices = read_csc(acm)
    types = torch.from_numpy(np.fromfile(Path(acm, "type_per_edge.bin"), dtype=np.uint8)).to(torch.int64)
    ranges = ds.node_type_ranges
    relation = {name: r for r, name in enumerate(ds.relations)}
    fanouts = {("a", "to", "p"): [4, 2], ("s", "to", "p"): [1, 1], ("p", "to", "a"): [3, 2], ("p", "to", "s"): [2, 0]}
    test_ids = ds.split("test")["p"][:100]  # ids within the type, as PyG numbers them
    loader = NeighborLoader(ds, num_neighbors=fanouts, input_nodes=("p", test_ids), batch_size=40, seed=2)
    seen = []
    for batch in loader:
        assert isinstance(batch, HeteroData)
        assert set(batch.node_types) == {"p", "a", "s"} and len(batch.edge_types) == 4
        n = batch["p"].batch_size
        assert torch.equal(batch["p"].n_id[:n], test_ids[batch["p"].input_id])
        seen.append(batch["p"].input_id)
        for t in batch.node_types:
            begin, end = ranges[t]
            assert int(batch[t].n_id.numel()) == sum(batch.num_sampled_nodes[t])
            assert bool((batch[t].n_id >= 0).all()) and bool((batch[t].n_id < end - begin).all())
            assert batch[t].n_id.unique().numel() == batch[t].n_id.numel()
        labels = ds.labels().to(torch.int64)
        assert torch.equal(batch["p"].y, labels[batch["p"].n_id + ranges["p"][0]])
        for edge_type in batch.edge_types:
            s, _, d = edge_type
            ei = batch[edge_type].edge_index
            assert ei.size(1) == sum(batch.num_sampled_edges[edge_type])
            gsrc = batch[s].n_id[ei[0]] + ranges[s][0]
            gdst = batch[d].n_id[ei[1]] + ranges[d][0]
            r = relation[":".join(edge_type)]
            for u, v in zip(gsrc.tolist(), gdst.tolist()):
                column = range(int(indptr[v]), int(indptr[v + 1]))
                assert any(int(indices[e]) == u and int(types[e]) == r for e in column), (edge_type, u, v)
            start = 0
            hop_of = torch.repeat_interleave(torch.arange(len(batch.num_sampled_nodes[d])),
                                             torch.tensor(batch.num_sampled_nodes[d]))
            for k, count in enumerate(batch.num_sampled_edges[edge_type]):
                dst = ei[1, start:start + count]
                assert bool((hop_of[dst] == k).all())  # hop k samples for the nodes first reached in hop k
                if count:
                    assert int(torch.bincount(dst).max()) <= fanouts[edge_type][k]
                start += count
    assert torch.equal(torch.sort(torch.cat(seen)).values, torch.arange(100))


@needs_pyg
def test_to_hetero_graphsage_trains_on_hetero_batches(acm):
    """PyG's to_hetero(GraphSAGE) over learned per-type embeddings (ACM has no features) runs on the
    batches as on PyG's own and learns: the training loss falls."""
    from torch_geometric.nn import SAGEConv, to_hetero
    from graphtier.pyg import NeighborLoader

    torch.manual_seed(0)
    ds = graphtier.Dataset(acm)
    loader = NeighborLoader(ds, num_neighbors=[10, 5], input_nodes="train", batch_size=128, shuffle=True)
    metadata = (ds.node_types, [tuple(r.split(":")) for r in ds.relations])

    class GNN(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = SAGEConv((-1, -1), 32)
            self.conv2 = SAGEConv((-1, -1), ds.num_classes)

        def forward(self, x, edge_index):
            return self.conv2(self.conv1(x, edge_index).relu(), edge_index)

    sizes = {t: e - b for t, (b, e) in ds.node_type_ranges.items()}
    embeddings = torch.nn.ModuleDict({t: torch.nn.Embedding(n, 16) for t, n in sizes.items()})
    model = to_hetero(GNN(), metadata, aggr="sum")
    first = next(iter(loader))
    model({t: embeddings[t](first[t].n_id) for t in first.node_types}, first.edge_index_dict)  # lazy shapes
    optimizer = torch.optim.Adam(list(model.parameters()) + list(embeddings.parameters()), lr=0.01)
    losses = []
    for _ in range(6):
        total = 0.0
        for batch in loader:
            out = model({t: embeddings[t](batch[t].n_id) for t in batch.node_types}, batch.edge_index_dict)["p"]
            n = batch["p"].batch_size
            loss = torch.nn.functional.cross_entropy(out[:n], batch["p"].y[:n])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += float(loss.detach())
        losses.append(total / len(loader))
    assert losses[-1] < 0.6 * losses[0], losses
