"""The tensor archive a checkpoint is written in: plain values and tensors, read without running
any code (no pickle), on every torch version. docs/format.md (Checkpoint archive) is the reference.

    offset 0   magic b"\\x89GTARCH\\n" (8 bytes), then little-endian uint32 version (1),
               uint32 CRC-32 of the index, uint64 index length L
    offset 24  the index: L bytes of UTF-8 JSON {"value": V, "tensors": [T...], "data_bytes": D}
    offset S   the data: D bytes, S = 24 + L rounded up to 64; the file ends at S + D

V is the archived value as tagged JSON: null, booleans, numbers (NaN and infinities as Python's json
writes them), strings and lists stand for themselves; every JSON object is one tag:
{"dict": [[key, value], ...]}, {"tuple": [...]}, {"tensor": i} (the i-th entry of "tensors").
A tensor entry is {"dtype": one of DTYPES, "shape": [...], "offset": o, "nbytes": n, "crc32": c}:
its n = numel * element size bytes, C order, little-endian, lie at S + o, and their CRC-32 is c;
the tensors' bytes lie one after another, in order, and fill the data.

read_archive checks every field and bound against the file before it allocates or reads anything,
and the checksums after: a damaged or hostile file is an ArchiveError (a ValueError) saying what is
wrong, never a load of other values.
"""

from __future__ import annotations

import json
import os
import struct
import sys
import zlib
from typing import Any, BinaryIO, List, Tuple

import torch

from graphtier.training.files import write_atomically

MAGIC = b"\x89GTARCH\n"  # the high byte and the newline catch 7-bit and text-mode transfers, as PNG's
VERSION = 1
_HEADER = struct.Struct("<8sIIQ")  # magic, version, index CRC-32, index length
_ALIGNMENT = 64

# The dtypes an archive may hold, by the name the index gives them: torch's own ("torch.float32" ->
# "float32"), the names docs/format.md lists.
DTYPES = {str(d).split(".")[1]: d for d in (torch.float64, torch.float32, torch.float16, torch.bfloat16,
                                             torch.complex64, torch.complex128, torch.int64, torch.int32,
                                             torch.int16, torch.int8, torch.uint8, torch.bool)}
_DTYPE_NAMES = {dtype: name for name, dtype in DTYPES.items()}
_ELEMENT_BYTES = {name: torch.empty((), dtype=dtype).element_size() for name, dtype in DTYPES.items()}


def _short(x: Any) -> str:
    """A value from the file as an error quotes it: a hostile file's megabyte string is cut short."""
    r = repr(x)
    return r if len(r) <= 60 else r[:57] + "..."


class ArchiveError(ValueError):
    """A file that is not a readable tensor archive: the message names the file and the problem."""


def _check_byte_order() -> None:
    # Tensor bytes go to and from the file as the machine holds them.
    if sys.byteorder != "little":
        raise NotImplementedError("tensor archives are read and written on little-endian machines only")


def _encode(value: Any, tensors: List[torch.Tensor], where: str) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, torch.Tensor):
        if value.layout != torch.strided or value.dtype not in _DTYPE_NAMES:
            raise TypeError(f"{where}: a {value.layout} tensor of {value.dtype} cannot be archived "
                            f"(dense tensors of {', '.join(DTYPES)})")
        tensors.append(value)
        return {"tensor": len(tensors) - 1}
    if isinstance(value, dict):
        return {"dict": [[_encode(k, tensors, f"{where} key {k!r}"), _encode(v, tensors, f"{where}[{k!r}]")]
                         for k, v in value.items()]}
    if isinstance(value, tuple):
        return {"tuple": [_encode(v, tensors, f"{where}[{i}]") for i, v in enumerate(value)]}
    if isinstance(value, list):
        return [_encode(v, tensors, f"{where}[{i}]") for i, v in enumerate(value)]
    raise TypeError(f"{where}: a {type(value).__name__} cannot be archived (None, bool, int, float, str, list, "
                    "tuple, dict and tensors can)")


