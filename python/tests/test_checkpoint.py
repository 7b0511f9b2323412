"""load_checkpoint (python/graphtier/training/checkpoint.py) refuses a checkpoint whose dataset record is
malformed with ValueError naming the file, as it does a damaged file (fuzz/checkpoint_fuzz.py found
these), and refuses torch.save's formats, which earlier versions wrote, without unpickling them: on
torch 1.13 torch.load would run the code a hostile file names."""

import json
import os
import pickle
import types

import pytest
import torch

import graphtier
from conftest import run_cli
from graphtier import training

DS = types.SimpleNamespace(name="g", num_nodes=600, num_edges=3000, feature_dim=8, num_classes=4, path="/data/g",
                           file_checksums={"indptr.bin": "00000000000000aa", "indices.bin": "00000000000000bb"})


def _save(tmp_path, dataset) -> str:
    state = {k: {} for k in training.CHECKPOINT_KEYS}
    if dataset is not ...:
        state["dataset"] = dataset
    path = tmp_path / "run.pt"
    training.save_checkpoint(str(path), state)
    return str(path)


def test_matching_or_absent_dataset_record_loads(tmp_path):
    assert training.load_checkpoint(_save(tmp_path, training.dataset_identity(DS)), DS)["dataset"]["num_nodes"] == 600
    assert "dataset" not in training.load_checkpoint(_save(tmp_path, ...), DS)
    # A later writer may record more about the dataset: what this one checks still has to agree.
    extra = dict(training.dataset_identity(DS), feature_dtype="float16")
    assert training.load_checkpoint(_save(tmp_path, extra), DS)["dataset"] == extra


@pytest.mark.parametrize("dataset, words", [
    ([1, 2], ["dataset record", "list"]),
    ("g", ["dataset record", "str"]),
    ({"name": "g"}, ["another dataset", "num_nodes"]),
    (dict(training.dataset_identity(DS), num_nodes=torch.tensor([600, 600])), ["another dataset", "num_nodes"]),
    (dict(training.dataset_identity(DS), name="other"), ["another dataset", "'other'"]),
])
def test_malformed_or_foreign_dataset_record_is_a_value_error(tmp_path, dataset, words):
    path = _save(tmp_path, dataset)
    with pytest.raises(ValueError) as e:
        training.load_checkpoint(path, DS)
    for word in [path, *words]:
        assert word in str(e.value), (word, str(e.value))


def test_the_dataset_is_identified_by_its_content(tmp_path, capsys):
    # Same name and counts, another file (a renumbered copy): refused, naming the dataset it was written for.
    other_indices = dict(DS.file_checksums, **{"indices.bin": "00000000000000cc"})
    renumbered = types.SimpleNamespace(**dict(vars(DS), path="/data/g2", file_checksums=other_indices))
    path = _save(tmp_path, training.dataset_identity(DS))
    with pytest.raises(ValueError) as e:
        training.load_checkpoint(path, renumbered)
    message = str(e.value)
    assert "\n" not in message
    assert message.startswith(f"{path}: written for another dataset: 'g' at /data/g (600 nodes, 3000 edges, content "
                              f"{training.content_hash(DS.file_checksums)}); this is 'g' at /data/g2")
    # The content, not the place: the same files elsewhere resume, in any order of the record.
    moved = types.SimpleNamespace(**dict(vars(DS), path="/elsewhere",
                                         file_checksums=dict(reversed(list(DS.file_checksums.items())))))
    assert training.load_checkpoint(path, moved)["dataset"]["content"] == training.content_hash(DS.file_checksums)
    assert capsys.readouterr().err == ""
    # An earlier checkpoint without the content: accepted on name and counts, with a warning saying so.
    old = {k: v for k, v in training.dataset_identity(DS).items() if k not in ("content", "path")}
    path = _save(tmp_path, old)
    assert training.load_checkpoint(path, renumbered)["dataset"] == old
    assert capsys.readouterr().err == (f"graphtier: warning: {path}: written by an earlier graphtier that did not "
                                       "record its dataset's content; resuming on /data/g2 by its name and counts "
                                       "only\n")


def test_a_datasets_content_is_its_manifests_checksums(tmp_path):
    for seed in (1, 2):
        run_cli("generate", "--out", str(tmp_path / f"g{seed}"), "--nodes", "100", "--edges", "400", "--feature-dim",
                "4", "--classes", "2", "--seed", str(seed))
    ds = graphtier.Dataset(str(tmp_path / "g1"))
    files = json.loads((tmp_path / "g1" / "manifest.json").read_text())["files"]
    assert ds.file_checksums == {entry["path"]: entry["xxh3"] for entry in files.values()}
    identity = training.dataset_identity(ds)
    assert identity["content"] == training.content_hash(ds.file_checksums)
    assert identity["content"] != training.dataset_identity(graphtier.Dataset(str(tmp_path / "g2")))["content"]


def test_saving_is_atomic_and_leaves_no_temporary_file(tmp_path):
    path = _save(tmp_path, ...)
    before = open(path, "rb").read()
    with pytest.raises(TypeError, match="cannot be archived"):
        training.save_checkpoint(path, {"model": object()})
    assert open(path, "rb").read() == before, "a failed save leaves the previous checkpoint"
    assert os.listdir(tmp_path) == ["run.pt"]


class _RunsCode:
    """Unpickling it calls os.system: what a hostile checkpoint does to torch 1.13's torch.load."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return os.system, (f"touch {self.marker}",)


@pytest.mark.parametrize("zip_format", [True, False])
def test_torch_save_formats_are_refused_without_unpickling(tmp_path, zip_format):
    marker = tmp_path / "code-ran"
    state = {k: {} for k in training.CHECKPOINT_KEYS}
    state["model"] = {"w": torch.ones(2), "payload": _RunsCode(marker)}
    path = tmp_path / "old.pt"
    torch.save(state, path, _use_new_zipfile_serialization=zip_format)
    with pytest.raises(ValueError) as e:
        training.load_checkpoint(str(path), DS)
    for word in [str(path), "earlier graphtier", "torch.save", "Re-create it by training again with --checkpoint"]:
        assert word in str(e.value), (word, str(e.value))
    assert not marker.exists()


@pytest.mark.parametrize("data", [b"", b"\x80\x04not a checkpoint", pickle.dumps({"model": {}}), b"PK\x05\x06"])
def test_other_files_are_a_value_error_naming_the_file(tmp_path, data):
    path = tmp_path / "other.pt"
    path.write_bytes(data)
    with pytest.raises(ValueError, match=f"{path}: not a readable tensor archive"):
        training.load_checkpoint(str(path), DS)


def test_a_damaged_checkpoint_is_a_value_error(tmp_path):
    path = _save(tmp_path, training.dataset_identity(DS))
    data = bytearray(open(path, "rb").read())
    data[40] ^= 1  # in the index
    open(path, "wb").write(bytes(data))
    with pytest.raises(ValueError, match=f"{path}: not a readable tensor archive: the index does not match"):
        training.load_checkpoint(path, DS)
