"""A typed dataset distributed: `graphtier partition` splits each node type's own table (its own dim
and dtype) across the process rows and `verify` checks it; on 2 and 4 Gloo ranks DistSampler draws
the typed minibatches NeighborLoader draws in one process and DistTypedFeatureFetcher gathers the
rows the single-process TypedFeatureStore serves (a tiny generated graph with tables of two widths
and dtypes and a type without one, and ACM, without features); `python -m graphtier.train
PARTITION --model rsage` on 2 ranks has the loss curve of one process accumulating the same two
minibatches per step."""

import hashlib
import json
import subprocess
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

import graphtier
from conftest import cli, run_cli
from dist_launch import describe, launch
from dist_util import spawn
from graphtier import train, training

FANOUTS = [4, 3]
RELATION_FANOUTS = {"paper:cites:paper": [2, -1]}  # one relation with its own fanouts, -1 all
SCHEMA = {
    "node_types": [{"name": "paper", "count": 400, "feature_dim": 12, "dtype": "float32"},
                   {"name": "author", "count": 300, "feature_dim": 6, "dtype": "float16"},
                   {"name": "inst", "count": 9}],
    "relations": [{"name": "paper:cites:paper", "degree": 3.0},
                  {"name": "paper:written_by:author", "degree": 2.0, "reverse": "writes"},
                  {"name": "author:affiliated_to:inst", "degree": 1.0, "reverse": "employs"}],
    "labelled_type": "paper", "num_classes": 3}


@pytest.fixture(scope="module")
def tiny_typed(tmp_path_factory) -> str:
    root = tmp_path_factory.mktemp("typed")
    schema = root / "schema.json"
    schema.write_text(json.dumps(SCHEMA))
    run_cli("generate", "--schema", str(schema), "--seed", "2", "-o", str(root / "g"))
    return str(root / "g")


def _partition(source: str, out: Path, ranks: int, replication: int = 1) -> str:
    run_cli("partition", "-d", source, "-o", str(out), "--ranks", str(ranks), "--replication", str(replication))
    return str(out)


@pytest.mark.parametrize("ranks, replication", [(2, 1), (4, 2), (4, 1)])
def test_partition_splits_each_type_table(tiny_typed, tmp_path, ranks, replication):
    part = _partition(tiny_typed, tmp_path / "p", ranks, replication)
    source = graphtier.Dataset(tiny_typed)
    top = json.loads(Path(part, "partition.json").read_text())
    assert "feature_bounds" not in top and top["hot_rows"] == 0
    bounds = top["type_feature_bounds"]
    assert [(b[0], b[-1]) for b in bounds] == list(source.node_type_ranges.values())
    covered = {t: [] for t in source.node_types}
    for k in range(ranks):
        row = k // replication
        features = graphtier.Dataset(str(Path(part, f"rank-{k:04d}", "features")))
        assert features.node_types == source.node_types and features.num_edges == 0
        assert features.node_type_feature_dims == source.node_type_feature_dims
        for t, b in zip(source.node_types, bounds):
            lo, hi = b[row], b[row + 1]
            first = source.node_type_ranges[t][0]
            assert features.node_type_ranges[t][1] - features.node_type_ranges[t][0] == hi - lo
            covered[t] += list(range(lo, hi)) if k % replication == 0 else []
            if t == "inst":  # no table: nothing stored, nothing to compare
                continue
            mine, want = features.type_features(t), source.type_features(t)[lo - first:hi - first]
            assert mine.dtype == want.dtype and torch.equal(mine, want), (k, t)
    for t, (lo, hi) in source.node_type_ranges.items():
        assert sorted(covered[t]) == list(range(lo, hi))  # every row held by one process row
    verified = subprocess.run([cli(), "verify", part], capture_output=True, text=True)
    assert verified.returncode == 0, verified.stderr
    for sub in ("graph", "features"):  # each a dataset of its own, typed
        info = subprocess.run([cli(), "info", str(Path(part, "rank-0000", sub))], capture_output=True, text=True)
        assert info.returncode == 0 and "paper" in info.stdout, info.stderr


def test_partition_refuses_what_a_typed_dataset_does_not_support(tiny_typed, tmp_path):
    for option, message in ((["--hot-replicated", "5%"], "does not replicate per-type rows yet"),
                            (["--balance", "hotness"], "does not split per-type tables yet")):
        failed = subprocess.run([cli(), "partition", "-d", tiny_typed, "-o", str(tmp_path / "p"), "--ranks", "2",
                                 *option], capture_output=True, text=True)
        assert failed.returncode != 0 and message in failed.stderr, failed.stderr


def _digest(batch, x_dict) -> str:
    h = hashlib.sha256()
    for t in (batch.seeds, batch.y):
        h.update(t.numpy().tobytes())
    for block in batch.typed_blocks:
        for t in sorted(block.src_nodes):
            h.update(t.encode() + block.src_nodes[t].numpy().tobytes() + str(block.num_dst[t]).encode())
        for r in sorted(block.relations):
            rb = block.relations[r]
            h.update(r.encode() + rb.indptr.numpy().tobytes() + rb.indices.numpy().tobytes())
    for t in sorted(x_dict):
        h.update(t.encode() + str(x_dict[t].dtype).encode() + x_dict[t].contiguous().view(torch.uint8).numpy().tobytes())
    return h.hexdigest()