def write_archive(f: BinaryIO, value: Any) -> None:
    """Writes `value` (None, bool, int, float, str, and lists, tuples and dicts of them, and dense CPU
    or GPU tensors, which are copied to the host) to the binary file `f` at its start. A value of
    another type is a TypeError naming where it sits, raised before anything is written."""
    _check_byte_order()
    tensors: List[torch.Tensor] = []
    encoded = _encode(value, tensors, "value")
    host, entries, offset = [], [], 0
    for t in tensors:
        # C order bytes; reshape(-1) first, as a 0-d tensor has no last dimension to view as bytes.
        raw = t.detach().to("cpu").contiguous().reshape(-1).view(torch.uint8).numpy()
        host.append(raw)
        entries.append({"dtype": _DTYPE_NAMES[t.dtype], "shape": list(t.shape), "offset": offset,
                        "nbytes": raw.nbytes, "crc32": zlib.crc32(raw)})
        offset += raw.nbytes
    index = json.dumps({"value": encoded, "tensors": entries, "data_bytes": offset},
                       separators=(",", ":")).encode()
    start = _data_start(len(index))
    f.write(_HEADER.pack(MAGIC, VERSION, zlib.crc32(index), len(index)))
    f.write(index)
    f.write(b"\0" * (start - _HEADER.size - len(index)))
    for raw in host:
        f.write(memoryview(raw))


