"""load_checkpoint (python/graphtier/training/checkpoint.py) refuses a checkpoint whose dataset record is
malformed with ValueError naming the file, as it does a damaged file (fuzz/checkpoint_fuzz.py
found these)."""

import io
import os
import pickle
import types
import zipfile

import pytest
import torch

from graphtier import training

DS = types.SimpleNamespace(name="g", num_nodes=600, num_edges=3000, feature_dim=8, num_classes=4, path="/data/g")


def _save(tmp_path, dataset) -> str:
    state = {k: {} for k in training.CHECKPOINT_KEYS}
    if dataset is not ...:
        state["dataset"] = dataset
    path = tmp_path / "run.pt"
    torch.save(state, path)
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


class _Storage:
    """Stands for a tensor storage in a hand-written checkpoint pickle."""


def _checkpoint_with_storage(path, numel: int, data: bytes) -> str:
    """A checkpoint in torch's zip layout whose pickle names one float32 storage of `numel` elements
    while the archive holds `data` for it."""
    class Pickler(pickle.Pickler):
        def persistent_id(self, obj):
            return ("storage", torch.FloatStorage, "0", "cpu", numel) if isinstance(obj, _Storage) else None

    state = {k: {} for k in training.CHECKPOINT_KEYS}
    state["model"] = {"w": _Storage()}
    pk = io.BytesIO()
    Pickler(pk, protocol=2).dump(state)
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("archive/data.pkl", pk.getvalue())
        z.writestr("archive/data/0", data)
        z.writestr("archive/version", "3\n")
    return str(path)


def test_storage_larger_than_the_file_is_a_value_error(tmp_path):
    fits = _checkpoint_with_storage(tmp_path / "fits.pt", 3, b"\0" * 12)
    assert len(training.load_checkpoint(fits, DS)["model"]["w"]) == 3
    # torch itself would allocate 1 GiB here and load the 12 bytes into it.
    huge = _checkpoint_with_storage(tmp_path / "huge.pt", 2**28, b"\0" * 12)
    with pytest.raises(ValueError, match="tensor storage .0. of 1073741824 bytes, the archive holds 12"):
        training.load_checkpoint(huge, DS)


def test_an_entry_larger_than_the_file_is_a_value_error():
    # Found by fuzzing: the central directory gives archive/version 2^32 - 1 bytes, which torch's
    # reader allocated (2.2 GB) before reading the 2 bytes the archive holds.
    path = os.path.join(os.path.dirname(__file__), "..", "..", "fuzz", "corpus", "checkpoint", "oom-entry-size.pt")
    with pytest.raises(ValueError, match="archive/version claims 4294967295 bytes, more than the file's"):
        training.load_checkpoint(path, DS)


def test_legacy_or_other_format_is_a_value_error(tmp_path):
    path = tmp_path / "legacy.pt"
    torch.save({k: {} for k in training.CHECKPOINT_KEYS}, path, _use_new_zipfile_serialization=False)
    with pytest.raises(ValueError, match="not a readable checkpoint"):
        training.load_checkpoint(str(path), DS)
