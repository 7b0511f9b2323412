"""Conversion from Python (graphtier.convert) against the `graphtier convert` command, and the
`graphtier` command that pip install . puts into the environment's bin/."""

import gzip
import importlib
import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import numpy as np
import pytest

import graphtier.convert
from conftest import DATASETS, cli

EDGES = np.array([[0, 1], [1, 2], [2, 0], [3, 4], [4, 5], [5, 3], [0, 3], [3, 3], [1, 2]], dtype=np.int64)
N = 6


def installed_command() -> str:
    """The graphtier command pip installed with this package: in this interpreter's scripts
    directory (a virtual environment's bin/), else on PATH."""
    path = Path(sysconfig.get_path("scripts")) / "graphtier"
    if path.is_file():
        return str(path)
    found = shutil.which("graphtier")
    if found is None:
        pytest.fail(f"pip install . did not install the graphtier command (not in {path.parent}, not on PATH)")
    return found


def run_json(*args: str) -> dict:
    done = subprocess.run([cli(), "-q", "--json", *args], check=True, capture_output=True, text=True)
    return json.loads(done.stdout)


def files_of(directory) -> dict:
    return {p.name: p.read_bytes() for p in sorted(Path(directory).iterdir())}


def same_dataset(cli_report: dict, py_report: dict, cli_dir, py_dir) -> None:
    """Byte-identical dataset files (the manifest names the dataset as its directory's name, so both
    directories have the same base name), and the same report but for the path and the timings."""
    assert Path(cli_dir).name == Path(py_dir).name
    assert files_of(cli_dir) == files_of(py_dir)
    for report in (cli_report, py_report):
        report.pop("seconds")
        report.pop("dataset")
    assert py_report == cli_report


@pytest.fixture
def outs(tmp_path):
    (tmp_path / "cli").mkdir()
    (tmp_path / "py").mkdir()
    return tmp_path / "cli" / "g", tmp_path / "py" / "g"


def test_edge_list_matches_the_command(tmp_path, outs):
    path = tmp_path / "edges.txt.gz"
    with gzip.open(path, "wt") as f:
        f.write("# a comment\n" + "".join(f"{s},{d},0.5\n" for s, d in EDGES))
    cli_out, py_out = outs
    cli_report = run_json("convert", "edge-list", str(path), "--allow-extra-columns", "--symmetrize",
                          "--num-nodes", "8", "-o", str(cli_out))
    py_report = graphtier.convert.edge_list(path, py_out, allow_extra_columns=True, symmetrize=True, num_nodes=8)
    assert py_report["num_nodes"] == 8 and py_report["format"] == cli_report["format"]
    same_dataset(cli_report, py_report, cli_out, py_out)


def test_typed_edge_list_matches_the_command_and_names_its_types(tmp_path, outs):
    acm = DATASETS / "acm"
    cli_out, py_out = outs
    cli_report = run_json("convert", "typed-edge-list", str(acm / "edge.txt.gz"), "--labels", str(acm / "label.txt.gz"),
                          "--split", "0.2,0.1", "--seed", "3", "-o", str(cli_out))
    py_report = graphtier.convert.typed_edge_list(acm / "edge.txt.gz", py_out, labels=acm / "label.txt.gz",
                                                  split="0.2,0.1", seed=3)
    assert py_report["node_types"] == 3 and py_report["relations"] == 4
    same_dataset(cli_report, py_report, cli_out, py_out)

    d = graphtier.Dataset(str(py_out))
    assert d.is_hetero
    assert d.node_types == ["p", "a", "s"]
    assert d.node_type_ranges == {"p": (0, 4019), "a": (4019, 11186), "s": (11186, 11246)}
    assert d.relations == ["p:to:a", "a:to:p", "p:to:s", "s:to:p"]
    assert d.reverse_relations == [1, 0, 3, 2]
    assert d.labelled_type == "p"
    train = d.split("train")
    assert list(train) == ["p"]  # ids within the labelled type (docs/architecture.md, "Node ids and their numberings")
    assert len(train["p"]) == 803 and bool(((train["p"] >= 0) & (train["p"] < 4019)).all())
    with pytest.raises(ValueError, match="labels.txt:1"):
        (tmp_path / "labels.txt").write_text("p 0\n")
        graphtier.convert.typed_edge_list(acm / "edge.txt.gz", tmp_path / "bad", labels=tmp_path / "labels.txt")