def _data_start(index_bytes: int) -> int:
    return -(-(_HEADER.size + index_bytes) // _ALIGNMENT) * _ALIGNMENT


def is_archive(f: BinaryIO) -> bool:
    """Whether `f` starts with the archive's magic (read from its current position, which moves)."""
    return f.read(len(MAGIC)) == MAGIC


def _is_count(x: Any) -> bool:
    return type(x) is int and x >= 0


def read_archive(f: BinaryIO, name: str) -> Any:
    """The value written by write_archive into the binary file `f` (opened at its start; `name` is
    what errors call it). Tensors are on the CPU and own their memory. Anything that is not such a
    file, whole and unchanged, is an ArchiveError naming `name` and the problem."""
    _check_byte_order()

    def fail(problem: str) -> ArchiveError:
        return ArchiveError(f"{name}: not a readable tensor archive: {problem}")

    size = os.fstat(f.fileno()).st_size
    header = f.read(_HEADER.size)
    if header[:len(MAGIC)] != MAGIC[:len(header)] or not header:
        raise fail("it does not start with the archive's magic bytes")
    if len(header) < _HEADER.size:
        raise fail(f"truncated: {size} bytes, less than the {_HEADER.size}-byte header")
    _, version, index_crc, index_bytes = _HEADER.unpack(header)
    if version != VERSION:
        raise fail(f"version {version}; this reader reads version {VERSION}")
    if index_bytes > size - _HEADER.size:  # before reading: a claimed length is never allocated
        raise fail(f"truncated: the index claims {index_bytes} bytes, the file holds {size - _HEADER.size} "
                   "after the header")
    raw_index = f.read(index_bytes)
    if len(raw_index) != index_bytes:
        raise fail(f"truncated while reading the index ({len(raw_index)} of {index_bytes} bytes)")
    if zlib.crc32(raw_index) != index_crc:
        raise fail("the index does not match its checksum (damaged?)")
    try:
        index = json.loads(raw_index.decode())
    except (UnicodeDecodeError, ValueError, RecursionError) as e:  # the checksum of a hostile index can fit
        raise fail(f"the index is not JSON ({type(e).__name__})") from None
    if not isinstance(index, dict) or set(index) != {"value", "tensors", "data_bytes"}:
        raise fail("the index is not an object of value, tensors and data_bytes")
    start = _data_start(index_bytes)
    data_bytes = index["data_bytes"]
    if not _is_count(data_bytes) or start + data_bytes != size:
        raise fail(f"the file holds {size} bytes, the index says {start} + {_short(data_bytes)} (truncated or "
                   "extended?)")
    entries = index["tensors"]
    if not isinstance(entries, list):
        raise fail("its tensors are not a list")
    end = 0
    for i, e in enumerate(entries):
        _check_entry(e, i, data_bytes, fail)
        # One after another, as written: tensors sharing bytes could make a small file allocate
        # any multiple of its size.
        if e["offset"] != end:
            raise fail(f"tensor {i}: its bytes start at {e['offset']}, the tensor before it ends at {end} (tensors "
                       "lie one after another)")
        end += e["nbytes"]
    if end != data_bytes:
        raise fail(f"the tensors hold {end} bytes, the data {data_bytes}")
    # Every bound holds: the tensors' bytes tile the data, so nothing below allocates more than the file.
    tensors = [_read_tensor(f, start, e, i, fail) for i, e in enumerate(entries)]
    used = [False] * len(tensors)
    try:
        value = _decode(index["value"], tensors, used, fail)
    except RecursionError:
        raise fail("its value nests too deeply") from None
    if not all(used):
        raise fail(f"tensor {used.index(False)} is listed but not used")
    return value


def _check_entry(e: Any, i: int, data_bytes: int, fail) -> None:
    if not isinstance(e, dict) or set(e) != {"dtype", "shape", "offset", "nbytes", "crc32"}:
        raise fail(f"tensor {i}: not an object of dtype, shape, offset, nbytes and crc32")
    if not isinstance(e["dtype"], str) or e["dtype"] not in DTYPES:
        raise fail(f"tensor {i}: dtype {_short(e['dtype'])} is none of {', '.join(DTYPES)}")
    shape = e["shape"]
    if not isinstance(shape, list) or not all(_is_count(d) for d in shape):
        raise fail(f"tensor {i}: shape {_short(shape)} is not a list of non-negative integers")
    if not _is_count(e["offset"]) or not _is_count(e["nbytes"]) or not _is_count(e["crc32"]):
        raise fail(f"tensor {i}: offset, nbytes and crc32 must be non-negative integers")
    numel = 1
    for d in shape:
        numel *= d  # Python integers: a huge shape is a mismatch below, never an overflow
    if numel * _ELEMENT_BYTES[e["dtype"]] != e["nbytes"]:
        raise fail(f"tensor {i}: shape {shape} of {e['dtype']} is {numel * _ELEMENT_BYTES[e['dtype']]} bytes, "
                   f"the index gives {e['nbytes']}")
    if e["offset"] + e["nbytes"] > data_bytes:
        raise fail(f"tensor {i}: bytes [{e['offset']}, {e['offset'] + e['nbytes']}) lie beyond the data's "
                   f"{data_bytes}")


def _read_tensor(f: BinaryIO, start: int, e: dict, i: int, fail) -> torch.Tensor:
    raw = torch.empty(e["nbytes"], dtype=torch.uint8)
    f.seek(start + e["offset"])
    view = raw.numpy()
    if e["nbytes"] and f.readinto(memoryview(view)) != e["nbytes"]:
        raise fail(f"tensor {i}: truncated while reading")
    if zlib.crc32(view) != e["crc32"]:
        raise fail(f"tensor {i}: its bytes do not match their checksum (damaged?)")
    dtype = DTYPES[e["dtype"]]
    if dtype == torch.bool and bool((raw > 1).any()):
        raise fail(f"tensor {i}: a bool tensor holds bytes other than 0 and 1")
    return raw.view(dtype).reshape(e["shape"])


def _decode(v: Any, tensors: List[torch.Tensor], used: List[bool], fail) -> Any:
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, list):
        return [_decode(x, tensors, used, fail) for x in v]
    if not isinstance(v, dict) or len(v) != 1:
        raise fail("its value holds an object that is not one tag (dict, tuple or tensor)")
    (tag, body), = v.items()
    if tag == "tensor":
        if not _is_count(body) or body >= len(tensors):
            raise fail(f"its value names tensor {_short(body)}, the index lists {len(tensors)}")
        if used[body]:
            raise fail(f"tensor {body} is used twice")
        used[body] = True
        return tensors[body]
    if tag == "tuple" and isinstance(body, list):
        return tuple(_decode(x, tensors, used, fail) for x in body)
    if tag == "dict" and isinstance(body, list):
        out = {}
        for item in body:
            if not isinstance(item, list) or len(item) != 2:
                raise fail("a dict's item is not a [key, value] pair")
            key = _decode(item[0], tensors, used, fail)
            try:
                hash(key)
            except TypeError:
                raise fail(f"a dict's key is a {type(key).__name__}") from None
            if isinstance(key, torch.Tensor):
                raise fail("a dict's key is a tensor")
            if key in out:
                raise fail(f"a dict holds the key {_short(key)} twice")
            out[key] = _decode(item[1], tensors, used, fail)
        return out
    raise fail(f"its value holds an unknown tag {_short(tag)} or a malformed {_short(tag)}")


def write_archive_file(path: str, value: Any) -> None:
    """write_archive into `path`, atomically (a temporary file beside it, flushed to disk, then renamed
    over it): a crash while writing leaves the previous file."""
    def write(tmp: str) -> None:
        with open(tmp, "wb") as f:
            write_archive(f, value)
            f.flush()
            os.fsync(f.fileno())

    write_atomically(path, write)


__all__: Tuple[str, ...] = ("ArchiveError", "DTYPES", "MAGIC", "is_archive", "read_archive", "write_archive",
                            "write_archive_file")
