"""Temporal link prediction end to end: `graphtier generate --time-steps` makes a growing graph,
`graphtier split-links --by-time` holds out its latest edges with their times, and
`python -m graphtier.train --task link --time-attr` learns it while every edge its batches sample
is earlier than the edge the batch predicts."""

import json

import pytest
import torch

import graphtier
from graphtier import link, link_train, train

from conftest import run_cli

SHORT = ["--task", "link", "--epochs", "8", "--decoder", "mlp", "--batch-size", "512", "--fanouts", "10,5", "--hidden", "32",
         "--out", "32", "--eval-negatives", "20", "--torch-threads", "1"]


@pytest.fixture(scope="module")
def timed(tmp_path_factory) -> str:
    """A 3000-node growing graph over 100 steps, split by time (the latest 10% of its edges test)."""
    root = tmp_path_factory.mktemp("timed")
    run_cli("generate", "--out", str(root / "g"), "--nodes", "3000", "--edges", "30000", "--feature-dim", "16",
            "--classes", "4", "--seed", "2", "--class-separation", "1.5", "--time-steps", "100")
    run_cli("split-links", "-d", str(root / "g"), "-o", str(root / "split"), "--by-time", "--seed", "1")
    run_cli("split-links", "-d", str(root / "g"), "-o", str(root / "disjoint"), "--by-time", "--seed", "1",
            "--disjoint", "0.3")
    return str(root / "split")


def disjoint_of(timed: str) -> str:
    """The same graph split by time with 30% of the training edges for supervision only."""
    return timed[: -len("split")] + "disjoint"


def test_split_carries_times_and_holds_out_the_latest(timed):
    ds = graphtier.Dataset(timed)
    assert link.link_split(ds)["by_time"] is True
    times = {s: link.link_edge_time(ds, s) for s in ("train", "val", "test")}
    for s, t in times.items():
        assert t.shape == (link.link_edges(ds, s).shape[1],), s
    assert int(times["val"].max()) <= int(times["test"].min())
    assert int(times["train"].max()) <= int(times["val"].min())
    # Each seed edge's time is the later of its endpoints' arrivals (the generator's invariant).
    for s, t in times.items():
        e = link.link_edges(ds, s)
        assert torch.equal(t, torch.maximum(ds.node_time[e[0]], ds.node_time[e[1]])), s
    # The message-passing CSC kept its entries' times: no entry is later than the training edges.
    assert ds.edge_time.numel() == ds.num_edges and int(ds.edge_time.max()) <= int(times["val"].min())


@pytest.mark.parametrize("time_attr", ["edge_time", "node_time"])
def test_every_sampled_edge_is_earlier_than_its_batch_edge(timed, time_attr):
    # Node times need a disjoint split (link_train._temporal): they bound neighbours, not edges.
    path = timed if time_attr == "edge_time" else disjoint_of(timed)
    ds = graphtier.Dataset(path)
    args = link_train.parse_args([path, *SHORT, "--time-attr", time_attr])
    loader = graphtier.LinkNeighborLoader(ds, [10, 5], 256, edges="train", negatives="binary", shuffle=True,
                                          seed=3, prefetch=0, **link_train._temporal(ds, "train", args))
    edge_time, node_time = ds.edge_time, ds.node_time
    label_time = link.link_edge_time(ds, "train")
    checked = 0
    for batch in loader:
        # The seed times are the positives' times minus one: predicted from strictly before.
        positives = batch.seed_time[:batch.input_id.numel()]
        assert torch.equal(positives, label_time[batch.input_id] - 1)
        for block in batch.blocks:
            dst = torch.repeat_interleave(torch.arange(block.num_dst), block.indptr[1:] - block.indptr[:-1])
            bound = batch.seed_time[block.src_trees[dst]]
            if time_attr == "edge_time":
                assert bool((edge_time[block.edge_ids] <= bound).all())
                # So strictly earlier than the positive's own time: the edge itself is never seen.
                positive = block.src_trees[dst] % batch.input_id.numel()
                assert bool((edge_time[block.edge_ids] < label_time[batch.input_id][positive]).all())
            else:
                assert bool((node_time[block.src_nodes[block.indices]] <= bound).all())
            checked += int(block.indices.numel())
    assert checked > 1000  # the check saw edges, not empty trees


def test_a_short_temporal_run_learns(timed, tmp_path):
    out = tmp_path / "run.json"
    assert train.main([timed, *SHORT, "--time-attr", "edge_time", "--seed", "1", "--json", str(out)]) == 0
    result = json.loads(out.read_text())["result"]
    # Chance is 0.5 (AUC); the graph before t, with the features, predicts the edges after it.
    assert result["test_auc"] > 0.75, result
    assert result["test_mrr"] > 0.3, result  # chance: about 0.18 with 20 negatives


def test_temporal_options_are_checked(timed, cora):
    with pytest.raises(SystemExit):
        link_train.parse_args([timed, "--task", "link", "--time-attr", "year"])
    with pytest.raises(SystemExit):
        link_train.parse_args([timed, "--task", "link", "--time-attr", "edge_time", "--model", "gcn"])
    with pytest.raises(ValueError, match="--disjoint"):
        link_train.run(link_train.parse_args([timed, *SHORT, "--time-attr", "node_time"]))
    # Cora has no times: its split carries none, and the run says so.
    with pytest.raises(ValueError, match="carries no edge times"):
        link_train.run(link_train.parse_args([cora, *SHORT, "--time-attr", "edge_time"]))
