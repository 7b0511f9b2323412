"""The launcher the README shows (python/graphtier/distributed/launch.py): 2 ranks of Cora train
through it as the tests' runs do; a rank that never starts is one graphtier line on the ranks that
did, within --dist-timeout; a rank terminated or killed is told to the others at once (not after
its heartbeat goes stale), and the launcher then exits non-zero. At most 2 ranks, every run bounded."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from conftest import run_cli
from dist_launch import describe, launch
from graphtier.distributed.comm import free_port

LAUNCH = [sys.executable, "-m", "graphtier.distributed.launch"]
TELL_WITHIN = 3.0  # seconds from a rank's end until its peer has stopped (the heartbeat takes 10)
SHORT = ["--epochs", "1", "--batch-size", "64", "--fanouts", "5,5", "--hidden", "16", "--threads", "1", "--no-eval"]

# python -m graphtier.train whose rank RANK, at step STEP of its first epoch, writes MARKER (the
# test then signals it from outside) or sends itself SIGKILL ("kill"); every step is slowed a
# little, so that the job is still running when the test looks.
SLOW_TRAIN = """
import os, signal, sys, time
from graphtier import train
from graphtier.distributed import train as job

ACTION, RANK, STEP = sys.argv.pop(1), int(sys.argv.pop(1)), int(sys.argv.pop(1))
real, steps = job.train_step, []

def step(*args, **kwargs):
    steps.append(None)
    time.sleep(0.05)
    if int(os.environ["RANK"]) == RANK and len(steps) == STEP + 1:
        if ACTION == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        open(ACTION, "w").close()
    return real(*args, **kwargs)

