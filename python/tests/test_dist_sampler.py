"""graphtier.distributed.DistSampler: every rank's minibatch b of an epoch equals the single-process
loader's minibatch b, field by field, for P in {1, 2, 4} Gloo processes, replication c in {1, 2},
the graph replicated or partitioned into block rows, GraphSAGE and LADIES: the one-at-a-time samplers
(bulk 0, 1 or 3 minibatches per exchange; GraphSAGE's layers drawn by the owners of the rows, on
fetched rows, or as the cost model picks; the messages packed or plain) against the loader with
bulk 0, and the bulk matrix samplers (bulk 3) against the loader with bulk 3."""

import pytest
import torch

from graphtier import LayerLoader, NeighborLoader, _core
from graphtier.distributed import CommStats, DistSampler, Partition, ProcessGrid, grid_groups
from graphtier.distributed.grid import GridGroups

from conftest import run_cli
from dist_util import spawn

BATCH = 10  # Cora's 140 training nodes: 14 minibatches, 7 steps on 2 ranks, 4 on 4 (the last uneven)
SEED = 5
EPOCH = 1
# (method, fanouts, replace): -1 (all neighbours) and with replacement included.
SAMPLERS = [("neighbor", [4, -1], False), ("neighbor", [3, 2], True), ("ladies", [24, 12], False)]
MODES = ("replicated", "partitioned")
# (bulk, group, owner_draws, row_cache, packed): the DistSampler variants, each compared with the
# loader of the same bulk. None: the cost model's pick per layer (GraphSAGE [4, -1]: the owners draw
# layer 0, rows are fetched for layer 1); False: rows fetched everywhere; True: the owners draw every
# GraphSAGE layer (bulk 3: the bulk matrix sampler's draws, made by the owners). row_cache: the
# default (all of Cora's rows fit), none, and 3 KiB (a few dozen rows: the cache drops rows and
# refuses the ids above them). packed: False (plain: int32 ids, the default), True (varints).
VARIANTS = [(0, 1, None, 64 << 20, False), (0, 3, None, 64 << 20, False), (3, 1, None, 64 << 20, False),
            (0, 1, False, 64 << 20, False), (0, 3, True, 64 << 20, False), (0, 1, False, 0, False),
            (0, 1, False, 3072, False), (3, 1, None, 3072, False), (3, 1, True, 64 << 20, False),
            (3, 1, False, 3072, False), (0, 3, None, 64 << 20, True), (3, 1, None, 3072, True)]


def _variants(method):
    return [v for v in VARIANTS if method == "neighbor" or not v[2]]  # LADIES needs whole rows


@pytest.fixture(scope="module")
def partitions(cora, tmp_path_factory):
    root = tmp_path_factory.mktemp("partitions")
    out = {}
    for world in (1, 2, 4):
        for c in (1, 2):
            if world % c:
                continue
            for mode in MODES:
                path = root / f"p{world}-c{c}-{mode}"
                run_cli("partition", "-d", cora, "-o", str(path), "--ranks", str(world), "--replication", str(c),
                        "--graph", mode)
                out[(world, c, mode)] = str(path)
    return out


def _plain(batch):
    blocks = [(b.num_dst, b.src_nodes.tolist(), b.indptr.tolist(), b.indices.tolist(),
               None if b.edge_ids is None else b.edge_ids.tolist(),
               None if b.weights is None else b.weights.view(torch.int32).tolist())  # float bits
              for b in batch.blocks]
    return (batch.epoch, batch.index, batch.seeds.tolist(), batch.input_nodes.tolist(), batch.y.tolist(), blocks)


def _reference(cora, method, fanouts, replace, bulk):
    dataset = _core.Dataset(cora)
    if method == "neighbor":
        loader = NeighborLoader(dataset, fanouts, BATCH, split="train", seed=SEED, replace=replace, features=False,
                                sample_threads=1, bulk=bulk)
    else:
        loader = LayerLoader(dataset, fanouts, BATCH, split="train", seed=SEED, sample_threads=1, bulk=bulk)
    loader.set_epoch(EPOCH)
    return {b.index: _plain(b) for b in loader}


