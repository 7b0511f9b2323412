"""Fixtures: datasets made once per session with the `graphtier` command (built by scripts/test.sh
into build/cpu, or named by $GRAPHTIER_CLI)."""

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DATASETS = ROOT / "datasets"  # embedded in the repository (datasets/README.md)


# The files whose tests start processes of one torch.distributed job (Gloo ranks, torchrun's
# environment): under pytest-xdist (scripts/test.sh runs the suite on two workers) they all run on one
# worker, one after another (--dist loadgroup), so two jobs never share the machine's two cores
# (their collective timeouts, and the failure tests' timings, assume a job has them).
MULTIPROCESS_FILES = ("test_dist_", "test_gpu")


def pytest_collection_modifyitems(config, items):
    if not config.pluginmanager.hasplugin("xdist"):
        return
    for item in items:
        if item.path.name.startswith(MULTIPROCESS_FILES):
            item.add_marker(pytest.mark.xdist_group("multiprocess"))


def cli() -> str:
    path = os.environ.get("GRAPHTIER_CLI", str(ROOT / "build" / "cpu" / "graphtier"))
    if not os.path.exists(path):
        pytest.fail(f"the graphtier command is not built at {path} (run scripts/test.sh, or set GRAPHTIER_CLI)")
    return path


def run_cli(*args: str) -> None:
    subprocess.run([cli(), "-q", *args], check=True)


def read_csc(path):
    """A dataset's topology as stored (docs/architecture.md, Dataset format): indptr and indices,
    int64 tensors, read from its files (not through graphtier), for checks against it."""
    import numpy as np
    import torch
    manifest = json.loads(Path(path, "manifest.json").read_text())
    indptr = np.fromfile(Path(path, "indptr.bin"), dtype=np.int64)
    indices = np.fromfile(Path(path, "indices.bin"), dtype=manifest["indices_dtype"]).astype(np.int64)
    return torch.from_numpy(indptr), torch.from_numpy(indices)


def has_module(name: str) -> bool:
    try:
        importlib.import_module(name)
    except ImportError:
        return False
    return True


def assert_import_needs(monkeypatch, adapter: str, framework: str, hint: str) -> None:
    """Importing the graphtier module `adapter` where `framework` is missing is an ImportError
    matching `hint` (how to install it); the real framework is seen again afterwards."""
    for name in [m for m in sys.modules if m == framework or m.startswith(framework + ".")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, framework, None)  # import framework -> ImportError
    monkeypatch.delitem(sys.modules, adapter, raising=False)
    with pytest.raises(ImportError, match=hint):
        importlib.import_module(adapter)
    sys.modules.pop(adapter, None)  # a later import in this process sees the real framework


@pytest.fixture(scope="session")
def cora(tmp_path_factory) -> str:
    """Cora with the Planetoid split (datasets/cora), renumbered by weighted reverse PageRank."""
    if not (DATASETS / "cora" / "ind.cora.graph").is_file():
        pytest.fail(f"Cora is missing from the checkout at {DATASETS / 'cora'}")
    root = tmp_path_factory.mktemp("cora")
    run_cli("convert", "planetoid", "--root", str(DATASETS / "cora"), "--name", "cora", "--out", str(root / "raw"))
    run_cli("prepare", "--dataset", str(root / "raw"), "--out", str(root / "wrpr"), "--hotness", "wrpr")
    return str(root / "wrpr")


@pytest.fixture(scope="session")
def synthetic(tmp_path_factory) -> str:
    """A generated power-law graph with planted communities: features are noisy class centroids,
    80% of edges join nodes of the same class, so neighbours carry signal an MLP cannot see."""
    out = tmp_path_factory.mktemp("synthetic") / "g"
    run_cli("generate", "--out", str(out), "--nodes", "6000", "--edges", "60000", "--feature-dim", "32",
            "--classes", "8", "--seed", "3", "--class-separation", "1.0", "--homophily", "0.8",
            "--align", "512", "--train-fraction", "0.2")
    return str(out)


@pytest.fixture(scope="session")
def acm(tmp_path_factory) -> str:
    """ACM (datasets/acm), typed: node types p, a, s, relations p:to:a, a:to:p, p:to:s, s:to:p, labels
    on p and its seeded 20/10/70 split, no features; converted as datasets/acm/README.md says."""
    out = tmp_path_factory.mktemp("acm") / "acm"
    run_cli("convert", "typed-edge-list", str(DATASETS / "acm" / "edge.txt.gz"), "--labels",
            str(DATASETS / "acm" / "label.txt.gz"), "--split", "0.2,0.1", "--seed", "0", "--out", str(out))
    return str(out)


# Typed ids (test_typed_ids.py, test_id_properties.py, test_dgl.py): the labelled type is not the
# first, so its global ids (150..549) and its ids within the type (0..399) differ and overlap, and
# both types have a feature table (of different widths).
TYPED_LATE_SCHEMA = {
    "node_types": [{"name": "author", "count": 150, "feature_dim": 4},
                   {"name": "paper", "count": 400, "feature_dim": 6}],
    "relations": [{"name": "paper:cites:paper", "degree": 3.0, "reverse": "cited_by"},
                  {"name": "author:writes:paper", "degree": 3.0, "reverse": "written_by"}],
    "labelled_type": "paper", "num_classes": 3}


@pytest.fixture(scope="session")
def typed_late(tmp_path_factory) -> str:
    """A generated typed dataset (TYPED_LATE_SCHEMA): author 0..149, paper 150..549 (labelled, with
    the train/valid/test split), features on both."""
    root = tmp_path_factory.mktemp("typed_late")
    schema = root / "schema.json"
    schema.write_text(json.dumps(TYPED_LATE_SCHEMA))
    run_cli("generate", "--schema", str(schema), "--seed", "5", "-o", str(root / "g"))
    return str(root / "g")
