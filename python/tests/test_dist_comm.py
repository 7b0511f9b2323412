"""graphtier.distributed building blocks: the process grid, all-to-allv over Gloo, and the checks a rank
makes of its partition directory before any collective."""

import json
import os

import pytest
import torch

from graphtier.distributed import CommStats, Partition, ProcessGrid, alltoallv, grid_groups

from dist_util import spawn


def test_grid_places_blocks_on_rows_and_every_block_in_every_column():
    for world, c in [(1, 1), (2, 1), (2, 2), (4, 1), (4, 2), (6, 3)]:
        grids = [ProcessGrid(world, c, r) for r in range(world)]
        for g in grids:
            assert g.rows * c == world
            assert g.rank in g.row_ranks(g.row) and g.rank in g.column_ranks(g.column)
            column = g.column_ranks(g.column)
            assert [grids[r].row for r in column] == list(range(g.rows))  # position i holds block i
            assert [g.owner(i) for i in range(g.rows)] == column
    with pytest.raises(ValueError, match="replication 3 must divide"):
        ProcessGrid(4, 3, 0)
    with pytest.raises(ValueError, match="rank 4 is outside"):
        ProcessGrid(4, 2, 4)


def _exchanges(rank, world):
    # Every replication that divides the world, in one process group (spawning costs seconds).
    return [_exchange(rank, world, c) for c in (1, 2, 4) if world % c == 0]


def _exchange(rank, world, c):
    grid = ProcessGrid(world, c, rank)
    groups = grid_groups(grid)
    members = grid.column_ranks(grid.column)
    stats = CommStats()
    # To member i: i + rank ids (rank, i), and as many bfloat16 rows [3] of value 4 rank + i.
    ids = [torch.full((i + rank,), rank * 100 + i, dtype=torch.int64) for i in range(len(members))]
    rows = [torch.full((i + rank, 3), float(rank * 4 + i), dtype=torch.bfloat16) for i in range(len(members))]
    got_ids = alltoallv(ids, groups.column, stats)
    got_rows = alltoallv(rows, groups.column, stats)
    me = grid.row
    out = []
    for i, src in enumerate(members):
        out.append((got_ids[i].tolist(), got_rows[i].float().tolist(), str(got_rows[i].dtype)))
        assert got_ids[i].tolist() == [src * 100 + me] * (me + src)
    return out, stats.as_dict()


@pytest.mark.parametrize("world", [1, 2, 4])
def test_alltoallv_delivers_every_members_rows_in_group_order(world):
    per_rank = spawn(_exchanges, world)
    replications = [c for c in (1, 2, 4) if world % c == 0]
    for rank, results in enumerate(per_rank):
        for c, (out, stats) in zip(replications, results):
            grid = ProcessGrid(world, c, rank)
            members = grid.column_ranks(grid.column)
            me = grid.row
            for i, src in enumerate(members):
                ids, rows, dtype = out[i]
                assert ids == [src * 100 + me] * (me + src)
                assert rows == [[float(src * 4 + me)] * 3] * (me + src)  # exact in bfloat16
                assert dtype == "torch.bfloat16"
            # Bytes to and from the other members only: int64 ids, then 3 bfloat16 per row.
            sent = sum((i + rank) * (8 + 6) for i, dst in enumerate(members) if dst != rank)
            received = sum((me + src) * (8 + 6) for src in members if src != rank)
            assert stats == {"bytes_sent": sent, "bytes_received": received, "exchanges": 2}


def test_alltoallv_refuses_mismatched_buffers():
    assert spawn(_refuses, 1) == [True]


def _refuses(rank, world):
    group = grid_groups(ProcessGrid(world, 1, rank)).column
    with pytest.raises(ValueError, match="2 send buffers for a group of 1"):
        alltoallv([torch.zeros(1), torch.zeros(1)], group)
    return True


def _manifest(**changes):
    manifest = {"format": "graphtier-partition", "version": 1, "ranks": 2, "replication": 1, "process_rows": 2,
                "graph": "partitioned", "balance": "bytes", "num_nodes": 10, "num_edges": 20, "hot_rows": 2,
                "feature_bounds": [0, 5, 10], "topology_bounds": [0, 4, 10], "edge_offsets": [0, 8],
                "local_ranges": [[[0, 2], [2, 5]], [[0, 2], [5, 10]]],
                "source": {"name": "g", "path": "/data/g", "manifest_xxh3": "0" * 16, "files": {}},
                "rank_dirs": ["rank-0000", "rank-0001"]}
    manifest.update(changes)
    return manifest


