"""The tensor archive (python/graphtier/training/archive.py) that checkpoints are written in: values
round-trip exactly; a hostile file is an ArchiveError saying what is wrong; and a seeded fuzz
property: every mutation of valid archives (bit flips, byte changes, truncations, insertions,
splices; fuzz/checkpoint_fuzz.py's) either reads back exactly one of the archived values or is an
ArchiveError, never another value or another exception; and with the index checksum made to fit, a
value or an ArchiveError."""

import importlib.util
import io
import json
import math
import random
import struct
import zlib
from pathlib import Path

import pytest
import torch

from graphtier.training import archive
from graphtier.training.archive import ArchiveError

ROOT = Path(__file__).resolve().parents[2]


def _fuzz_module():
    """fuzz/checkpoint_fuzz.py: its mutations (bit flips, bytes, insertions, deletions, truncations,
    splices), its reseal, which makes the index checksum fit a mutated index, and its comparison of
    loaded values (`same`)."""
    spec = importlib.util.spec_from_file_location("checkpoint_fuzz", ROOT / "fuzz" / "checkpoint_fuzz.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


FUZZ = _fuzz_module()
_same = FUZZ.same


def _dump(value) -> bytes:
    buf = io.BytesIO()
    archive.write_archive(buf, value)
    return buf.getvalue()


def _load(tmp_path, data: bytes, name="a.gta"):
    path = tmp_path / name
    path.write_bytes(data)
    with open(path, "rb") as f:
        return archive.read_archive(f, str(path))


def _checkpoint_like():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.BatchNorm1d(3))
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    model(torch.ones(2, 4)).sum().backward()
    optimizer.step()
    return {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "position": (1, 3),
            "history": {"epochs": [{"epoch": 0, "loss": 1.5, "val_acc": None}], "losses": [1.5, 0.25]},
            "best": {"val_acc": -1.0, "test_acc": 0.0, "epoch": -1}}


VALUES = [
    _checkpoint_like(),
    {"every dtype": {name: torch.arange(6).to(dtype).reshape(2, 3) for name, dtype in archive.DTYPES.items()},
     "empty": torch.zeros(0, 5), "scalar": torch.tensor(3.5), "strided": torch.arange(12.0).reshape(3, 4).t(),
     "floats": [float("nan"), -math.inf, math.inf, -0.0, 1e-300], "keys": {1: "one", (2, "b"): None, "s": True,
                                                                             False: 2 ** 70, 0.5: []}},
    [1, "two", (3.0,), {}],
    None,
]


@pytest.mark.parametrize("value", VALUES)
def test_values_round_trip_exactly(tmp_path, value):
    loaded = _load(tmp_path, _dump(value))
    expected = value
    if isinstance(value, dict) and "every dtype" in value:  # a strided tensor is written in C order
        expected = dict(value, strided=value["strided"].contiguous())
    assert _same(loaded, expected)


def test_loaded_tensors_own_their_memory_and_load_into_a_model(tmp_path):
    state = _load(tmp_path, _dump(VALUES[0]))
    model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.BatchNorm1d(3))
    model.load_state_dict(state["model"])
    torch.optim.Adam(model.parameters()).load_state_dict(state["optimizer"])
    state["model"]["0.weight"].add_(1)  # writable, and no other tensor shares its bytes
    assert not torch.equal(state["model"]["0.weight"], _load(tmp_path, _dump(VALUES[0]), "b.gta")["model"]["0.weight"])


def test_values_that_cannot_be_archived_are_a_type_error_naming_where_they_sit():
    with pytest.raises(TypeError, match=r"value\['args'\]\['f'\]: a function"):
        _dump({"args": {"f": lambda: 0}})
    with pytest.raises(TypeError, match="sparse"):
        _dump([torch.eye(2).to_sparse()])


