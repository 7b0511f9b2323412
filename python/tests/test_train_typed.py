"""`python -m graphtier.train` on a typed dataset: R-SAGE, R-GCN and R-GAT on ACM's papers
(datasets/acm, learned 64-d embeddings for every type: ACM has no features). The accuracy bound
comes from the five-seed measurement in docs/benchmarks.md ("Typed training: ACM")."""

import pytest

from conftest import run_cli
from graphtier import train

# The full two-hop neighbourhood and all 803 training papers in one batch: PyG's full-batch
# training (bench/train/acm_pyg_reference.py), so the figures compare with its own.
ACM_RUN = ["--fanouts=-1,-1", "--hidden", "64", "--batch-size", "1024", "--threads", "2", "--quiet"]


def test_rsage_on_acm_reaches_the_pyg_reference(acm):
    result = train.run(train.parse_args([acm, "--model", "rsage", "--epochs", "100", "--seed", "0", *ACM_RUN]))
    # Measured: 0.754 for this seed; 0.747 to 0.788 over seeds 0-4 (mean 0.766), PyG's
    # to_hetero(GraphSAGE) full batch 0.746 to 0.787 (mean 0.771) on this split. A point below the
    # lowest seed of either, for another PyTorch's last bits.
    assert result["test_acc"] >= 0.735, result["test_acc"]


@pytest.mark.parametrize("model", ["rgcn", "rgat"])
def test_rgcn_and_rgat_learn_acm(acm, model):
    result = train.run(train.parse_args([acm, "--model", model, "--epochs", "15", "--seed", "0", *ACM_RUN]))
    assert result["losses"][-1] < result["losses"][0]
    assert result["test_acc"] >= 0.6, result["test_acc"]  # three classes: chance is about 0.33


def test_model_and_dataset_must_match(acm, synthetic):
    with pytest.raises(ValueError, match=r"is a typed dataset \(node types p, a, s\): train it with --model "
                                         r"rsage\|rgcn\|rgat"):
        train.run(train.parse_args([acm, "--model", "sage", "--quiet"]))
    with pytest.raises(ValueError, match="--model rgat trains a typed dataset; .* has one node type"):
        train.run(train.parse_args([synthetic, "--model", "rgat", "--quiet"]))
    with pytest.raises(ValueError, match=r"relation_fanouts: unknown relation 'p:to:p'"):
        train.run(train.parse_args([acm, "--model", "rsage", "--relation-fanouts", "p:to:p=1,1", "--epochs", "1",
                                    "--quiet"]))


@pytest.fixture(scope="module")
def igbh_small(tmp_path_factory) -> str:
    """An IGBH-shaped graph (4 types, 8 relations) with 8-d features on every type."""
    path = str(tmp_path_factory.mktemp("igbh") / "igbh")
    run_cli("generate", "--schema", "igbh", "--nodes", "3000", "--feature-dim", "8", "--classes", "4", "--seed", "1",
            "-o", path)
    return path


@pytest.mark.parametrize("model", ["rsage", "rgcn", "rgat"])
def test_a_labelled_type_no_relation_enters_is_one_line_and_exit_2(tmp_path, capsys, model):
    # Only p -> a: the papers (labelled) have no in-neighbours unless the converter adds a:rev_to:p.
    (tmp_path / "edges.txt").write_text("".join(f"{p} {p % 3} p-a\n" for p in range(12)))
    (tmp_path / "labels.txt").write_text("".join(f"p{p} {p % 2}\n" for p in range(12)))
    run_cli("convert", "typed-edge-list", str(tmp_path / "edges.txt"), "--labels", str(tmp_path / "labels.txt"),
            "--split", "0.5,0.25", "--no-reverses", "--out", str(tmp_path / "one_way"))
    assert train.main([str(tmp_path / "one_way"), "--model", model, "--epochs", "1", "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err
    assert err.endswith("no relation ends at the labelled type p, so --model " + model + " would learn nothing from "
                        "its neighbours: convert it with each relation's reverse (graphtier convert typed-edge-list "
                        "adds them unless --no-reverses)")
    # Converted by default, the reverse is there and the same training runs.
    run_cli("convert", "typed-edge-list", str(tmp_path / "edges.txt"), "--labels", str(tmp_path / "labels.txt"),
            "--split", "0.5,0.25", "--out", str(tmp_path / "both_ways"))
    assert train.main([str(tmp_path / "both_ways"), "--model", model, "--epochs", "1", "--quiet",
                       "--fanouts", "2,2"]) == 0


def test_typed_baseline_reads_the_rows_the_store_serves(igbh_small):
    """--baseline on a typed dataset gathers each type's rows from its memory-mapped table in the
    training loop; the same seed then trains bit for bit as through graphtier's TypedFeatureStore."""
    run = [igbh_small, "--model", "rsage", "--fanouts", "4,3", "--batch-size", "128", "--epochs", "2", "--seed", "3",
           "--threads", "1", "--deterministic", "--no-eval", "--quiet"]
    store = train.run(train.parse_args(run))
    baseline = train.run(train.parse_args([*run, "--baseline"]))
    assert len(store["losses"]) >= 4  # two epochs of several batches
    assert baseline["losses"] == store["losses"]


def test_type_features_is_the_stored_table(igbh_small, acm):
    """Dataset.type_features views a type's mapped table: the rows TypedFeatureStore serves, in the
    type's own ids; a type without features or an unknown one is refused by name."""
    import graphtier
    import torch

    ds = graphtier.Dataset(igbh_small)
    begin, end = ds.node_type_ranges["author"]
    table = ds.type_features("author")
    assert tuple(table.shape) == (end - begin, 8)
    ids = torch.tensor([end - 1, begin, begin + 7], dtype=torch.int64)
    store = graphtier.TypedFeatureStore(ds, threads=1)
    assert torch.equal(table[ids - begin], store.gather("author", ids - begin))  # ids within the type
    with pytest.raises(ValueError, match="has no node type 'venue'"):
        ds.type_features("venue")
    with pytest.raises(ValueError, match="node type 'p' of .* has no features"):
        graphtier.Dataset(acm).type_features("p")
