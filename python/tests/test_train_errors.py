"""python -m graphtier.train refuses bad options and bad checkpoints with one line on stderr naming
the problem and exit status 2, never a traceback."""

import os
import subprocess
import sys

import pytest

from conftest import run_cli

FAST = ["--epochs", "1", "--batch-size", "256", "--fanouts", "5,5", "--hidden", "16", "--threads", "2", "--quiet"]


def _train(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "graphtier.train", *args], capture_output=True, text=True,
                          timeout=300)


def _assert_refused(r: subprocess.CompletedProcess, *words: str) -> None:
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert "Traceback" not in r.stderr and len(lines) == 1, r.stderr
    assert lines[0].startswith("python -m graphtier.train: error: "), lines[0]
    for word in words:
        assert word in lines[0], (word, lines[0])


@pytest.fixture(scope="module")
def small(tmp_path_factory) -> str:
    """A second dataset, unlike `synthetic` in nodes, feature width and classes."""
    out = tmp_path_factory.mktemp("small") / "g"
    run_cli("generate", "--out", str(out), "--nodes", "600", "--edges", "3000", "--feature-dim", "8",
            "--classes", "4", "--seed", "5", "--train-fraction", "0.5")
    return str(out)


@pytest.mark.parametrize("option, value, words", [
    ("--fanouts", "a,b", ["--fanouts", "'a'"]),
    ("--fanouts", "10,x", ["--fanouts", "'x'"]),
    ("--epochs", "-1", ["--epochs", "-1"]),
    ("--seed", "-1", ["--seed", "-1"]),
    ("--seed", str(2**64), ["--seed"]),
    ("--batch-size", "-5", ["--batch-size", "-5"]),
    ("--batch-size", "0", ["--batch-size", "0"]),
    ("--eval-batch-size", "-1", ["--eval-batch-size", "-1"]),
    ("--hidden", "-3", ["--hidden", "-3"]),
    ("--hidden", "0", ["--hidden", "0"]),
    ("--mlp-layers", "-1", ["--mlp-layers", "-1"]),
    ("--io-depth", "-1", ["--io-depth", "-1"]),
    ("--threads", "-2", ["--threads", "-2"]),
    ("--window", "-1", ["--window", "-1"]),
    ("--prefetch", "-1", ["--prefetch", "-1"]),
    ("--stop-after-batches", "-1", ["--stop-after-batches", "-1"]),
    ("--gpu-hot", "-10%", ["-10"]),
    ("--host-cache", "-1GiB", ["-1GiB"]),
])
def test_bad_options_are_one_line_and_exit_2(small, option, value, words):
    _assert_refused(_train(small, *FAST, f"{option}={value}"), *words)


def test_bad_checkpoints_are_one_line_and_exit_2(synthetic, small, tmp_path):
    ckpt = tmp_path / "run.pt"
    first = _train(small, *FAST, "--checkpoint", str(ckpt), "--stop-after-batches", "1")
    assert first.returncode == 0, first.stderr

    other = _train(synthetic, *FAST, "--checkpoint", str(ckpt), "--resume")
    _assert_refused(other, str(ckpt), "another dataset")

    truncated = tmp_path / "truncated.pt"
    truncated.write_bytes(ckpt.read_bytes()[: ckpt.stat().st_size // 2])
    _assert_refused(_train(small, *FAST, "--checkpoint", str(truncated), "--resume"), str(truncated))

    garbage = tmp_path / "garbage.pt"
    garbage.write_bytes(b"\x80\x04not a checkpoint")
    _assert_refused(_train(small, *FAST, "--checkpoint", str(garbage), "--resume"), str(garbage))

    resumed = _train(small, *FAST, "--checkpoint", str(ckpt), "--resume")
    assert resumed.returncode == 0, resumed.stderr


def test_a_checkpoint_of_renumbered_cora_does_not_resume_on_the_original(cora, tmp_path):
    # The cora fixture is the converted Cora (raw/) renumbered by `prepare` (wrpr/): the same name and
    # counts, other contents. The checkpoint knows which it was written for.
    original = os.path.join(os.path.dirname(cora), "raw")
    ckpt = tmp_path / "run.pt"
    first = _train(cora, *FAST, "--checkpoint", str(ckpt), "--stop-after-batches", "1")
    assert first.returncode == 0, first.stderr
    _assert_refused(_train(original, *FAST, "--checkpoint", str(ckpt), "--resume"), str(ckpt),
                    f"written for another dataset: 'cora' at {cora} (2708 nodes", f"this is 'cora' at {original}")
    assert _train(cora, *FAST, "--checkpoint", str(ckpt), "--resume").returncode == 0


def test_a_checkpoint_of_another_model_is_one_line_and_exit_2(small, tmp_path):
    ckpt = tmp_path / "run.pt"
    assert _train(small, *FAST, "--checkpoint", str(ckpt), "--stop-after-batches", "1").returncode == 0
    wider = [a if a != "16" else "32" for a in FAST]  # --hidden 32: the saved tensors do not fit
    _assert_refused(_train(small, *wider, "--checkpoint", str(ckpt), "--resume"), str(ckpt))