def test_typed_edge_list_adds_missing_reverses_unless_told_not_to(tmp_path):
    # ACM lists each relation both ways: nothing is added. One way only: a:rev_to:p is.
    assert graphtier.convert.typed_edge_list(DATASETS / "acm" / "edge.txt.gz", tmp_path / "acm")["added_reverses"] == []
    (tmp_path / "e.txt").write_text("0 0 p-a\n1 0 p-a\n")
    report = graphtier.convert.typed_edge_list(tmp_path / "e.txt", tmp_path / "both")
    assert report["added_reverses"] == ["a:rev_to:p"]
    d = graphtier.Dataset(str(tmp_path / "both"))
    assert d.relations == ["p:to:a", "a:rev_to:p"] and d.reverse_relations == [1, 0]
    report = graphtier.convert.typed_edge_list(tmp_path / "e.txt", tmp_path / "one", reverses=False)
    assert report["added_reverses"] == [] and graphtier.Dataset(str(tmp_path / "one")).relations == ["p:to:a"]


def test_a_homogeneous_dataset_has_no_types(tmp_path):
    path = tmp_path / "edges.txt"
    path.write_text("0 1\n1 2\n")
    graphtier.convert.edge_list(path, tmp_path / "g")
    d = graphtier.Dataset(str(tmp_path / "g"))
    assert not d.is_hetero
    assert d.node_types == [] and d.relations == [] and d.node_type_ranges == {} and d.labelled_type is None


def test_npy_matches_the_command(tmp_path, outs):
    rng = np.random.default_rng(0)
    np.save(tmp_path / "edge_index.npy", EDGES)  # [E, 2]
    np.save(tmp_path / "features.npy", rng.standard_normal((N, 5)).astype(np.float64))
    np.save(tmp_path / "labels.npy", np.array([0, 1, -1, 2, 1, 0]))
    np.save(tmp_path / "train.npy", np.array([True, False, True, False, False, False]))
    np.save(tmp_path / "test.npy", np.array([4, 5]))
    cli_out, py_out = outs
    cli_report = run_json("convert", "npy", "--edge-index", str(tmp_path / "edge_index.npy"), "--edge-layout", "Ex2",
                          "--features", str(tmp_path / "features.npy"), "--labels", str(tmp_path / "labels.npy"),
                          "--train", str(tmp_path / "train.npy"), "--test", str(tmp_path / "test.npy"),
                          "--dtype", "float16", "--align", "512", "--keep-self-loops", "-o", str(cli_out))
    py_report = graphtier.convert.npy(tmp_path / "edge_index.npy", py_out, edge_layout="Ex2",
                                      features=tmp_path / "features.npy", labels=tmp_path / "labels.npy",
                                      train=tmp_path / "train.npy", test=tmp_path / "test.npy", dtype="float16",
                                      align=512, keep_self_loops=True)
    assert py_report["feature_dtype"] == "float16" and py_report["splits"] == {"train": 2, "valid": 0, "test": 2}
    same_dataset(cli_report, py_report, cli_out, py_out)


def test_ogb_matches_the_command(tmp_path, outs):
    root = tmp_path / "ogbn_tiny"
    (root / "raw").mkdir(parents=True)
    (root / "split" / "time").mkdir(parents=True)

    def gz(path, text):
        with gzip.open(path, "wt") as f:
            f.write(text)

    gz(root / "raw" / "edge.csv.gz", "".join(f"{s},{d}\n" for s, d in EDGES))
    gz(root / "raw" / "num-node-list.csv.gz", f"{N}\n")
    gz(root / "raw" / "num-edge-list.csv.gz", f"{len(EDGES)}\n")
    gz(root / "raw" / "node-feat.csv.gz", "".join(f"{i},{i * 0.5},-1\n" for i in range(N)))
    gz(root / "raw" / "node-label.csv.gz", "3\n0\n1\nnan\n2\n1\n")
    gz(root / "split" / "time" / "train.csv.gz", "0\n2\n1\n")
    gz(root / "split" / "time" / "valid.csv.gz", "4\n")
    gz(root / "split" / "time" / "test.csv.gz", "5\n3\n")
    cli_out, py_out = outs
    cli_report = run_json("convert", "ogb", "--root", str(root), "--format", "csv", "--name", "tiny",
                          "--memory-budget", "1KiB", "-o", str(cli_out))
    py_report = graphtier.convert.ogb(root, py_out, format="csv", name="tiny", memory_budget="1KiB", threads=2)
    assert py_report["format"] == "ogb (csv)" and py_report["num_classes"] == 4
    same_dataset(cli_report, py_report, cli_out, py_out)