def _sample_everywhere(rank, world, configs):
    """Every (c, mode) partition of this world, every sampler, every variant: {key: [batches]}."""
    out = {}
    groups = {}
    for c, mode, path in configs:
        grid = ProcessGrid(world, c, rank)
        if c not in groups:
            groups[c] = grid_groups(grid)  # collective: the same order on every rank
        part = Partition.open(path, rank)
        for method, fanouts, replace in SAMPLERS:
            for variant in _variants(method):
                bulk, group, owner_draws, row_cache, packed = variant
                stats = CommStats()
                sampler = DistSampler(part, grid, method, fanouts, BATCH, SEED, bulk=bulk, replace=replace,
                                      group=group, groups=groups[c], stats=stats, owner_draws=owner_draws,
                                      row_cache=row_cache, packed=packed)
                assert sampler.wire.packed == packed
                loaded = list(sampler.epoch(EPOCH))
                # A rank past the epoch's last minibatch gets None, at the last step only.
                assert all(b is not None for b in loaded[:-1])
                assert all(b.x is None for b in loaded if b is not None)  # the feature fetch fills x
                assert sampler.row_cache.bytes <= row_cache
                batches = [_plain(b) for b in loaded if b is not None]
                out[(c, mode, method, replace) + variant] = (batches, len(sampler), stats.as_dict())
    return out


