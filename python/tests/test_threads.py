"""The division of the cores between graphtier's engine and PyTorch (graphtier.threads):
the rule, its overrides, and PyTorch's and OpenBLAS's threads set within a job and restored after."""

import argparse

import pytest
import torch

import graphtier
from graphtier import threads


def test_the_rule_halves_the_cores_and_every_share_has_a_thread():
    shares = [(d.engine, d.torch) for d in (threads.divide(cores, environ={}) for cores in (1, 2, 3, 16))]
    assert shares == [(1, 1), (1, 1), (1, 2), (8, 8)]
    assert "rule" in threads.divide(16, environ={}).engine_source


def test_overrides_come_from_the_options_then_omp_num_threads():
    d = threads.divide(16, 3, 0, environ={})
    assert (d.engine, d.torch, d.engine_source, d.torch_source) == (3, 13, "--threads", "rule: the other cores")
    d = threads.divide(16, 0, 5, environ={"OMP_NUM_THREADS": "1"})
    assert (d.engine, d.torch, d.torch_source) == (8, 5, "--torch-threads")
    d = threads.divide(16, environ={"OMP_NUM_THREADS": "1"})  # torchrun's
    assert (d.engine, d.torch, d.torch_source) == (8, 1, "OMP_NUM_THREADS")
    for unusable in ("", "0", "four"):
        assert threads.divide(16, environ={"OMP_NUM_THREADS": unusable}).torch == 8
    assert str(threads.divide(4, environ={})) == \
        "threads: engine 2 (rule: half the cores), PyTorch 2 (rule: the other cores), 4 cores"


def test_a_rank_divides_its_share_of_the_cores(monkeypatch):
    monkeypatch.setattr(threads, "available_cores", lambda: 16)
    args = argparse.Namespace(threads=0, torch_threads=0)
    d = threads.of_rank_arguments(args, environ={"LOCAL_WORLD_SIZE": "4", "OMP_NUM_THREADS": "1"})
    assert (d.cores, d.engine, d.torch, d.torch_source) == (4, 2, 1, "OMP_NUM_THREADS")
    d = threads.of_rank_arguments(args, environ={"LOCAL_WORLD_SIZE": "32"})  # more ranks than cores
    assert (d.cores, d.engine, d.torch) == (1, 1, 1)
    d = threads.of_rank_arguments(argparse.Namespace(threads=3, torch_threads=0), environ={})
    assert (d.cores, d.engine, d.engine_source) == (16, 3, "--threads")


def test_a_job_sets_pytorch_and_openblas_threads_and_restores_them():
    blas = threads.openblas_libraries()
    before = torch.get_num_threads(), [lib.openblas_get_num_threads() for lib in blas]
    want = before[0] + 1
    with threads.torch_threads(threads.divide(4, 1, want, environ={})):
        assert torch.get_num_threads() == want
        assert [lib.openblas_get_num_threads() for lib in blas] == [want] * len(blas)
    assert (torch.get_num_threads(), [lib.openblas_get_num_threads() for lib in blas]) == before


def test_a_script_divides_the_cores_for_the_loaders_and_stores_made_after_it(cora, monkeypatch, capsys):
    blas = threads.openblas_libraries()
    before = torch.get_num_threads(), [lib.openblas_get_num_threads() for lib in blas]
    monkeypatch.setattr(threads, "available_cores", lambda: 6)
    monkeypatch.setattr(threads, "_script_division", None)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    make = lambda **kw: graphtier.NeighborLoader(cora, [5], 8, split="train", features=False, **kw)  # noqa: E731
    try:
        assert make().options.sample_threads == 0  # no division asked for: the engine's default
        division = graphtier.divide_threads()
        assert (division.engine, division.torch) == (3, 3)
        assert capsys.readouterr().out == \
            "threads: engine 3 (rule: half the cores), PyTorch 3 (rule: the other cores), 6 cores\n"
        assert torch.get_num_threads() == 3
        assert [lib.openblas_get_num_threads() for lib in blas] == [3] * len(blas)
        assert make().options.sample_threads == 3
        assert make(sample_threads=1).options.sample_threads == 1  # an explicit count wins
        assert (threads.engine_threads(0), threads.engine_threads(5)) == (3, 5)  # a store's threads=
        division = graphtier.divide_threads(2, 1, quiet=True)
        assert (division.engine, division.torch, division.engine_source) == (2, 1, "--threads")
        assert capsys.readouterr().out == ""
        assert make().options.sample_threads == 2 and torch.get_num_threads() == 1
        with pytest.raises(ValueError, match="must be >= 0"):
            graphtier.divide_threads(-1)
    finally:
        torch.set_num_threads(before[0])
        for lib, count in zip(blas, before[1]):
            lib.openblas_set_num_threads(count)