def test_igb_matches_the_command(tmp_path, outs):
    processed = tmp_path / "igb" / "experimental" / "processed"
    (processed / "paper__cites__paper").mkdir(parents=True)
    (processed / "paper").mkdir()
    np.save(processed / "paper__cites__paper" / "edge_index.npy", EDGES)
    np.save(processed / "paper" / "node_feat.npy", np.arange(N * 4, dtype=np.float32).reshape(N, 4))
    np.save(processed / "paper" / "node_label_19.npy", np.array([18, 0, 7, 7, 1, 3], dtype=np.float32))
    cli_out, py_out = outs
    cli_report = run_json("convert", "igb", "--root", str(tmp_path / "igb"), "--size", "experimental",
                          "--train-fraction", "0.5", "--valid-fraction", "0.25", "--labeled-nodes", "4",
                          "-o", str(cli_out))
    py_report = graphtier.convert.igb(tmp_path / "igb", py_out, size="experimental", train_fraction=0.5,
                                      valid_fraction=0.25, labeled_nodes=4)
    assert py_report["num_labeled"] == 4
    same_dataset(cli_report, py_report, cli_out, py_out)


def test_igbh_hetero_matches_the_command_and_adds_reverses(tmp_path, outs):
    processed = tmp_path / "igb" / "tiny" / "processed"
    counts = {"paper": 5, "author": 3, "fos": 2}
    for name, count in counts.items():
        (processed / name).mkdir(parents=True)
        np.save(processed / name / "node_feat.npy", np.arange(count * 2, dtype=np.float32).reshape(count, 2))
    np.save(processed / "paper" / "node_label_19.npy", np.array([1, 0, 4, 4, 2], dtype=np.float32))
    relations = {"paper__cites__paper": [[0, 1], [1, 2], [4, 0]], "paper__written_by__author": [[0, 0], [3, 2]],
                 "paper__topic__fos": [[0, 1], [2, 1]]}
    for name, pairs in relations.items():
        (processed / name).mkdir()
        np.save(processed / name / "edge_index.npy", np.array(pairs, dtype=np.int64))
    cli_out, py_out = outs
    cli_report = run_json("convert", "igb", "--root", str(tmp_path / "igb"), "--size", "tiny", "--hetero",
                          "-o", str(cli_out))
    py_report = graphtier.convert.igb(tmp_path / "igb", py_out, size="tiny", hetero=True)
    assert py_report["node_types"] == 3 and py_report["relations"] == 6
    same_dataset(cli_report, py_report, cli_out, py_out)
    d = graphtier.Dataset(str(py_out))
    assert d.node_types == ["author", "fos", "paper"]
    assert d.relations == ["paper:cites:paper", "paper:topic:fos", "paper:written_by:author",
                           "paper:rev_cites:paper", "fos:rev_topic:paper", "author:rev_written_by:paper"]
    assert d.reverse_relations == [3, 4, 5, 0, 1, 2]
    assert d.labelled_type == "paper"
    with pytest.raises(ValueError, match="destination id 7 is out of range"):
        np.save(processed / "paper__topic__fos" / "edge_index.npy", np.array([[0, 7]], dtype=np.int64))
        graphtier.convert.igb(tmp_path / "igb", tmp_path / "bad", size="tiny", hetero=True)


def test_ogb_mag_layout_becomes_typed(tmp_path):
    raw = tmp_path / "ogbn_mag" / "raw"

    def gz(path, text):
        path.parent.mkdir(parents=True, exist_ok=True)
        with gzip.open(path, "wt") as f:
            f.write(text)

    gz(raw / "num-node-dict.csv.gz", "paper,author\n3,2\n")
    gz(raw / "triplet-type-list.csv.gz", "author,writes,paper\npaper,cites,paper\n")
    gz(raw / "relations" / "author___writes___paper" / "edge.csv.gz", "0,0\n1,2\n")
    gz(raw / "relations" / "paper___cites___paper" / "edge.csv.gz", "0,1\n2,1\n")
    gz(raw / "node-label" / "paper" / "node-label.csv.gz", "0\n1\n1\n")
    report = graphtier.convert.ogb(tmp_path / "ogbn_mag", tmp_path / "mag")
    assert report["format"] == "ogb heterogeneous (csv)" and report["relations"] == 4
    d = graphtier.Dataset(str(tmp_path / "mag"))
    assert d.relations == ["author:writes:paper", "paper:cites:paper", "paper:rev_writes:author", "paper:rev_cites:paper"]
    assert d.node_type_ranges == {"author": (0, 2), "paper": (2, 5)}