def _write_rank(root, which, **changes):
    d = os.path.join(root, f"rank-{which:04d}")
    for sub in ("graph", "features"):
        os.makedirs(os.path.join(d, sub), exist_ok=True)
        open(os.path.join(d, sub, "manifest.json"), "w").close()
    with open(os.path.join(d, "partition.json"), "w") as f:
        json.dump(_manifest(**{"rank": which, **changes}), f)
    return d


def test_partition_maps_ids_to_owners_and_local_rows(tmp_path):
    _write_rank(str(tmp_path), 1)
    part = Partition.open(str(tmp_path), 1)
    assert part.row == 1 and part.edge_offset == 8 and part.local_ranges == [(0, 2), (5, 10)]
    ids = torch.tensor([0, 1, 4, 5, 9, 3])
    assert part.feature_owner_row(ids).tolist() == [0, 0, 0, 1, 1, 0]
    assert part.topology_owner_row(ids).tolist() == [0, 0, 1, 1, 1, 0]
    assert part.holds_features(ids).tolist() == [True, True, False, True, True, False]
    assert part.local_rows(torch.tensor([0, 1, 5, 9])).tolist() == [0, 1, 2, 6]
    with pytest.raises(ValueError, match="id 4 is not among this rank's feature rows"):
        part.local_rows(torch.tensor([0, 4]))
    part.check_world(2)
    with pytest.raises(ValueError, match="partition is for 2 ranks, the job has 4"):
        part.check_world(4)
    # The same directory opened as the rank's own directory.
    assert Partition.open(str(tmp_path / "rank-0001"), 1).identity() == part.identity()


@pytest.mark.parametrize("changes,message", [
    # The engine's reader checks the file (fuzz/partition_manifest_fuzz.cpp), with its messages.
    ({"format": "other"}, '"format" must be "graphtier-partition"'),
    ({"version": 2}, "partition format version 2 is not supported"),
    ({"rank": 0}, "this directory is rank 0's, this process is rank 1"),
    ({"rank": 2}, r'"rank" 2 is outside \[0, 2\)'),
    ({"ranks": 3}, r'"ranks" \(3\) must equal process_rows x replication \(2 x 1\)'),
    ({"feature_bounds": [0, 11, 10]}, '"feature_bounds" must be non-decreasing'),
    ({"graph": "sharded"}, "unknown mode 'sharded'"),
    ({"hot_rows": "2"}, '"hot_rows" must be an integer'),
    ({"local_ranges": [[[0, 2], [2, 5]], [[0, 2], [4, 10]]]}, r'"local_ranges"\[1\] is \[\[0,2\],\[4,10\]\]'),
    ({"source": {}}, 'missing field "name"'),
])
def test_partition_refuses_a_bad_manifest_in_one_line(tmp_path, changes, message):
    d = _write_rank(str(tmp_path), 1, **changes)
    with pytest.raises(ValueError, match=message) as e:
        Partition.open(str(tmp_path), 1)
    assert str(e.value).startswith(os.path.join(d, "partition.json")), str(e.value)


def test_partition_refuses_a_manifest_that_is_not_json(tmp_path):
    d = _write_rank(str(tmp_path), 1)
    with open(os.path.join(d, "partition.json"), "wb") as f:
        f.write(b"\xff{")
    with pytest.raises(ValueError, match="partition.json: not valid JSON"):
        Partition.open(str(tmp_path), 1)


def test_partition_names_a_missing_directory_or_rank(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such partition directory"):
        Partition.open(str(tmp_path / "nothing"), 0)
    with pytest.raises(FileNotFoundError, match="not a partition directory"):
        Partition.open(str(tmp_path), 0)
    _write_rank(str(tmp_path), 1)
    with open(tmp_path / "partition.json", "w") as f:
        json.dump(_manifest(), f)  # the top directory's: no "rank"
    with pytest.raises(FileNotFoundError, match="no rank-0000/ for rank 0"):
        Partition.open(str(tmp_path), 0)
    os.remove(tmp_path / "rank-0001" / "features" / "manifest.json")
    with pytest.raises(FileNotFoundError, match="features/ dataset is missing"):
        Partition.open(str(tmp_path), 1)
