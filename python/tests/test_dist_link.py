"""Distributed link prediction (graphtier.distributed.link_train under `python -m graphtier.train
PARTITION_DIR --task link`, 2 Gloo processes): its loss curve is that of one process accumulating
the gradients of the same 2 link minibatches per step (the ranks draw the one-process batches, the
uneven last step included), its validation AUC/MRR per epoch are the one-process figures of that
model, and what it cannot train is refused on every rank in one line."""

import json
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

import graphtier
from conftest import run_cli
from dist_launch import as_a_rank, describe, launch
from graphtier import link_train

# As test_dist_train.py: two gradients summed in another order are the same sum.
LOSS_RTOL = 1e-6
OPTIONS = ["--task", "link", "--epochs", "2", "--batch-size", "800", "--eval-batch-size", "500", "--fanouts", "5,5",
           "--hidden", "16", "--out", "8", "--eval-negatives", "10", "--threads", "1", "--seed", "5"]


@pytest.fixture(scope="module")
def links(synthetic, tmp_path_factory) -> str:
    out = tmp_path_factory.mktemp("dist-link") / "links"
    run_cli("split-links", "-d", synthetic, "-o", str(out), "--val", "0.05", "--test", "0.1", "--seed", "2")
    return str(out)


def _partition(source: str, out: Path, graph: str = "replicated") -> str:
    run_cli("partition", "-d", source, "-o", str(out), "--ranks", "2", "--replication", "1", "--graph", graph)
    return str(out)


def _reference(source: str, ranks: int):
    """One process: per step, minibatches s * ranks .. s * ranks + ranks - 1 of the epoch (fewer at
    its uneven last step), each loss divided by their count, backward, one optimiser step; after each
    epoch the validation figures. Per-minibatch losses in batch order and the figures per epoch."""
    args = link_train.parse_args([source, *OPTIONS])
    torch.manual_seed(args.seed)
    ds = graphtier.Dataset(source)
    store = graphtier.FeatureStore(ds, threads=1)
    encoder, encode = link_train.make_encoder(args.model, ds, ds.feature_dim, args, len(args.fanouts),
                                              torch.device("cpu"))
    decoder = link_train.Decoder(args.decoder, args.out)
    optimiser = torch.optim.Adam(list(encoder.parameters()) + list(decoder.parameters()), lr=args.lr)
    loader = graphtier.LinkNeighborLoader(ds, args.fanouts, args.batch_size, edges="train", negatives="binary",
                                          exclude_seed_edges=args.exclude, shuffle=True, seed=args.seed, store=store)
    losses, figures = [], []
    for epoch in range(args.epochs):
        encoder.train()
        decoder.train()
        batches = list(loader)
        assert [b.index for b in batches] == list(range(len(loader)))
        for step in range(-(-len(batches) // ranks)):
            optimiser.zero_grad()
            chunk = batches[step * ranks:(step + 1) * ranks]
            for b in chunk:
                h = encode(b.x.float(), b.blocks)
                loss = F.binary_cross_entropy_with_logits(decoder(h[b.label_index[0]], h[b.label_index[1]]), b.label)
                (loss / len(chunk)).backward()
                losses.append(float(loss.detach()))
            optimiser.step()
        figures.append(link_train.evaluate(encoder, encode, decoder, ds, store, "val", args, args.fanouts))
    return losses, figures, len(loader)


def test_loss_curve_and_figures_equal_one_process_accumulating_two_minibatches(links, tmp_path):
    part = _partition(links, tmp_path / "p2")
    out = tmp_path / "run.json"
    result = launch(2, ["-m", "graphtier.train", part, *OPTIONS, "--json", str(out)], timeout=150)
    assert all(r.returncode == 0 for r in result), describe(result)
    got = json.loads(out.read_text())
    with as_a_rank():  # the ranks' floats: the same threads add in the same order
        want, figures, num_batches = _reference(links, 2)
    # An odd number of training minibatches: the last step is uneven (rank 1 adds zeros).
    assert num_batches % 2 == 1, num_batches
    assert [b for b, _ in got["result"]["batch_losses"]] == list(range(num_batches)) * 2
    assert len(got["result"]["losses"]) == len(want)
    assert torch.allclose(torch.tensor(got["result"]["losses"], dtype=torch.float64),
                          torch.tensor(want, dtype=torch.float64), rtol=LOSS_RTOL, atol=0), (got["result"]["losses"], want)
    # Each rank scores its share of the validation minibatches; gathered, they are the one process's.
    for epoch, want_figures in zip(got["history"], figures):
        for key, value in want_figures.items():
            assert epoch[f"val_{key}"] == pytest.approx(value, rel=1e-6, abs=1e-9), (key, epoch, want_figures)
    assert figures[-1]["auc"] > 0.6  # it learns: chance is 0.5
    lines = result[0].stdout.splitlines()
    assert [line.split()[:2] for line in lines[-3:]] == [["epoch", "0"], ["epoch", "1"], ["test", "auc"]], lines
    assert result[1].stdout.strip() == ""  # rank 0 reports


def test_what_it_cannot_train_is_refused_on_every_rank(synthetic, links, tmp_path):
    for source, graph, words in [(links, "partitioned", "--graph replicated"), (synthetic, "replicated", "split-links")]:
        part = _partition(source, tmp_path / f"{graph}-{Path(source).name}", graph)
        result = launch(2, ["-m", "graphtier.train", part, *OPTIONS], timeout=60)
        assert all(r.returncode == 2 for r in result), describe(result)
        assert all(words in r.stderr for r in result), describe(result)
