"""DistFeatureFetcher (python/graphtier/distributed/features.py): every rank's gather is byte for byte the
single-process gather of the same ids, for P in {2, 4} Gloo processes and replication c in {1, 2},
and the bytes it counts cross the column as sent by one rank and received by another."""

import pytest
import torch

import graphtier
from conftest import run_cli
from dist_util import spawn


def _gather_on_rank(rank: int, world: int, partition_dir: str) -> dict:
    from graphtier.distributed import Partition, ProcessGrid
    from graphtier.distributed.features import DistFeatureFetcher

    partition = Partition.open(partition_dir, rank)
    fetcher = DistFeatureFetcher(partition, ProcessGrid(world, partition.replication, rank))
    n = partition.num_nodes
    g = torch.Generator().manual_seed(rank)
    requests = [
        torch.randint(0, n, (400,), generator=g),  # every block, with repeats
        torch.empty(0, dtype=torch.int64),  # nothing to fetch: still a collective
        torch.arange(n) if rank == 0 else torch.randint(0, n, (3,), generator=g),  # one rank asks for everything
        torch.full((5,), n - 1),  # the last row, five times
    ]
    rows = [fetcher.gather(ids) for ids in requests]
    # Plain bytes and lists back to the parent: torch 2.x would pass tensors as file descriptors
    # that die with this process.
    return {"ids": [ids.tolist() for ids in requests], "rows": [r.numpy().tobytes() for r in rows],
            "shapes": [tuple(r.shape) for r in rows], "dtypes": [str(r.dtype) for r in rows],
            "counters": fetcher.counters()}


@pytest.mark.parametrize("ranks, replication, hot", [(2, 1, "0"), (2, 2, "0"), (4, 1, "5%"), (4, 2, "5%")])
def test_gather_is_the_single_process_gather(synthetic, tmp_path, ranks, replication, hot):
    part = tmp_path / "part"
    run_cli("partition", "-d", synthetic, "-o", str(part), "--ranks", str(ranks), "--replication", str(replication),
            "--hot-replicated", hot)
    results = spawn(_gather_on_rank, ranks, str(part), timeout=90)
    store = graphtier.FeatureStore(graphtier.Dataset(synthetic))
    sent = received = remote = 0
    for rank, saved in enumerate(results):
        for ids, rows, shape, dtype in zip(saved["ids"], saved["rows"], saved["shapes"], saved["dtypes"]):
            want = store.gather(torch.tensor(ids, dtype=torch.int64))
            assert (dtype, shape) == (str(want.dtype), tuple(want.shape))
            assert rows == want.numpy().tobytes(), (rank, ids[:10])
        c = saved["counters"]
        sent, received, remote = sent + c["bytes_sent"], received + c["bytes_received"], remote + c["remote_rows"]
        assert c["gathers"] == 4
    # What one rank sends another receives; with one process row (c = P) nothing crosses.
    assert sent == received
    assert (remote == 0) == (ranks == replication)
    assert (sent == 0) == (ranks == replication)