@pytest.mark.parametrize("world", [1, 2, 4])
def test_every_ranks_batch_equals_the_single_process_loaders(cora, partitions, world):
    configs = [(c, mode, partitions[(world, c, mode)]) for c in (1, 2) if world % c == 0 for mode in MODES]
    per_rank = spawn(_sample_everywhere, world, configs, timeout=120)
    references = {(m, r, bulk): _reference(cora, m, f, r, bulk) for m, f, r in SAMPLERS for bulk in (0, 3)}
    for (m, f, r) in SAMPLERS:
        # The bulk matrix samplers draw other blocks: comparing with the wrong loader would fail.
        assert references[(m, r, 0)] != references[(m, r, 3)]
        n = len(references[(m, r, 0)])
        steps = -(-n // world)
        for c, mode, _ in configs:
            for variant in _variants(m):
                bulk = variant[0]
                seen = set()
                for rank, results in enumerate(per_rank):
                    batches, length, stats = results[(c, mode, m, r) + variant]
                    assert length == steps
                    assert [b[1] for b in batches] == list(range(rank, n, world))
                    for b in batches:
                        assert b == references[(m, r, bulk)][b[1]], (c, mode, m, r, variant, rank, b[1])
                        seen.add(b[1])
                    # Rows cross the network only when the topology is split over several rows.
                    if mode == "replicated" or world // c == 1:
                        assert stats["bytes_received"] == 0 and stats["bytes_sent"] == 0
                    else:
                        assert stats["bytes_received"] > 0
                # No minibatch left out: the ranks' union is the single-process epoch, 14 of 14.
                assert seen == set(range(n)) and n == 14
            if mode == "partitioned" and world // c > 1:  # packed messages are the smaller
                for rank, results in enumerate(per_rank):
                    received = [results[(c, mode, m, r, 0, 3, None, 64 << 20, packed)][2]["bytes_received"]
                                for packed in (True, False)]
                    assert 0 < received[0] < received[1] / 2, (c, m, rank, received)


def _epochs_bytes(rank, world, path, row_cache):
    """Bytes this rank received in each of two passes over one epoch (LADIES, rows fetched)."""
    grid = ProcessGrid(world, 1, rank)
    stats = CommStats()
    sampler = DistSampler(Partition.open(path, rank), grid, "ladies", [24, 12], BATCH, SEED, stats=stats,
                          row_cache=row_cache)
    received = []
    for _ in range(2):
        before = stats.as_dict()["bytes_received"]
        list(sampler.epoch(EPOCH))
        received.append(stats.as_dict()["bytes_received"] - before)
    return received, sampler.row_cache.hits, sampler.row_cache.bytes


def test_rows_kept_across_calls_are_not_fetched_again(partitions):
    path = partitions[(2, 1, "partitioned")]
    kept = spawn(_epochs_bytes, 2, path, 64 << 20, timeout=60)
    none = spawn(_epochs_bytes, 2, path, 0, timeout=60)
    for (with_cache, hits, size), (without, no_hits, no_size) in zip(kept, none):
        assert without[0] == without[1] and no_hits == 0 and no_size == 0  # every pass fetches the same rows
        assert with_cache[0] <= without[0]  # the first pass fetches at most what it did without the cache
        # The second pass asks for rows only (the ids out, nothing back): Cora's remote rows all fit.
        assert with_cache[1] < with_cache[0] / 4 and hits > 0 and 0 < size <= 64 << 20


def test_the_row_cache_holds_the_lowest_ids_that_fit_its_budget(cora):
    """RowCache against a naive model: after every call's rows, the cache is the longest prefix (by
    id) of every row offered so far whose bytes fit the budget, each row exact."""
    from graphtier.distributed import RowCache

    dataset = _core.Dataset(cora)
    generator = torch.Generator().manual_seed(3)
    for budget in (0, 500, 4000, 1 << 20):
        cache = RowCache(budget)
        offered = set()
        for _ in range(12):
            ids = torch.unique(torch.randint(0, dataset.num_nodes, (60,), generator=generator))
            held, rows = cache.take(ids)
            assert torch.equal(rows[0], ids[held])
            fresh = ids[~held]
            indptr, indices, first_edge = _core.extract_rows(dataset, fresh, 0)
            cache.keep((fresh, indptr, indices, first_edge))
            offered.update(fresh.tolist())
            order = sorted(offered)
            degree = [int(n) for n in _core.extract_rows(dataset, torch.tensor(order), 0)[0].diff()]
            size, fit = 0, 0
            while fit < len(order) and size + 24 + 8 * degree[fit] <= budget:
                size += 24 + 8 * degree[fit]
                fit += 1
            nodes, got_indptr, got_indices, got_first = cache.rows
            assert nodes.tolist() == order[:fit] and cache.bytes == size <= budget
            want_indptr, want_indices, want_first = _core.extract_rows(dataset, nodes, 0)
            assert torch.equal(got_indptr, want_indptr) and torch.equal(got_indices, want_indices)
            assert torch.equal(got_first, want_first)
    with pytest.raises(ValueError, match="row_cache must be >= 0 bytes"):
        DistSampler(None, None, row_cache=-1)


def test_replicated_single_rank_runs_without_a_process_group(partitions):
    part = Partition.open(partitions[(1, 1, "replicated")], 0)
    grid = ProcessGrid(1, 1, 0)
    sampler = DistSampler(part, grid, "neighbor", [2, 2], BATCH, SEED)
    first = [b.index for b in sampler]  # epoch 0, as the loaders count
    assert first == list(range(len(sampler)))
    for bulk in (0, 2):  # a call without minibatches (a rank without a batch at an evaluation's end)
        assert DistSampler(part, grid, "neighbor", [2, 2], BATCH, SEED, bulk=bulk).sample_blocks([], []) == []
    with pytest.raises(ValueError, match="unknown sampling method"):
        DistSampler(part, grid, "fastgcn", [2], BATCH)
    with pytest.raises(ValueError, match="bulk must be"):
        DistSampler(part, grid, "neighbor", [2], BATCH, bulk=-1)
    with pytest.raises(ValueError, match="group must be"):
        DistSampler(part, grid, "neighbor", [2], BATCH, group=0)
    with pytest.raises(ValueError, match="group applies to bulk 0 only"):
        DistSampler(part, grid, "neighbor", [2], BATCH, bulk=2, group=2)
    with pytest.raises(ValueError, match="bulk LADIES takes layer sizes >= 0"):
        DistSampler(part, grid, "ladies", [-1], BATCH, bulk=2)
    with pytest.raises(ValueError, match="process grid is rank 0 of 2"):
        DistSampler(part, ProcessGrid(2, 1, 0), "neighbor", [2], BATCH)
    for bulk in (0, 2):
        with pytest.raises(ValueError, match="owner_draws: the owners draw GraphSAGE's layers only"):
            DistSampler(part, grid, "ladies", [2], BATCH, bulk=bulk, owner_draws=True)


def test_the_cost_model_picks_owner_draws_for_graphsage_fanouts_and_rows_otherwise(partitions):
    part = Partition.open(partitions[(1, 1, "partitioned")], 0)
    grid = ProcessGrid(1, 1, 0)
    no_groups = GridGroups(column=None, row=None)  # deciding makes no exchange: no process group needed
    picks = lambda **kw: [DistSampler(part, grid, groups=no_groups, **kw).draws_at_owners(layer)  # noqa: E731
                          for layer in range(2)]
    assert picks(method="neighbor", fanouts=[4, -1]) == [True, False]  # -1: the whole row is the sample
    assert picks(method="neighbor", fanouts=[4, -1], owner_draws=True) == [True, True]
    assert picks(method="neighbor", fanouts=[4, 3], owner_draws=False) == [False, False]
    assert picks(method="neighbor", fanouts=[4, -1], bulk=2) == [True, False]  # bulk: the same rule
    assert picks(method="ladies", fanouts=[4, 3]) == [False, False]  # column weights need whole rows
    replicated = Partition.open(partitions[(1, 1, "replicated")], 0)
    assert not DistSampler(replicated, grid, "neighbor", [4, 3], owner_draws=True).draws_at_owners(0)


def test_layer_on_fetched_rows_rejects_a_dst_without_its_row(cora):
    dataset = _core.Dataset(cora)
    nodes = torch.tensor([3, 7, 11])
    indptr, indices, first_edge = _core.extract_rows(dataset, nodes, 0)
    with pytest.raises(ValueError, match="dst node 8 has no row"):
        _core.sample_neighbor_layer(nodes, indptr, indices, first_edge, torch.tensor([7, 8]), 2, False, 0, 0, 0)
    with pytest.raises(ValueError, match="dst node 8 has no row"):
        _core.sample_ladies_layer(nodes, indptr, indices, first_edge, torch.tensor([8]), 2, 0, 0, 0)
    with pytest.raises(IndexError, match="outside"):
        _core.extract_rows(dataset, torch.tensor([dataset.num_nodes]), 0)
    block = _core.sample_neighbor_layer(nodes, indptr, indices, first_edge, torch.tensor([7, 3]), -1, False, 0, 0, 0)
    assert set(block) == {"num_dst", "src_nodes", "indptr", "indices", "edge_ids", "weights", "edge_types", "src_trees"}
    assert block["weights"] is None and block["edge_ids"] is not None and block["edge_types"] is None
    assert block["src_trees"] is None  # temporal batches only
    with pytest.raises(ValueError, match="dst node 8 has no row"):
        _core.sample_bulk_layer(nodes, indptr, indices, first_edge, [torch.tensor([7]), torch.tensor([8])], [0, 1],
                                "neighbor", [2], False, 0, 0)
    with pytest.raises(ValueError, match="bulk with fastgcn"):  # a method without a bulk sampler
        _core.sample_bulk_layer(nodes, indptr, indices, first_edge, [torch.tensor([7])], [0], "fastgcn", [2], False,
                                0, 0)
    counts, neighbors, edge_ids = _core.draw_rows(dataset, nodes, torch.tensor([2, 1]), torch.tensor([5, -5]), 0, 2,
                                                  False, 0, 0)
    assert counts.tolist() == [min(2, int(indptr[k + 1] - indptr[k])) for k in range(3)]
    blocks = _core.neighbor_blocks_of_draws([torch.tensor([7, 3]), torch.tensor([11])], nodes, torch.tensor([0, 0, 1]),
                                            counts, neighbors, edge_ids)
    assert [b["num_dst"] for b in blocks] == [2, 1] and set(blocks[0]) == set(block)
    with pytest.raises(ValueError, match="dst node 8 of batch 0 has no draws"):
        _core.neighbor_blocks_of_draws([torch.tensor([8])], nodes, torch.tensor([0, 0, 0]), counts, neighbors,
                                       edge_ids)
    # bulk=True: the bulk matrix sampler's draws, which assemble into sample_bulk_layer's blocks.
    dsts = [torch.tensor([7, 3]), torch.tensor([11])]
    counts, neighbors, edge_ids = _core.draw_rows(dataset, nodes, torch.tensor([2, 1]), torch.tensor([5, 6]), 0, 1,
                                                  False, 0, 0, bulk=True)
    got = _core.neighbor_blocks_of_draws(dsts, nodes, torch.tensor([0, 0, 1]), counts, neighbors, edge_ids)
    want = _core.sample_bulk_layer(nodes, indptr, indices, first_edge, dsts, [5, 6], "neighbor", [1], False, 0, 0)
    for g, w in zip(got, want):
        assert g["num_dst"] == w["num_dst"]
        for key in ("src_nodes", "indptr", "indices", "edge_ids"):
            assert torch.equal(g[key], w[key]), key
    with pytest.raises(ValueError, match="the segments hold 2 requests, 3 nodes"):
        _core.draw_rows(dataset, nodes, torch.tensor([2]), torch.tensor([5]), 0, 2, False, 0, 0)
    with pytest.raises(ValueError, match="draw_bulk_rows: the segments hold 2 requests, 3 nodes"):
        _core.draw_rows(dataset, nodes, torch.tensor([2]), torch.tensor([5]), 0, 2, False, 0, 0, bulk=True)
    with pytest.raises(IndexError, match="outside"):
        _core.draw_rows(dataset, torch.tensor([dataset.num_nodes]), torch.tensor([1]), torch.tensor([5]), 0, 2,
                        False, 0, 0)
    blocks = _core.sample_bulk_layer(nodes, indptr, indices, first_edge, [torch.tensor([7, 3]), torch.tensor([11])],
                                     [0, 1], "ladies", [2], False, 0, 0)
    assert len(blocks) == 2 and set(blocks[0]) == set(block)
    assert blocks[0]["weights"] is not None and blocks[1]["num_dst"] == 1


def test_requests_rows_and_draws_cross_packed_and_unpack_to_what_was_sent(cora):
    dataset = _core.Dataset(cora)
    nodes = torch.arange(0, dataset.num_nodes, 7)
    ids = _core.unpack_ids(_core.pack_ids(nodes))
    assert torch.equal(ids, nodes)
    rows = _core.extract_rows(dataset, nodes, 0)
    message = _core.pack_rows(*rows)
    assert message.dtype == torch.uint8
    # Cora's ids, degrees and first-edge steps in at most 2 bytes each, not 8.
    assert message.numel() <= 2 * rows[1].numel() + 4 * nodes.numel()
    for got, want in zip(_core.unpack_rows(message, nodes), rows):
        assert torch.equal(got, want)
    draws = _core.draw_rows(dataset, nodes, torch.tensor([nodes.numel()]), torch.tensor([5]), 0, 3, False, 0, 0)
    for got, want in zip(_core.unpack_draws(_core.pack_draws(*draws), nodes.numel()), draws):
        assert torch.equal(got, want)
    with pytest.raises(ValueError, match="packed rows: the message ends inside a value"):
        _core.unpack_rows(message[:-1].clone(), nodes)
    with pytest.raises(ValueError, match="packed draws: the message goes on past its last record"):
        _core.unpack_draws(torch.cat([_core.pack_draws(*draws), torch.zeros(1, dtype=torch.uint8)]), nodes.numel())
    with pytest.raises(ValueError, match="packing ids: entry 1 is -4"):
        _core.pack_ids(torch.tensor([3, -4]))


@pytest.mark.parametrize("packed,num_nodes", [(True, 2708), (False, 2708), (False, (1 << 31) + 1)])
def test_every_wire_gives_back_what_was_sent_and_refuses_a_message_of_the_wrong_size(cora, packed, num_nodes):
    from graphtier.distributed.wire import Wire

    wire = Wire(packed, num_nodes)
    assert wire.id_dtype == (torch.int64 if num_nodes > 1 << 31 else torch.int32)
    dataset = _core.Dataset(cora)
    nodes = torch.arange(3, dataset.num_nodes, 11)
    assert torch.equal(wire.read_ids(wire.ids(nodes)), nodes)
    head = torch.tensor([2, 40, nodes.numel() - 40, 5, -7])  # k = 2, sizes, streams' bits
    got_head, got_nodes = wire.read_request(wire.request(head, nodes))
    assert torch.equal(got_head, head) and torch.equal(got_nodes, nodes)
    rows = _core.extract_rows(dataset, nodes, 0)
    message = wire.rows(*rows)
    for got, want in zip(wire.read_rows(message, nodes), rows):
        assert torch.equal(got, want)
    draws = _core.draw_rows(dataset, nodes, torch.tensor([nodes.numel()]), torch.tensor([5]), 0, 3, False, 0, 0)
    for got, want in zip(wire.read_draws(wire.draws(*draws), nodes.numel()), draws):
        assert torch.equal(got, want)
    # Plain: a degree and a first edge (int64) per row, an id (int32, or int64 on 2^31 nodes and more)
    # per neighbour; packed: under half of it all as int64.
    if packed:
        assert message.numel() < 4 * (rows[1].numel() + 2 * nodes.numel())
    else:
        id_bytes = torch.empty(0, dtype=wire.id_dtype).element_size()  # torch 1.13: no dtype.itemsize
        assert message.numel() == 16 * nodes.numel() + id_bytes * rows[1].numel()
    with pytest.raises(ValueError):
        wire.read_rows(message[:-1], nodes)
    with pytest.raises(ValueError):
        wire.read_draws(torch.cat([wire.draws(*draws), torch.zeros(1, dtype=torch.uint8)]), nodes.numel())
    with pytest.raises(ValueError):
        wire.read_request(torch.zeros(3, dtype=torch.uint8))