def _forged(value_json, tensors, data: bytes, data_bytes=None, version=1) -> bytes:
    """An archive written by hand with valid checksums: what a hostile writer can make."""
    index = json.dumps({"value": value_json, "tensors": tensors,
                        "data_bytes": len(data) if data_bytes is None else data_bytes}).encode()
    start = -(-(24 + len(index)) // 64) * 64
    return (struct.pack("<8sIIQ", archive.MAGIC, version, zlib.crc32(index), len(index)) + index
            + b"\0" * (start - 24 - len(index)) + data)


def _entry(dtype="float32", shape=(2,), offset=0, nbytes=8, data=b"\0" * 8):
    return {"dtype": dtype, "shape": list(shape), "offset": offset, "nbytes": nbytes, "crc32": zlib.crc32(data)}


HOSTILE = [
    (b"", "magic"),
    (b"PK\x03\x04 a zip", "magic"),
    (archive.MAGIC[:5], "truncated"),
    (archive.MAGIC + b"\1\0", "truncated"),
    (_forged(None, [], b"", version=2), "version 2"),
    (_forged({"tensor": 0}, [_entry(dtype="float128")], b"\0" * 8), "dtype 'float128'"),
    (_forged({"tensor": 0}, [_entry(shape=(3,))], b"\0" * 8), "shape [3] of float32 is 12 bytes, the index gives 8"),
    (_forged({"tensor": 0}, [_entry(shape=(-1,))], b"\0" * 8), "not a list of non-negative integers"),
    (_forged({"tensor": 0}, [_entry(offset=4)], b"\0" * 8), "bytes [4, 12) lie beyond the data's 8"),
    # Two tensors on the same bytes: an index of many could make a small file allocate any multiple of it.
    (_forged([{"tensor": 0}, {"tensor": 1}], [_entry(), _entry()], b"\0" * 8),
     "tensor 1: its bytes start at 0, the tensor before it ends at 8"),
    (_forged({"tensor": 0}, [_entry(offset=8)], b"\0" * 16), "tensor 0: its bytes start at 8"),
    (_forged(None, [], b"\0" * 8), "the tensors hold 0 bytes, the data 8"),
    # A claimed size far beyond the file is refused before anything is allocated.
    (_forged({"tensor": 0}, [_entry(shape=(2 ** 40,), nbytes=2 ** 42)], b"\0" * 8), "beyond the data's 8"),
    (_forged({"tensor": 0}, [_entry(shape=(2 ** 62, 2 ** 62), nbytes=2 ** 126)], b""), "beyond the data's 0"),
    (_forged(None, [], b"", data_bytes=2 ** 40), "truncated or extended"),
    (_forged(None, [], b"", data_bytes=-1), "truncated or extended"),
    (_forged(None, [], b"\0" * 8, data_bytes=8)[:-1], "truncated or extended"),
    (_forged(None, [], b"") + b"\0", "truncated or extended"),
    (_forged({"tensor": 0}, [_entry(data=b"\1" * 8)], b"\0" * 8), "do not match their checksum"),
    (_forged({"tensor": 0}, [_entry(dtype="bool", nbytes=2, data=b"\0\2")], b"\0\2"), "bytes other than 0 and 1"),
    (_forged({"tensor": 1}, [], b""), "names tensor 1, the index lists 0"),
    (_forged([{"tensor": 0}, {"tensor": 0}], [_entry()], b"\0" * 8), "used twice"),
    (_forged(None, [_entry()], b"\0" * 8), "listed but not used"),
    (_forged({"object": 1}, [], b""), "unknown tag 'object'"),
    (_forged({"dict": [[[1], 2]]}, [], b""), "key is a list"),
    (_forged({"dict": [[1, 2], [1, 3]]}, [], b""), "key 1 twice"),
    (_forged({"dict": [1, 2]}, [], b""), "[key, value] pair"),
]


@pytest.mark.parametrize("data, words", HOSTILE, ids=[words for _, words in HOSTILE])
def test_hostile_archives_are_an_archive_error_naming_the_problem(tmp_path, data, words):
    with pytest.raises(ArchiveError) as e:
        _load(tmp_path, data)
    assert str(tmp_path / "a.gta") in str(e.value) and words in str(e.value), str(e.value)


def test_an_index_nested_beyond_the_recursion_limit_is_an_archive_error(tmp_path):
    index = ("[" * 100_000 + "]" * 100_000).encode()
    start = -(-(24 + len(index)) // 64) * 64
    data = (struct.pack("<8sIIQ", archive.MAGIC, 1, zlib.crc32(index), len(index)) + index
            + b"\0" * (start - 24 - len(index)))
    with pytest.raises(ArchiveError, match="not JSON|nests too deeply|not an object"):
        _load(tmp_path, data)


def test_every_mutation_reads_an_archived_value_or_is_an_archive_error(tmp_path):
    corpus = [_dump(v) for v in VALUES]
    rng = random.Random(25)
    path = tmp_path / "m.gta"
    outcomes = {"error": 0, "same": 0}
    for n in range(2000):
        data = FUZZ.mutate(rng.choice(corpus), rng, corpus)
        path.write_bytes(data)
        try:
            with open(path, "rb") as f:
                value = archive.read_archive(f, str(path))
        except ArchiveError as e:
            assert str(path) in str(e)
            outcomes["error"] += 1
            continue
        # Any other exception fails the test as it stands; a value must be one of those archived
        # (a mutation of the padding before the data, or a splice that rebuilt an archive).
        expected = list(VALUES)
        expected[1] = dict(VALUES[1], strided=VALUES[1]["strided"].contiguous())
        assert any(_same(value, v) for v in expected), f"mutation {n} read another value: {data!r}"
        outcomes["same"] += 1
    assert outcomes["error"] > 1600 and outcomes["same"] > 0, outcomes


def test_every_mutated_index_with_a_fitting_checksum_reads_or_is_an_archive_error(tmp_path):
    # What a hostile writer can make: the checks behind the index checksum hold on their own.
    corpus = [_dump(v) for v in VALUES]
    rng = random.Random(26)
    path = tmp_path / "m.gta"
    errors = set()
    for _ in range(2000):
        path.write_bytes(FUZZ.reseal(FUZZ.mutate(rng.choice(corpus), rng, corpus)))
        try:
            with open(path, "rb") as f:
                archive.read_archive(f, str(path))
        except ArchiveError as e:  # any other exception fails the test
            errors.add(str(e).split(": ")[2].split(" ")[0])
    # The mutations reach past the checksum into the index's fields and tags.
    assert {"tensor", "its", "the"} <= errors, errors
