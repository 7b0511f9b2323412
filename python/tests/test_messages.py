"""Messages that name what the user gave (issue 49, §5): an id repeated in the original numbering
is named as given, an empty split says so wherever a loader or training meets it, and
--gpu-sampling without CUDA names the option, not an internal class."""

import subprocess
import sys

import pytest
import torch

import graphtier
from conftest import run_cli


def _train(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "graphtier.train", *args], capture_output=True, text=True,
                          timeout=300)


@pytest.fixture(scope="module")
def no_train(tmp_path_factory) -> str:
    """A dataset whose train split is empty (valid and test are not)."""
    out = tmp_path_factory.mktemp("no_train") / "g"
    run_cli("generate", "--out", str(out), "--nodes", "200", "--edges", "1000", "--feature-dim", "4", "--classes", "2",
            "--seed", "1", "--train-fraction", "0")
    return str(out)


def test_a_repeated_original_id_is_named_as_given(cora):
    ds = graphtier.Dataset(cora)
    original = 5
    prepared = int(ds.from_original(torch.tensor([original]))[0])
    assert prepared != original  # the renumbering moves it: the message could name either
    with pytest.raises(ValueError) as e:
        graphtier.NeighborLoader(ds, [2], ids=torch.tensor([original, 7, original]), ids_numbering="original",
                                 features=False)
    assert str(e.value) == f"seed {original} appears more than once (ids in the original numbering)"


@pytest.mark.parametrize("make", [
    lambda ds: graphtier.NeighborLoader(ds, [2], split="train", features=False),
    lambda ds: graphtier.LayerLoader(ds, [8], split="train"),
])
def test_an_empty_split_says_so_in_a_loader(no_train, make):
    with pytest.raises(ValueError) as e:
        make(no_train)
    assert str(e.value) == (f"the train split of {no_train} is empty: no node to iterate (graphtier info lists the "
                            "splits)")


def test_an_empty_train_split_is_one_line_in_training(no_train):
    r = _train(no_train, "--epochs", "1", "--quiet")
    assert r.returncode == 2, r.stderr
    assert r.stderr == (f"python -m graphtier.train: error: the train split of {no_train} is empty: no node to "
                        "iterate (graphtier info lists the splits)\n")


@pytest.mark.skipif(graphtier.cuda_available(), reason="this build has CUDA and a GPU: --gpu-sampling works here")
def test_gpu_sampling_without_cuda_names_the_option(cora):
    r = _train(cora, "--epochs", "1", "--quiet", "--gpu-sampling")
    assert r.returncode == 2, r.stderr
    assert r.stderr == ("python -m graphtier.train: error: gpu_sampling (--gpu-sampling) needs graphtier built with "
                        "CUDA (the 'cuda' preset) and a visible GPU; without them, leave it off to sample on the CPU\n")
