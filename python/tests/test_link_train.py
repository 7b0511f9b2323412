"""python -m graphtier.train DATASET --task link: a short run on Cora learns (test AUC well above
chance), draws the split itself on a dataset without one, reproduces itself per seed, and refuses
bad options in one line."""

import json
import os
import subprocess
import sys

import pytest

import conftest

from graphtier import link_train, train

SHORT = ["--task", "link", "--model", "sage", "--exclude", "--epochs", "8", "--batch-size", "1024", "--fanouts", "10,10",
         "--hidden", "64",
         "--out", "32", "--eval-negatives", "20", "--normalize-features", "--torch-threads", "2"]


def test_a_short_run_learns_and_repeats_itself(cora, tmp_path):
    # `cora` has no link split: the job draws one (split-links defaults, seeded by --seed). One
    # PyTorch thread: with two, PyTorch 1.13's CPU kernels changed the fifth digit of the AUC in about
    # one run of five in one process (the batches are the same; measured with 8 epochs, 5 runs).
    out = tmp_path / "run.json"
    one_thread = [*SHORT, "--torch-threads", "1"]
    assert train.main([cora, *one_thread, "--seed", "1", "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    result = report["result"]
    assert len(report["history"]) == 8
    assert report["history"][-1]["loss"] < report["history"][0]["loss"]
    # Chance is 0.5 (AUC) and about 0.18 (MRR with 20 negatives); 8 short epochs reach well above.
    assert result["test_auc"] > 0.7, result
    assert result["test_mrr"] > 0.25, result
    assert 0 <= result["test_hits@10"] <= 1
    again = link_train.run(link_train.parse_args([cora, *one_thread, "--seed", "1"]))
    assert again == result


def test_link_options_are_refused_in_one_line(cora):
    r = subprocess.run([sys.executable, "-m", "graphtier.train", cora, "--task", "link", "--fanouts", "x"],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "--fanouts" in r.stderr
    r = subprocess.run([sys.executable, "-m", "graphtier.train", cora, "--task", "link", "--model", "ladies"],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "--model" in r.stderr
    r = subprocess.run([sys.executable, "-m", "graphtier.train", cora, "--task", "link", "--help"],
                       capture_output=True, text=True)
    assert r.returncode == 0 and "--decoder" in r.stdout and "(default: dot)" in r.stdout


def test_gcn_over_full_neighbourhoods_is_the_full_graph_gcn(cora):
    # The link task's --model gcn: over fanouts -1,-1 with every edge kept, its blocks compute the
    # dense full-graph GCN, D^-1/2 (A + I) D^-1/2 X W per layer, at the seeds.
    import torch
    import graphtier
    from graphtier import link
    from graphtier.models import GCN

    torch.manual_seed(0)
    ds = graphtier.Dataset(cora)
    edges = link.all_edges(ds)
    degree = GCN.degrees(edges, ds.num_nodes)
    model = GCN(ds.feature_dim, 16, 8, 2, dropout=0.0).double()
    pairs = edges[:, torch.randperm(edges.shape[1])[:64]]
    loader = graphtier.LinkNeighborLoader(ds, [-1, -1], 64, edges=pairs, exclude_seed_edges=False,
                                          ids_numbering="prepared")
    batch = next(iter(loader))
    got = model(batch.x.double(), batch.blocks, degree)

    n = ds.num_nodes
    adjacency = torch.zeros(n, n, dtype=torch.float64)
    ones = torch.ones(edges.shape[1], dtype=torch.float64)
    adjacency.index_put_((edges[1], edges[0]), ones, accumulate=True)  # row: destination
    adjacency += torch.eye(n, dtype=torch.float64)
    scale = degree.double().rsqrt()
    norm = scale.unsqueeze(1) * adjacency * scale.unsqueeze(0)
    x = graphtier.FeatureStore(ds).gather(torch.arange(n)).double()
    c1, c2 = model.convs
    h = torch.relu(norm @ (x @ c1.lin.weight.t()) + c1.bias)
    want = (norm @ (h @ c2.lin.weight.t()) + c2.bias)[batch.seeds]
    assert torch.allclose(got, want, atol=1e-9), (got - want).abs().max()


def test_the_defaults_are_the_documented_setting():
    # docs/benchmarks.md's Cora figure (test AUC 0.905) names these flags; the defaults are them, so
    # `--task link` alone trains that setting (before: GraphSAGE with seed-edge exclusion, 0.872).
    defaults = vars(link_train.parse_args(["ds", "--task", "link"]))
    documented = vars(link_train.parse_args(["ds", "--task", "link", "--model", "gcn", "--no-exclude",
                                             "--batch-size", "8192", "--eval-negatives", "20"]))
    assert defaults == documented
    assert {k: defaults[k] for k in link_train.DEFAULTS} == link_train.DEFAULTS
    # The small sampled setting turns exclusion on by name; temporal runs default to GraphSAGE and
    # take neither exclusion flag (their trees see no later edge).
    assert link_train.parse_args(["ds", "--task", "link", "--exclude"]).exclude is True
    timed = link_train.parse_args(["ds", "--task", "link", "--time-attr", "edge_time"])
    assert (timed.model, timed.exclude) == ("sage", False)
    for flag in ("--exclude", "--no-exclude"):
        with pytest.raises(SystemExit):
            link_train.parse_args(["ds", "--task", "link", "--time-attr", "edge_time", flag])


def test_the_help_says_what_each_flag_does(cora):
    r = subprocess.run([sys.executable, "-m", "graphtier.train", cora, "--task", "link", "--help"],
                       capture_output=True, text=True)
    text = " ".join(r.stdout.split())
    # Before: "--no-exclude keep each batch's supervision edges in its message passing (default:
    # True)", read as keeping being the default when excluding was.
    assert "--exclude, --no-exclude --exclude: leave each training batch's own edges" in text
    assert "(default: --no-exclude;" in text and "(default: True)" not in text
    assert "(default: gcn; with --time-attr sage)" in text
    assert "--batch-size BATCH_SIZE training edges per minibatch" in text and "(default: 8192)" in text


def test_a_typed_dataset_is_refused_in_one_line(acm):
    # Before: split-links refused it in a subprocess and the job ended in a CalledProcessError traceback.
    for command in ([sys.executable, "-m", "graphtier.train"], [conftest.cli(), "train"]):
        r = subprocess.run([*command, acm, "--task", "link"], capture_output=True, text=True,
                           env=dict(os.environ, GRAPHTIER_PYTHON=sys.executable))
        assert r.returncode == 2, r.stderr
        assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr, r.stderr
        assert f"{acm} is a typed dataset (node types p, a, s): link prediction" in r.stderr


def test_a_dataset_without_features_is_refused_before_a_split_is_drawn(tmp_path, monkeypatch):
    conftest.run_cli("generate", "--out", str(tmp_path / "g"), "--nodes", "100", "--edges", "400", "--no-features",
                     "--classes", "2", "--seed", "1")
    drawn = []
    monkeypatch.setattr(link_train.subprocess, "run", lambda *a, **k: drawn.append(a))
    with pytest.raises(ValueError, match=f"{tmp_path / 'g'} has no features to encode"):
        link_train._ensure_split(str(tmp_path / "g"), 0, str(tmp_path))
    assert not drawn


def test_a_split_that_cannot_be_drawn_is_one_line(tmp_path, monkeypatch):
    # Whatever split-links refuses reaches the user as its own line in a ValueError, not as a
    # CalledProcessError: here a `graphtier` that fails as the real one does.
    import graphtier

    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "graphtier").write_text("#!/bin/sh\necho 'graphtier: error: no room on the device' >&2\nexit 2\n")
    (fake / "graphtier").chmod(0o755)
    monkeypatch.setattr(link_train.os.path, "dirname", lambda _: str(fake))
    fields = {"node_types": [], "feature_dim": 8, "edge_time": None}
    monkeypatch.setattr(graphtier, "Dataset", lambda path: type("D", (), {**fields, "path": path})())
    monkeypatch.setattr(link_train.link, "link_split", lambda ds: None)
    with pytest.raises(ValueError, match="ds has no seed edges and `graphtier split-links` could not draw them: "
                                         "graphtier: error: no room on the device"):
        link_train._ensure_split("ds", 0, str(tmp_path))
