"""Node-id arguments: the one check every id that enters the package goes through (loaders'
`ids=`, FeatureStore.gather).

Only integer dtypes are ids: a float would otherwise be cast (0.5, 1.7 -> 0, 1) and load rows
nobody asked for, so it is a TypeError naming the argument. A bool torch tensor or numpy array is a
mask over the graph's nodes, as in PyTorch indexing and PyG's `input_nodes`: its True positions are
the ids, in increasing order; it must have one entry per node (else a ValueError naming the argument
and both lengths). A Python list of bools stays a TypeError: [True, False] could mean ids 1, 0.

Typed datasets (docs/architecture.md, "Node ids and their numberings"): ids given with their node
type ({type: ids}, PyG's (type, ids), DGL's {type: ids}, what Dataset.split returns) are local to the
type, 0 to its count - 1, as PyG, DGL and OGB number them. `type_node_ids` is the one check of them
against their own type's count and the one place they become the engine's global ids;
`typed_node_ids` reads a loader's typed seeds with it. A bare id tensor says nothing of its
numbering, so on a typed dataset it is refused.
"""

from __future__ import annotations

from typing import Optional

import numpy as np
import torch

_TORCH_INTEGER = (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64)
_INT64_MAX = np.uint64(np.iinfo(np.int64).max)  # a uint64: compared with an int, numpy goes through float64


def _not_ids(name: str, got: str) -> TypeError:
    return TypeError(f"{name}: expected integer node ids, got {got}")


def _mask_ids(mask: torch.Tensor, name: str, num_nodes: Optional[int]) -> torch.Tensor:
    if num_nodes is None:
        raise _not_ids(name, "bool")
    if mask.dim() != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {tuple(mask.shape)}")
    if mask.numel() != num_nodes:
        raise ValueError(f"{name}: a bool mask needs one entry per node ({num_nodes}), got {mask.numel()}")
    return torch.nonzero(mask.to("cpu"), as_tuple=True)[0].to(torch.int64).contiguous()


def node_ids(value, name: str = "ids", num_nodes: Optional[int] = None) -> torch.Tensor:
    """`value` (a sequence of ints, an integer numpy array or torch tensor, or a bool mask of
    `num_nodes` entries as a numpy array or torch tensor) as a one-dimensional, contiguous int64 CPU
    tensor. Floats, lists of bools and (with `num_nodes` None) masks are a TypeError, another shape
    or a mask of another length a ValueError, a value past int64 an IndexError; ranges against the
    graph are checked by the engine."""
    if isinstance(value, torch.Tensor) and value.dtype == torch.bool:
        return _mask_ids(value, name, num_nodes)
    if isinstance(value, np.ndarray) and value.dtype == np.bool_:
        return _mask_ids(torch.from_numpy(value), name, num_nodes)
    if isinstance(value, torch.Tensor):
        if value.dtype not in _TORCH_INTEGER:
            raise _not_ids(name, str(value.dtype).replace("torch.", ""))
        ids = value.to(device="cpu", dtype=torch.int64)
    else:
        if isinstance(value, (list, tuple)) and len(value) == 0:
            array = np.empty(0, dtype=np.int64)
        else:
            array = np.asarray(value)
        if isinstance(value, (list, tuple)) and any(isinstance(v, (bool, np.bool_)) for v in value):
            raise _not_ids(name, "bool")  # numpy makes [3, True] an int64 array
        if array.dtype == object and all(isinstance(v, int) for v in array.flat):
            raise IndexError(f"{name}: node id {max(array.flat, key=abs)} is outside int64")
        if array.dtype.kind not in "iu":
            raise _not_ids(name, "str" if array.dtype.kind == "U" else array.dtype.name)
        if array.dtype == np.uint64 and array.size and array.max() > _INT64_MAX:
            raise IndexError(f"{name}: node id {array.max()} is outside int64")
        ids = torch.from_numpy(np.ascontiguousarray(array, dtype=np.int64))
    if ids.dim() != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {tuple(ids.shape)}")
    return ids.contiguous()


def node_type_ranges(ds) -> dict:
    """Each node type of dataset `ds` (a graphtier or _core Dataset) by name: its global id range
    [begin, end), in id order."""
    offset = ds.node_type_offset
    return {name: (offset[t], offset[t + 1]) for t, name in enumerate(ds.node_types)}


def typed_node_ids(ds, value, name: str = "ids") -> torch.Tensor:
    """The engine's global ids of the seeds `value` of a typed dataset `ds`: {node type: ids or a bool
    mask of that type, on any device, or None for every node of the type}, of one type: the labelled
    one (a typed batch's seeds are of it), or any one where the dataset has none. The ids are local
    to the type (0 to its count - 1): one outside is an IndexError naming `name`, the type and its
    range; another form (a bare tensor, whose numbering cannot be told) or another type a ValueError.
    An int64 CPU tensor."""
    labelled = ds.labelled_type
    ranges = node_type_ranges(ds)
    if not isinstance(value, dict):
        example = labelled if labelled is not None else next(iter(ranges))
        raise ValueError(f"{name}: the dataset is typed, so its seeds are given with their type, as {{{example!r}: "
                         f"ids within the type, 0 to its count - 1}} (Dataset.split's layout); got a bare "
                         f"{type(value).__name__}, whose numbering cannot be told")
    for t in value:
        if t not in ranges:
            raise ValueError(f"{name}: unknown node type {t!r} (the dataset's: {', '.join(ranges)})")
    if len(value) != 1 or (labelled is not None and labelled not in value):
        raise ValueError(f"{name}: seeds of one node type, " +
                         (f"the labelled type {labelled!r}" if labelled is not None else "any") +
                         f"; got types {', '.join(map(repr, value))}")
    (node_type, ids), = value.items()
    return type_node_ids(ids, name, node_type, ranges[node_type])


def type_node_ids(value, name: str, node_type: str, type_range) -> torch.Tensor:
    """The engine's global ids of `value`, ids (or a bool mask, or None: every one) of node type
    `node_type`, local to it, on any device; `type_range` is the type's global [begin, end). The one
    check of ids within a type: one outside [0, end - begin) is an IndexError naming `name`, the type
    and its range. An int64 CPU tensor."""
    begin, end = type_range
    if value is None:
        return torch.arange(begin, end, dtype=torch.int64)
    return checked_node_ids(value, f"{name}[{node_type!r}]", end - begin, f"type {node_type!r}'s ids",
                            " (ids given with their type are local to it)") + begin


def checked_node_ids(value, name: str, num_nodes: int, what: str = "the graph's ids", hint: str = "") -> torch.Tensor:
    """node_ids(value) (on any device) with each id checked against [0, num_nodes): one outside is an
    IndexError naming `name`, the id and `what` with its range, then `hint`. Where the engine does
    not check them before they index something (labels, a type's rows)."""
    if isinstance(value, torch.Tensor):
        value = value.cpu()
    ids = node_ids(value, name, num_nodes)
    if ids.numel():
        low, high = int(ids.min()), int(ids.max())
        if low < 0 or high >= num_nodes:
            raise IndexError(f"{name}: node id {low if low < 0 else high} is outside {what} [0, {num_nodes}){hint}")
    return ids
