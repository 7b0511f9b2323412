"""DistFeatureFetcher (python/graphtier/dist/features.py): every rank's gather is byte for byte the
single-process gather of the same ids, for P in {2, 4} Gloo processes and replication c in {1, 2},
and the bytes it counts cross the column as sent by one rank and received by another."""

from pathlib import Path

import pytest
import torch

import graphtier
from dist_launch import describe, launch
from conftest import run_cli

WORKER = str(Path(__file__).with_name("dist_features_worker.py"))


def _partition(source: str, out: Path, ranks: int, replication: int, hot: str) -> str:
    run_cli("partition", "-d", source, "-o", str(out), "--ranks", str(ranks), "--replication", str(replication),
            "--hot-replicated", hot)
    return str(out)


@pytest.mark.parametrize("ranks, replication, hot", [(2, 1, "0"), (2, 2, "0"), (4, 1, "5%"), (4, 2, "5%")])
def test_gather_is_the_single_process_gather(synthetic, tmp_path, ranks, replication, hot):
    part = _partition(synthetic, tmp_path / "part", ranks, replication, hot)
    out = tmp_path / "out"
    out.mkdir()
    result = launch(ranks, [WORKER, part, str(out)], timeout=90)
    assert all(r.returncode == 0 for r in result), describe(result)
    store = graphtier.FeatureStore(graphtier.Dataset(synthetic))
    sent = received = remote = 0
    for rank in range(ranks):
        saved = torch.load(out / f"rank-{rank}.pt")
        for ids, rows in zip(saved["ids"], saved["rows"]):
            want = store.gather(ids)
            assert rows.dtype == want.dtype and rows.shape == want.shape
            assert torch.equal(rows.view(torch.uint8), want.view(torch.uint8)), (rank, ids[:10])
        c = saved["counters"]
        sent, received, remote = sent + c["bytes_sent"], received + c["bytes_received"], remote + c["remote_rows"]
    # What one rank sends another receives; with one process row (c = P) nothing crosses.
    assert sent == received
    assert (remote == 0) == (ranks == replication)
    assert (sent == 0) == (ranks == replication)