job.train_step = step
sys.exit(train.main(sys.argv[1:]))
"""


@pytest.fixture(scope="module")
def cora2(cora, tmp_path_factory) -> str:
    part = tmp_path_factory.mktemp("launch") / "cora-p2"
    run_cli("partition", "-d", cora, "-o", str(part), "--ranks", "2", "--replication", "1")
    return str(part)


@pytest.fixture(scope="module")
def slow_job(tmp_path_factory) -> dict:
    """A package `slowjob` holding SLOW_TRAIN, for `--module slowjob.train`."""
    root = tmp_path_factory.mktemp("slowjob")
    (root / "slowjob").mkdir()
    (root / "slowjob" / "__init__.py").write_text("")
    (root / "slowjob" / "train.py").write_text(SLOW_TRAIN)
    return {"PYTHONPATH": os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")])}


def _cli(args, timeout: float, env=None, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([*LAUNCH, *args], capture_output=True, text=True, timeout=timeout, cwd=cwd,
                          env=dict(os.environ, OMP_NUM_THREADS="1", **(env or {})))


def test_two_ranks_of_cora_train_through_the_launcher_as_the_readme_shows(cora2, tmp_path):
    # The README's command; its result equals the tests' launch of the same job (losses bit for bit).
    options = ["--epochs", "20", "--batch-size", "32", "--threads", "1", "--seed", "1"]
    done = _cli(["-n", "2", "--", cora2, *options, "--json", str(tmp_path / "cli.json")], timeout=150)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "test accuracy" in done.stdout.splitlines()[-1] and "2 ranks" in done.stdout.splitlines()[-1], done.stdout
    got = json.loads((tmp_path / "cli.json").read_text())
    assert got["ranks"] == 2 and [r["rank"] for r in got["epochs"][-1]["ranks"]] == [0, 1]
    assert got["test_acc"] >= 0.75, got["test_acc"]
    ranks = launch(2, ["-m", "graphtier.train", cora2, *options, "--quiet", "--json", str(tmp_path / "tests.json")],
                   timeout=150)
    assert all(r.returncode == 0 for r in ranks), describe(ranks)
    assert json.loads((tmp_path / "tests.json").read_text())["losses"] == got["losses"]


@pytest.mark.parametrize("args, words", [
    (["-n", "0"], "--nproc-per-node 0, --nnodes 1, --node-rank 0: expected --nproc-per-node >= 1"),
    (["-n", "1", "--nnodes", "2", "--node-rank", "2", "--master-addr", "h"], "--node-rank 2: expected"),
    (["-n", "1", "--nnodes", "2"], "--nnodes > 1 needs --master-addr")])
def test_bad_options_are_one_line(args, words):
    done = _cli([*args, "--", "data"], timeout=60)
    assert done.returncode == 2 and done.stderr.splitlines()[-1].startswith(
        "python -m graphtier.distributed.launch: error: ") and words in done.stderr, done.stderr


def test_a_dataset_that_is_not_a_partition_is_refused_on_every_rank(cora):
    # Before: every rank trained the whole dataset alone, writing the same files.
    ranks = launch(2, ["-m", "graphtier.train", cora, *SHORT], timeout=60)
    for r in ranks:
        assert r.returncode == 2, describe(ranks)
        assert f"{cora}: not a partition directory, and the job has 2 ranks (WORLD_SIZE)" in r.stderr, describe(ranks)


def test_two_machines_one_rank_each(cora2, tmp_path):
    # --nnodes 2: two launchers (here on one machine), node 0's hosting the store; the job trains as
    # one launcher's two ranks do.
    port = free_port()
    options = [cora2, "--epochs", "2", "--batch-size", "32", "--threads", "1", "--seed", "1", "--quiet"]
    env = dict(os.environ, OMP_NUM_THREADS="1")
    nodes = [subprocess.Popen([*LAUNCH, "-n", "1", "--nnodes", "2", "--node-rank", str(k), "--master-addr", "127.0.0.1",
                               "--master-port", str(port), "--", *options, "--json", str(tmp_path / f"node{k}.json")],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env) for k in (1, 0)]
    try:
        outputs = [p.communicate(timeout=120) for p in nodes]
    finally:
        for p in nodes:
            p.kill()
    assert [p.returncode for p in nodes] == [0, 0], outputs
    one = launch(2, ["-m", "graphtier.train", *options, "--json", str(tmp_path / "one.json")], timeout=120)
    assert all(r.returncode == 0 for r in one), describe(one)
    got = json.loads((tmp_path / "node0.json").read_text())
    assert got["ranks"] == 2 and got["losses"] == json.loads((tmp_path / "one.json").read_text())["losses"]


def test_the_environment_is_torchruns():
    code = ("import json, os; print(json.dumps({k: os.environ[k] for k in ('RANK', 'LOCAL_RANK', 'WORLD_SIZE', "
            "'LOCAL_WORLD_SIZE', 'GROUP_RANK', 'MASTER_ADDR', 'MASTER_PORT', 'TORCHELASTIC_USE_AGENT_STORE')}))")
    port = free_port()
    ranks = launch(2, ["-c", code], timeout=30, nnodes=2, node_rank=1, master_addr="127.0.0.2", master_port=port,
                   host_store=False)
    seen = [json.loads(r.stdout) for r in ranks]
    assert [(s["RANK"], s["LOCAL_RANK"], s["GROUP_RANK"]) for s in seen] == [("2", "0", "1"), ("3", "1", "1")]
    assert {(s["WORLD_SIZE"], s["LOCAL_WORLD_SIZE"], s["MASTER_ADDR"], s["MASTER_PORT"],
             s["TORCHELASTIC_USE_AGENT_STORE"]) for s in seen} == {("4", "2", "127.0.0.2", str(port), "True")}


@pytest.mark.parametrize("node, words", [(0, "rank 1 of 2 did not join the job at 127.0.0.1:{port} within 5 s"),
                                         (1, "rank 1: no rendezvous store at 127.0.0.1:{port} within 5 s")])
def test_a_rank_that_never_starts_is_one_line_within_the_timeout(cora2, node, words):
    # Two machines, one rank each; only node `node` is launched. Before: a raw "Socket Timeout"
    # after twice the timeout.
    port = free_port()
    start = time.monotonic()
    done = _cli(["-n", "1", "--nnodes", "2", "--node-rank", str(node), "--master-addr", "127.0.0.1",
                 "--master-port", str(port), "--", cora2, *SHORT, "--dist-timeout", "5"], timeout=60)
    seconds = time.monotonic() - start
    assert done.returncode == 2, done.stderr
    lines = [line for line in done.stderr.splitlines() if "error" in line]
    assert lines[0].startswith("python -m graphtier.train: error: " + words.format(port=port)), done.stderr
    assert lines[1] == f"python -m graphtier.distributed.launch: error: rank {node} exited with status 2; its ranks on this machine stopped"
    assert "Traceback" not in done.stderr and len(done.stderr.splitlines()) == 2, done.stderr  # no C++ log either
    # The timeout and the start of two Python processes with torch on a busy machine (before: twice the timeout).
    assert seconds < 5 + 10, (seconds, done.stderr)


def test_sigterm_to_one_rank_is_told_to_the_other_at_once(cora2, slow_job, tmp_path):
    # The terminated rank publishes its failure from its signal thread, whatever its main thread
    # waits for; the launcher's own publishing is off (tell_peers=False).
    sent = []

    def terminate(ranks):
        if not sent and (tmp_path / "marker").exists():
            os.kill(ranks.procs[1].pid, signal.SIGTERM)
            sent.append(time.monotonic())

    start = time.monotonic()
    result = launch(2, ["-m", "slowjob.train", "marker", "1", "3", cora2, *SHORT, "--epochs", "50",
                        "--dist-timeout", "30"], timeout=90, env=slow_job, cwd=str(tmp_path), during=terminate,
                    tell_peers=False)
    assert sent, describe(result)
    assert result[1].returncode == 128 + signal.SIGTERM, describe(result)
    assert "rank 1: terminated by SIGTERM" in result[1].stderr, describe(result)
    assert result[0].returncode == 1 and "rank 0 stops: rank 1: terminated by SIGTERM" in result[0].stderr
    assert result[0].seconds - (sent[0] - start) < TELL_WITHIN, describe(result)


def test_a_killed_rank_is_told_to_the_other_by_the_launcher_at_once(cora2, slow_job, tmp_path):
    result = launch(2, ["-m", "slowjob.train", "kill", "1", "3", cora2, *SHORT, "--epochs", "50",
                        "--dist-timeout", "30"], timeout=90, env=slow_job, cwd=str(tmp_path))
    assert result[1].returncode == -signal.SIGKILL, describe(result)
    assert "rank 0 stops: rank 1: killed by SIGKILL (seen by its launcher)" in result[0].stderr, describe(result)
    assert result[0].returncode == 1 and result[0].seconds - result[1].seconds < TELL_WITHIN, describe(result)


def test_the_launcher_exits_with_the_failed_ranks_status(cora2, slow_job, tmp_path):
    start = time.monotonic()
    done = _cli(["-n", "2", "--module", "slowjob.train", "--", "kill", "0", "3", cora2, *SHORT, "--epochs", "50",
                 "--dist-timeout", "30"], timeout=90, env=slow_job, cwd=str(tmp_path))
    assert done.returncode == 128 + signal.SIGKILL, done.stderr
    assert "rank 1 stops: rank 0: killed by SIGKILL (seen by its launcher)" in done.stderr
    assert done.stderr.strip().splitlines()[-1] == \
        "python -m graphtier.distributed.launch: error: rank 0 killed by SIGKILL; its ranks on this machine stopped"
    assert time.monotonic() - start < 30


def test_the_launcher_stops_a_rank_that_does_not_stop_itself(tmp_path):
    # Rank 1 fails at once; rank 0 hangs (no graphtier job to tell it): SIGTERM after --stop-grace.
    (tmp_path / "hang.py").write_text("import os, sys, time\nif os.environ['RANK'] == '1': sys.exit(3)\ntime.sleep(60)\n")
    start = time.monotonic()
    done = _cli(["-n", "2", "--stop-grace", "1", "--module", "hang"], timeout=60, env={"PYTHONPATH": str(tmp_path)})
    assert done.returncode == 3, done.stderr
    assert done.stderr.strip().splitlines()[-1] == \
        "python -m graphtier.distributed.launch: error: rank 1 exited with status 3; its ranks on this machine stopped"
    assert time.monotonic() - start < 20


def test_sigterm_to_the_launcher_reaches_every_rank(cora2, slow_job, tmp_path):
    proc = subprocess.Popen([*LAUNCH, "-n", "2", "--module", "slowjob.train", "--", "marker", "0", "3", cora2, *SHORT,
                             "--epochs", "50", "--dist-timeout", "30"], cwd=str(tmp_path), text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=dict(os.environ, OMP_NUM_THREADS="1", **slow_job))
    try:
        deadline = time.monotonic() + 60
        while not (tmp_path / "marker").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=15)
    finally:
        proc.kill()
    assert proc.returncode == 128 + signal.SIGTERM, stderr
    assert "terminated by SIGTERM" in stderr and "Traceback" not in stderr, stderr
