"""python -m graphtier.train as a user meets it: --help with every default, the README's defaults,
--fanouts with -1, --resume's need for --checkpoint, no UserWarning, checkpoints read without
unpickling, and a progress bar on a terminal only."""

import os
import pty
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

import graphtier.train as train
from graphtier import training
from test_train_errors import _assert_refused, _train

ROOT = Path(__file__).resolve().parents[2]
SHORT = ["--batch-size", "256", "--fanouts", "5,5", "--hidden", "16", "--threads", "2"]


def test_help_shows_every_default():
    r = _train("--help")
    assert r.returncode == 0, r.stderr
    options = r.stdout.split("options:", 1)[1] if "options:" in r.stdout else r.stdout.split("optional arguments:")[1]
    blocks = re.split(r"\n(?=  -)", options.strip("\n"))
    assert len(blocks) > 20
    for block in blocks:
        flag = block.split()[0].rstrip(",")
        if flag != "-h":
            assert "default" in " ".join(block.split()), block
    text = " ".join(r.stdout.split())
    for expected in ("--batch-size BATCH_SIZE training seeds per minibatch (default: 1024)",
                     "(default: 50)", "default 25,10", "-1 = all", "(default: 100%)"):
        assert expected in text, expected


def test_readme_states_the_defaults():
    readme = (ROOT / "README.md").read_text()
    synopsis = readme[readme.index("python -m graphtier.train DATASET"):]
    synopsis = synopsis[: synopsis.index("\n\n")]
    args = train.parse_args(["DIR"])
    for option in ("batch-size", "epochs"):
        shown = re.search(rf"\[--{option} (\d+)\]", synopsis).group(1)
        assert int(shown) == getattr(args, option.replace("-", "_")), option
    assert args.fanouts == "25,10" and "--fanouts 25,10" in synopsis


def test_fanouts_take_minus_one_and_refuse_other_separators(synthetic):
    assert train.parse_args(["DIR", "--fanouts", "-1,10"]).fanout_list == [-1, 10]
    assert train.parse_args(["DIR", "--fanouts", "-1"]).fanout_list == [-1]
    assert train.parse_args(["DIR", "--fanouts=-1,10"]).fanout_list == [-1, 10]
    r = _train(synthetic, "--epochs", "1", "--batch-size", "256", "--fanouts", "-1,3", "--hidden", "16",
               "--threads", "2", "--quiet", "--no-eval")
    assert r.returncode == 0 and "trained 1 epochs" in r.stdout, r.stderr
    _assert_refused(_train(synthetic, "--fanouts=25;10"), "--fanouts", "'25;10'")
    _assert_refused(_train(synthetic, "--fanouts", "25;10"), "--fanouts", "'25;10'")
    _assert_refused(_train(synthetic, "--fanouts", "-2,10"), "--fanouts", "-2")


def test_resume_without_checkpoint_is_an_error(synthetic):
    _assert_refused(_train(synthetic, "--epochs", "1", "--resume"), "--resume", "--checkpoint")


def test_a_run_with_checkpoint_and_resume_warns_nothing(synthetic, tmp_path):
    ckpt = str(tmp_path / "run.pt")
    for extra in (["--stop-after-batches", "2"], ["--resume"]):
        r = subprocess.run([sys.executable, "-W", "error::UserWarning", "-W", "error::FutureWarning",
                            "-m", "graphtier.train", synthetic, "--epochs", "1", *SHORT, "--quiet",
                            "--checkpoint", ckpt, *extra], capture_output=True, text=True, timeout=300)
        assert r.returncode == 0 and "Warning" not in r.stderr, r.stderr


def test_checkpoints_load_without_unpickling(synthetic, tmp_path, monkeypatch):
    import pickle

    import torch

    import graphtier

    ckpt = str(tmp_path / "run.pt")
    r = _train(synthetic, "--epochs", "1", *SHORT, "--quiet", "--checkpoint", ckpt, "--stop-after-batches", "1")
    assert r.returncode == 0, r.stderr

    def refuse(*args, **kwargs):
        raise AssertionError("a checkpoint was unpickled")

    # Neither torch 1.13's full unpickler nor any other: the tensor archive reads no pickle.
    for module, name in ((torch, "load"), (pickle, "load"), (pickle, "loads"), (pickle, "Unpickler")):
        monkeypatch.setattr(module, name, refuse)
    state = training.load_checkpoint(ckpt, graphtier.Dataset(synthetic))
    assert state["position"] == (0, 1)


def _run_on(stdout_tty: bool, dataset: str):
    """Trains two short epochs with stdout (or else stderr) on a pseudo-terminal; returns what the
    terminal received, what the pipe received and the run's seconds."""
    master, slave = pty.openpty()
    pipe = subprocess.PIPE
    start = time.perf_counter()
    p = subprocess.Popen([sys.executable, "-m", "graphtier.train", dataset, "--epochs", "2", "--batch-size", "16",
                          "--fanouts", "5,5", "--hidden", "16", "--threads", "2", "--no-eval"],
                         stdout=slave if stdout_tty else pipe, stderr=pipe if stdout_tty else slave)
    os.close(slave)
    terminal = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        terminal += chunk
    piped = (p.stderr if stdout_tty else p.stdout).read()
    assert p.wait(timeout=300) == 0, piped
    os.close(master)
    return terminal.decode(), piped.decode(), time.perf_counter() - start


def test_progress_bar_on_a_terminal(synthetic):
    terminal, piped, seconds = _run_on(True, synthetic)
    assert "Traceback" not in piped, piped
    total = 1200 // 16  # train ids of the synthetic fixture
    draws = re.findall(r"\repoch +(\d) \[[#.]+\] (\d+)/(\d+) batches  [\d.]+ batches/s  ETA \d+:\d\d  loss [\d.]+",
                       terminal)
    assert draws, terminal
    assert {(e, d, t) for e, d, t in draws} >= {("0", str(total), str(total)), ("1", str(total), str(total))}
    # At most ten redraws a second (plus each epoch's first and last).
    assert len(draws) <= 4 + 10 * seconds, (len(draws), seconds)
    lines = [line for line in terminal.replace("\r\n", "\n").split("\n") if line]
    epoch_lines = [line for line in lines if "loss" in line and "busy" in line]
    assert len(epoch_lines) == 2
    for line in epoch_lines:  # the bar is erased before the epoch's line is printed
        assert line.startswith("\r\x1b[K") or "\r\x1b[Kepoch" in line, repr(line)


def test_plain_lines_when_stdout_is_not_a_terminal(synthetic):
    terminal, piped, _ = _run_on(False, synthetic)
    assert "\r" not in piped and "\r" not in terminal.replace("\r\n", "\n"), (piped, terminal)
    header, *lines = piped.splitlines()
    assert header.startswith("threads: engine 2 (--threads)"), piped  # the division of the cores
    assert [line.split()[:2] for line in lines[:2]] == [["epoch", "0"], ["epoch", "1"]], piped
    assert lines[2].startswith("trained 2 epochs") and len(lines) == 3, piped
