"""Node ids: only integer dtypes are ids. Floats and lists of bools are refused with a TypeError
naming the argument, never truncated to the ids below them (bool arrays and tensors are masks:
test_loader_passes.py)."""

import numpy as np
import pytest
import torch

import graphtier

NOT_IDS = {
    "float list": ([0.5, 1.7, 2.9], "float64"),
    "float list of whole numbers": ([0.0, 1.0], "float64"),
    "int list with a float": ([0, 1.5], "float64"),
    "bool list": ([True, False], "bool"),
    "int list with a bool": ([3, True], "bool"),
    "float numpy array": (np.array([0.0, 1.9]), "float64"),
    "float32 numpy array": (np.array([0, 1], dtype=np.float32), "float32"),
    "float tensor": (torch.tensor([0.0, 1.9]), "float32"),
    "float64 tensor": (torch.tensor([0, 1], dtype=torch.float64), "float64"),
    "str list": (["0", "1"], "str"),
}

IDS = {
    "int list": [3, 0, 5],
    "int tuple": (3, 0, 5),
    "numpy int scalars": [np.int32(3), np.int64(0), np.uint8(5)],
    "int64 array": np.array([3, 0, 5]),
    "int32 array": np.array([3, 0, 5], dtype=np.int32),
    "uint16 array": np.array([3, 0, 5], dtype=np.uint16),
    "non-contiguous array": np.array([3, 9, 0, 9, 5])[::2],
    "int64 tensor": torch.tensor([3, 0, 5]),
    "int32 tensor": torch.tensor([3, 0, 5], dtype=torch.int32),
    "uint8 tensor": torch.tensor([3, 0, 5], dtype=torch.uint8),
}


def _message(got: str) -> str:
    return rf"^ids: expected integer node ids, got {got}\b"


@pytest.mark.parametrize("case", list(NOT_IDS))
def test_loaders_refuse_ids_that_are_not_integers(synthetic, case):
    value, got = NOT_IDS[case]
    ds = graphtier.Dataset(synthetic)
    with pytest.raises(TypeError, match=_message(got)):
        graphtier.NeighborLoader(ds, [2], batch_size=2, ids=value, shuffle=False, features=False)
    with pytest.raises(TypeError, match=_message(got)):
        graphtier.LayerLoader(ds, [4], batch_size=2, ids=value, shuffle=False, cpu_buffer="0")


@pytest.mark.parametrize("case", list(NOT_IDS))
def test_gather_refuses_ids_that_are_not_integers(synthetic, case):
    value, got = NOT_IDS[case]
    store = graphtier.FeatureStore(synthetic)
    with pytest.raises(TypeError, match=_message(got)):
        store.gather(value)


def test_the_extension_does_not_convert_float_ids_either(synthetic):
    ds = graphtier.Dataset(synthetic)
    store = graphtier._core.FeatureStore(ds, options=graphtier.FeatureStoreOptions(), threads=0)
    with pytest.raises(TypeError):
        store.gather(np.array([0.0, 1.9]))
    with pytest.raises(TypeError):
        store.gather(torch.tensor([0.0, 1.9]))
    with pytest.raises(TypeError):
        store.gather(np.array([True, False]))


@pytest.mark.parametrize("case", list(IDS))
def test_integer_ids_of_every_kind_are_ids(synthetic, case):
    ds = graphtier.Dataset(synthetic)
    store = graphtier.FeatureStore(ds)
    expected = store.gather(np.array([3, 0, 5], dtype=np.int64)).numpy()
    np.testing.assert_array_equal(store.gather(IDS[case]).numpy(), expected)
    loader = graphtier.NeighborLoader(ds, [2], batch_size=3, ids=IDS[case], shuffle=False, features=False)
    assert next(iter(loader)).seeds.tolist() == [3, 0, 5]


def test_ids_out_of_range_and_of_the_wrong_shape_keep_their_errors(synthetic):
    ds = graphtier.Dataset(synthetic)
    store = graphtier.FeatureStore(ds)
    with pytest.raises(IndexError, match=str(ds.num_nodes)):
        store.gather([0, ds.num_nodes])
    with pytest.raises(IndexError, match="ids"):
        store.gather(np.array([2**63], dtype=np.uint64))  # not wrapped around to a negative id
    with pytest.raises(IndexError, match="ids"):
        graphtier.NeighborLoader(ds, [2], ids=[2**64], features=False)
    with pytest.raises(ValueError, match="one-dimensional"):
        graphtier.NeighborLoader(ds, [2], ids=[[0, 1], [2, 3]], features=False)
    assert store.gather([]).shape == (0, ds.feature_dim)
