"""Failure is an error, not a hang (python/graphtier/distributed/failure.py): a rank that raises or is
killed mid-epoch makes every rank exit non-zero within --dist-timeout, with a message naming the
failed rank; a launch that cannot work (world size, a missing rank directory, mixed versions) is
one clear error on every rank before any collective."""

import shutil
from pathlib import Path

import pytest

from conftest import run_cli
from dist_launch import describe, launch

TIMEOUT = 15  # --dist-timeout of these runs: the bound every process must exit within
TRAIN = ["-m", "graphtier.train"]

# python -m graphtier.train with rank RANK's training step replaced by one that fails at the
# given step of its first epoch (the real step before it): "raise" raises RuntimeError there,
# "kill" sends the process SIGKILL. The fault is the test's, from outside the package.
FAULTY_TRAIN = """
import os, signal, sys
from graphtier import train
from graphtier.distributed import train as job

ACTION, RANK, STEP = sys.argv.pop(1), int(sys.argv.pop(1)), int(sys.argv.pop(1))
real, steps = job.train_step, []

def faulty_step(*args, **kwargs):
    steps.append(None)
    if int(os.environ["RANK"]) == RANK and len(steps) == STEP + 1:
        if ACTION == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        raise RuntimeError(f"test failure injected at step {STEP}")
    return real(*args, **kwargs)

job.train_step = faulty_step
sys.exit(train.main(sys.argv[1:]))
"""


# Ranks started by hand (the environment variables, no launcher): rank 0 hosts the rendezvous store
# and nobody watches the processes from outside.
BY_HAND = dict(host_store=False, tell_peers=False)
NO_AGENT_STORE = {"TORCHELASTIC_USE_AGENT_STORE": ""}


def _faulty(action: str, rank: int, step: int) -> list:
    return ["-c", FAULTY_TRAIN, action, str(rank), str(step)]
OPTIONS = ["--epochs", "3", "--batch-size", "64", "--fanouts", "5,5", "--hidden", "16", "--threads", "1",
           "--no-eval", "--dist-timeout", str(TIMEOUT)]


@pytest.fixture(scope="module")
def partitions(synthetic, tmp_path_factory):
    root = tmp_path_factory.mktemp("failure-partitions")
    out = {}
    for ranks, replication in ((2, 1), (4, 2)):
        path = root / f"p{ranks}c{replication}"
        run_cli("partition", "-d", synthetic, "-o", str(path), "--ranks", str(ranks), "--replication", str(replication))
        out[ranks] = str(path)
    return out


def _assert_all_fail_naming(result, failed: int, since: float) -> None:
    for r in result:
        assert r.returncode is not None and r.returncode != 0, describe(result)
        assert r.seconds - since <= TIMEOUT, describe(result)
        if r.rank != failed:
            assert f"rank {failed}" in r.stderr, describe(result)


def test_a_rank_that_raises_stops_every_rank(partitions):
    result = launch(2, [*_faulty("raise", 1, 2), partitions[2], *OPTIONS], timeout=90)
    _assert_all_fail_naming(result, failed=1, since=result[1].seconds)
    assert "test failure injected" in result[1].stderr and "test failure injected" in result[0].stderr, describe(result)


def test_a_killed_rank_stops_every_rank(partitions):
    # Rank 1 sends itself SIGKILL at step 2 of the first epoch: it leaves no message and no launcher
    # tells (a machine lost with its launcher); rank 0 watches its heartbeat, ranks 2 and 3 learn it
    # from the store.
    result = launch(4, [*_faulty("kill", 1, 2), partitions[4], *OPTIONS], timeout=90, tell_peers=False)
    assert result[1].returncode == -9, describe(result)
    _assert_all_fail_naming(result, failed=1, since=result[1].seconds)
    for r in (result[0], result[2], result[3]):
        assert "no heartbeat" in r.stderr, describe(result)


def test_a_killed_rank_0_stops_every_rank(partitions):
    # Launched by hand, rank 0 hosts the rendezvous store: the others lose it at once.
    result = launch(2, [*_faulty("kill", 0, 2), partitions[2], *OPTIONS], timeout=90, env=NO_AGENT_STORE, **BY_HAND)
    assert result[0].returncode == -9, describe(result)
    _assert_all_fail_naming(result, failed=0, since=result[0].seconds)
    assert "lost the rendezvous store" in result[1].stderr, describe(result)


