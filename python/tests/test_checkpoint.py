"""load_checkpoint (python/graphtier/train.py) refuses a checkpoint whose dataset record is
malformed with ValueError naming the file, as it does a damaged file (fuzz/checkpoint_fuzz.py
found these)."""

import types

import pytest
import torch

from graphtier import train

DS = types.SimpleNamespace(name="g", num_nodes=600, num_edges=3000, feature_dim=8, num_classes=4, path="/data/g")


def _save(tmp_path, dataset) -> str:
    state = {k: {} for k in train._CHECKPOINT_KEYS}
    if dataset is not ...:
        state["dataset"] = dataset
    path = tmp_path / "run.pt"
    torch.save(state, path)
    return str(path)


def test_matching_or_absent_dataset_record_loads(tmp_path):
    assert train.load_checkpoint(_save(tmp_path, train.dataset_identity(DS)), DS)["dataset"]["num_nodes"] == 600
    assert "dataset" not in train.load_checkpoint(_save(tmp_path, ...), DS)
    # A later writer may record more about the dataset: what this one checks still has to agree.
    extra = dict(train.dataset_identity(DS), feature_dtype="float16")
    assert train.load_checkpoint(_save(tmp_path, extra), DS)["dataset"] == extra


@pytest.mark.parametrize("dataset, words", [
    ([1, 2], ["dataset record", "list"]),
    ("g", ["dataset record", "str"]),
    ({"name": "g"}, ["another dataset", "num_nodes"]),
    (dict(train.dataset_identity(DS), num_nodes=torch.tensor([600, 600])), ["another dataset", "num_nodes"]),
    (dict(train.dataset_identity(DS), name="other"), ["another dataset", "'other'"]),
])
def test_malformed_or_foreign_dataset_record_is_a_value_error(tmp_path, dataset, words):
    path = _save(tmp_path, dataset)
    with pytest.raises(ValueError) as e:
        train.load_checkpoint(path, DS)
    for word in [path, *words]:
        assert word in str(e.value), (word, str(e.value))