def test_planetoid_matches_the_command(outs):
    pytest.importorskip("scipy", reason="scipy is needed to read the Planetoid pickles (pip install .[planetoid])")
    cli_out, py_out = outs
    root = str(DATASETS / "cora")
    cli_report = run_json("convert", "planetoid", "--root", root, "--name", "cora", "--dtype", "bfloat16",
                          "-o", str(cli_out))
    py_report = graphtier.convert.planetoid(root, py_out, name="cora", dtype="bfloat16")
    assert (py_report["num_nodes"], py_report["num_edges"], py_report["num_classes"]) == (2708, 10556, 7)
    same_dataset(cli_report, py_report, cli_out, py_out)
    # Nothing left beside the output: the scratch arrays are gone.
    assert sorted(p.name for p in py_out.parent.iterdir()) == ["g"]
    # The script stays importable as a module while the package attribute stays the function.
    script = importlib.import_module("graphtier.convert.planetoid")
    assert callable(script.extract) and callable(graphtier.convert.planetoid) and graphtier.convert.planetoid is not script


def test_errors_are_the_documented_python_exceptions(tmp_path):
    out = tmp_path / "g"
    with pytest.raises(OSError, match="missing.txt"):
        graphtier.convert.edge_list(tmp_path / "missing.txt", out)
    bad = tmp_path / "bad.txt"
    bad.write_text("0 1\n1 x\n")
    with pytest.raises(ValueError, match=r"bad.txt:2"):
        graphtier.convert.edge_list(bad, out)
    (tmp_path / "ok.txt").write_text("0 1\n")
    with pytest.raises(ValueError, match="dtype"):
        graphtier.convert.edge_list(tmp_path / "ok.txt", out, dtype="int7")
    with pytest.raises(ValueError, match="edge_layout must be auto, 2xE or Ex2, got 'rows'"):
        graphtier.convert.npy(tmp_path / "e.npy", out, edge_layout="rows")
    with pytest.raises(ValueError, match="format must be auto, csv or npz"):
        graphtier.convert.ogb(tmp_path, out, format="parquet")
    graphtier.convert.edge_list(tmp_path / "ok.txt", out)
    with pytest.raises(ValueError, match="already exists"):
        graphtier.convert.edge_list(tmp_path / "ok.txt", out)
    with pytest.raises(ValueError, match="already exists"):
        graphtier.convert.planetoid(DATASETS / "cora", out, name="cora")
    with pytest.raises(ValueError, match="is not a directory"):
        graphtier.convert.planetoid(tmp_path / "nowhere", tmp_path / "p", name="cora")
    with pytest.raises(TypeError, match="symmetrize"):
        graphtier.convert.planetoid(DATASETS / "cora", tmp_path / "p", name="cora", symmetrize=True)


def test_planetoid_without_scipy_names_the_extra(tmp_path):
    # An interpreter where scipy cannot be imported: a module named scipy that fails.
    fake = tmp_path / "site"
    (fake / "scipy").mkdir(parents=True)
    (fake / "scipy" / "__init__.py").write_text("raise ImportError('No module named scipy')\n")
    code = ("import graphtier.convert as c, sys\n"
            "try:\n    c.planetoid(sys.argv[1], sys.argv[2], name='cora')\n"
            "except ImportError as e:\n    print(e)\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(fake), *sys.path]))
    done = subprocess.run([sys.executable, "-c", code, str(DATASETS / "cora"), str(tmp_path / "c")], env=env,
                          capture_output=True, text=True, check=True)
    assert "pip install .[planetoid]" in done.stdout
    script = Path(graphtier.convert.__file__).parent / "planetoid.py"
    done = subprocess.run([sys.executable, str(script), "--root", str(DATASETS / "cora"), "--name", "cora",
                           "--out", str(tmp_path / "a")], env=env, capture_output=True, text=True)
    assert done.returncode == 3 and "pip install .[planetoid]" in done.stderr


def test_installed_command_runs_from_anywhere(tmp_path):
    command = installed_command()
    # No python3 but the system's on PATH, another working directory: the command finds its
    # Planetoid script and runs it in its own environment's interpreter.
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    done = subprocess.run([command, "--help"], cwd=tmp_path, env=env, capture_output=True, text=True, check=True)
    assert "convert" in done.stdout
    (tmp_path / "e.txt").write_text("0 1\n1 2\n")
    subprocess.run([command, "-q", "convert", "edge-list", "e.txt", "-o", "g"], cwd=tmp_path, env=env, check=True)
    assert (tmp_path / "g" / "manifest.json").is_file()
    beside = Path(command).parent / "python3"
    python = str(beside) if beside.is_file() else shutil.which("python3", path=env["PATH"])
    if subprocess.run([python, "-c", "import numpy, scipy"], capture_output=True).returncode != 0:
        pytest.skip(f"{python}, the command's interpreter, has no scipy (pip install .[planetoid])")
    done = subprocess.run([command, "-q", "--json", "convert", "planetoid", "--root", str(DATASETS / "cora"),
                           "--name", "cora", "-o", "cora"], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["num_nodes"] == 2708