def test_a_killed_rank_0_is_one_line_on_the_others_when_run_with_dash_m(partitions, tmp_path):
    # As `python -m graphtier.train` runs: graphtier is imported while runpy finds the module
    # (sys.argv[0] == "-m"), so PyTorch's C++ warnings (2.x: a stack trace per failed store call)
    # stay out of the failed job's output on the surviving ranks.
    package = tmp_path / "faultjob"
    package.mkdir()
    (package / "__init__.py").write_text("import graphtier  # noqa: F401\n")
    (package / "train.py").write_text(FAULTY_TRAIN)
    result = launch(2, ["-m", "faultjob.train", "kill", "0", "2", partitions[2], *OPTIONS], timeout=90,
                    env={"PYTHONPATH": str(tmp_path), **NO_AGENT_STORE}, **BY_HAND)
    assert result[0].returncode == -9, describe(result)
    _assert_all_fail_naming(result, failed=0, since=result[0].seconds)
    lines = result[1].stderr.strip().splitlines()
    assert len(lines) == 1 and "lost the rendezvous store" in lines[0], describe(result)


def test_world_size_other_than_the_partition_is_an_error(partitions):
    result = launch(2, [*TRAIN, partitions[4], *OPTIONS], timeout=60)
    for r in result:
        assert r.returncode == 2 and "the partition is for 4 ranks, the job has 2" in r.stderr, describe(result)


def test_ranks_beyond_the_partition_are_an_error_on_every_rank_at_once(partitions):
    # Ranks 2 and 3 have no directory in a 2-rank partition: nobody waits for the rendezvous.
    result = launch(4, [*TRAIN, partitions[2], *OPTIONS], timeout=60)
    for r in result:
        assert r.returncode == 2, describe(result)
        assert "the partition is for 2 ranks, the job has 4" in r.stderr and "rank-0002" in r.stderr, describe(result)
        assert r.seconds < 30 and "DistNetworkError" not in r.stderr, describe(result)


def test_a_missing_rank_directory_is_an_error_on_every_rank(partitions, tmp_path):
    part = tmp_path / "p"
    shutil.copytree(partitions[2], part)
    shutil.rmtree(part / "rank-0001")
    result = launch(2, [*TRAIN, str(part), *OPTIONS], timeout=60)
    for r in result:
        assert r.returncode == 2 and "rank 1: " in r.stderr and "rank-0001" in r.stderr, describe(result)


def test_a_rank_directory_of_another_partition_is_an_error_on_every_rank(partitions, synthetic, tmp_path):
    other = tmp_path / "other"
    run_cli("partition", "-d", synthetic, "-o", str(other), "--ranks", "2", "--replication", "1",
            "--hot-replicated", "1%")
    part = tmp_path / "p"
    shutil.copytree(partitions[2], part)
    shutil.rmtree(part / "rank-0001")
    shutil.copytree(other / "rank-0001", part / "rank-0001")
    result = launch(2, [*TRAIN, str(part), *OPTIONS], timeout=60)
    for r in result:
        assert r.returncode == 2 and "rank 1 differs from rank 0: partition" in r.stderr, describe(result)
        # Both sources are named, not only the digests.
        assert f"2 ranks of {Path(synthetic).name} at {synthetic}" in r.stderr, describe(result)


def test_mixed_versions_are_an_error_on_every_rank(partitions):
    # Rank 1 runs another graphtier version (its __version__ changed before the job starts).
    code = ("import os, sys, graphtier; from graphtier import train\n"
            "if os.environ['RANK'] == '1': graphtier.__version__ = '0.0.1'\n"
            "sys.exit(train.main(sys.argv[1:]))")
    result = launch(2, ["-c", code, partitions[2], *OPTIONS], timeout=60)
    for r in result:
        assert r.returncode == 2 and "rank 1 differs from rank 0: graphtier '0.0.1'" in r.stderr, describe(result)