def _typed_batches_on_rank(rank: int, world: int, jobs: list) -> list:
    """Per (partition directory, relation_fanouts) in `jobs`: {(epoch, index): digest} of the
    minibatches this rank samples in epochs 0 and 1, with the features it gathers."""
    from graphtier.distributed import Partition, ProcessGrid
    from graphtier.distributed.features import DistTypedFeatureFetcher
    from graphtier.distributed.sampler import DistSampler

    results = []
    for partition_dir, relation_fanouts in jobs:
        partition = Partition.open(partition_dir, rank)
        grid = ProcessGrid(world, partition.replication, rank)
        sampler = DistSampler(partition, grid, "neighbor", FANOUTS, batch_size=48, seed=5,
                              relation_fanouts=relation_fanouts)
        fetcher = DistTypedFeatureFetcher(partition, grid)
        out = {}
        for epoch in (0, 1):
            for batch in sampler.epoch(epoch):
                x_dict = fetcher.gather_batch(batch)  # a rank without a minibatch still takes part
                if batch is not None:
                    out[(epoch, batch.index)] = _digest(batch, x_dict)
        results.append(out)
    return results


def _one_process(source: str, relation_fanouts: dict) -> dict:
    ds = graphtier.Dataset(source)
    store = graphtier.TypedFeatureStore(ds) if any(ds.node_type_feature_dims) else None
    loader = graphtier.NeighborLoader(ds, FANOUTS, 48, split="train", seed=5, store=store,
                                      relation_fanouts=relation_fanouts)
    want = {}
    for epoch in (0, 1):
        loader.set_epoch(epoch)
        for batch in loader:
            want[(epoch, batch.index)] = _digest(batch, batch.x_dict or {})
    return want


def test_four_ranks_sample_and_gather_the_single_process_batches(tiny_typed, acm, tmp_path):
    """4 ranks, 2 process rows (each type's rows in two blocks, each held by two ranks): the tiny
    graph with its two tables and ACM without features (2 ranks: the training test below)."""
    sources = [(tiny_typed, RELATION_FANOUTS), (acm, {})]
    jobs = [(_partition(source, tmp_path / f"p{i}", 4, 2), fanouts) for i, (source, fanouts) in enumerate(sources)]
    got = [{} for _ in jobs]
    for saved in spawn(_typed_batches_on_rank, 4, jobs, timeout=90):
        for mine, batches in zip(got, saved):
            assert not set(batches) & set(mine)  # each minibatch on one rank
            mine.update(batches)
    for (source, fanouts), batches in zip(sources, got):
        want = _one_process(source, fanouts)
        assert len(want) >= 8 and batches == want, source


OPTIONS = ["--model", "rsage", "--epochs", "2", "--batch-size", "64", "--fanouts", "4,3", "--hidden", "16",
           "--threads", "1", "--no-eval", "--seed", "7"]


def _accumulated_reference(source: str, ranks: int):
    """One process: per step the mean loss of minibatches s * ranks .. s * ranks + ranks - 1 (fewer
    at an uneven last step), one optimiser step; the per-minibatch losses in batch order."""
    args = train.parse_args([source, *OPTIONS])
    torch.manual_seed(args.seed)
    ds = graphtier.Dataset(source)
    store = graphtier.TypedFeatureStore(ds)
    loader = train.make_loader(args, ds, store, "train", train=True)
    model = training.make_model(args, 0, ds.num_classes, ds)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)
    losses = []
    for epoch in range(args.epochs):
        model.train()
        batches = list(loader)
        for step in range(-(-len(batches) // ranks)):
            optimizer.zero_grad()
            chunk = batches[step * ranks:(step + 1) * ranks]
            for batch in chunk:
                x, batch = train.model_inputs(batch, args)
                torch.manual_seed(training.batch_seed(args.seed, epoch, batch.index))
                out = model(x, batch.typed_blocks)
                keep = batch.y >= 0
                loss = F.cross_entropy(out[keep], batch.y[keep])
                (loss / len(chunk)).backward()
                losses.append(float(loss.detach()))
            optimizer.step()
    return losses


def test_training_is_one_process_accumulating_the_ranks_minibatches(tiny_typed, tmp_path):
    part = _partition(tiny_typed, tmp_path / "p", 2)
    result = launch(2, ["-m", "graphtier.train", part, *OPTIONS, "--json", str(tmp_path / "run.json")], timeout=100)
    assert all(r.returncode == 0 for r in result), describe(result)
    got = [loss for _, loss in json.loads((tmp_path / "run.json").read_text())["batch_losses"]]
    want = _accumulated_reference(tiny_typed, 2)
    assert len(got) == len(want) >= 6
    assert got == pytest.approx(want, rel=1e-5)
