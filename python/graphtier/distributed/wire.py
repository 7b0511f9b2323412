"""How the distributed sampler's requests and replies cross (DistSampler's `packed`).

- Plain (the default): node ids as int32 when the graph has fewer than 2^31 nodes (the dataset's
  own `indices` dtype then), else int64; degrees, counts, positions and edge ids as int64. A
  conversion and a copy, no more CPU than that.
- Packed: each id, count and position a varint of its delta (graphtier/sample/row_wire.hpp,
  _core.pack_*): 2-3x fewer bytes than plain, at 10-20 ns a value of CPU on each side on the
  machine of docs/benchmarks.md, so for links slower than about 0.5-1 Gb/s per rank.

Every message is one uint8 tensor per member, so one all-to-allv carries each. A plain message
puts its int64 parts first (a reader views them at the start of its own copy); readers take the
sender's message and what the requester knows (the ids it asked for, their count), and refuse a
message whose size disagrees with it (ValueError)."""

from __future__ import annotations

from typing import List, Sequence, Tuple

import torch

from graphtier import _core

_I64 = 8


def _bytes(*parts: torch.Tensor) -> torch.Tensor:
    return torch.cat([p.contiguous().view(torch.uint8) for p in parts]) if parts else torch.empty(0, dtype=torch.uint8)


def _split(message: torch.Tensor, what: str, sizes: Sequence[Tuple[int, torch.dtype]]) -> List[torch.Tensor]:
    """The parts of a plain message: sizes[i] = (values, dtype), in order, the int64 ones first."""
    expected = sum(n * torch.empty(0, dtype=t).element_size() for n, t in sizes)
    if message.numel() != expected:
        raise ValueError(f"{what}: a message of {message.numel()} bytes, expected {expected}")
    message = message.clone()  # its own storage, so that the int64 parts start 8-byte aligned
    out, at = [], 0
    for n, dtype in sizes:
        size = n * torch.empty(0, dtype=dtype).element_size()
        out.append(message[at:at + size].view(dtype).to(torch.int64))
        at += size
    return out


class Wire:
    """The messages of one DistSampler over a graph of `num_nodes` nodes, packed or plain."""

    def __init__(self, packed: bool, num_nodes: int):
        self.packed = bool(packed)
        self.id_dtype = torch.int32 if num_nodes <= 1 << 31 else torch.int64

    def ids(self, ids: torch.Tensor) -> torch.Tensor:
        return _core.pack_ids(ids) if self.packed else _bytes(ids.to(self.id_dtype))

    def read_ids(self, message: torch.Tensor) -> torch.Tensor:
        if self.packed:
            return _core.unpack_ids(message)
        size = torch.empty(0, dtype=self.id_dtype).element_size()
        if message.numel() % size:
            raise ValueError(f"ids: a message of {message.numel()} bytes, not a multiple of {size}")
        return _split(message, "ids", [(message.numel() // size, self.id_dtype)])[0]

    def request(self, head: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
        """An owner-draw request: `head` (int64: the minibatch count k, then 2k values) and the ids."""
        if self.packed:
            return torch.cat([head.view(torch.uint8), _core.pack_ids(ids)])
        return _bytes(head, ids.to(self.id_dtype))

    def read_request(self, message: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        """(head, ids) of a request."""
        if message.numel() < _I64:
            raise ValueError(f"request: a message of {message.numel()} bytes")
        message = message.clone()  # its own storage: the int64 head is viewed at offset 0
        k = int(message[:_I64].view(torch.int64)[0])
        end = _I64 * (1 + 2 * k)
        if k < 0 or message.numel() < end:
            raise ValueError(f"request: {k} minibatches in a message of {message.numel()} bytes")
        head = message[:end].view(torch.int64)
        rest = message[end:]
        return head, (_core.unpack_ids(rest) if self.packed else self.read_ids(rest))

    def rows(self, indptr: torch.Tensor, indices: torch.Tensor, first_edge: torch.Tensor) -> torch.Tensor:
        if self.packed:
            return _core.pack_rows(indptr, indices, first_edge)
        return _bytes(indptr[1:] - indptr[:-1], first_edge, indices.to(self.id_dtype))

    def read_rows(self, message: torch.Tensor, nodes: torch.Tensor):
        """(indptr, indices, first_edge) of the rows of `nodes`, as asked."""
        if self.packed:
            return _core.unpack_rows(message, nodes)
        n = int(nodes.numel())
        if message.numel() < 2 * _I64 * n:
            raise ValueError(f"rows: a message of {message.numel()} bytes for {n} rows")
        degree = message[:_I64 * n].clone().view(torch.int64)
        indptr = torch.zeros(n + 1, dtype=torch.int64)
        indptr[1:] = torch.cumsum(degree, dim=0)
        _, first_edge, indices = _split(message, "rows", [(n, torch.int64), (n, torch.int64),
                                                          (int(indptr[-1]), self.id_dtype)])
        return indptr, indices, first_edge

    def draws(self, counts: torch.Tensor, neighbors: torch.Tensor, edge_ids: torch.Tensor) -> torch.Tensor:
        if self.packed:
            return _core.pack_draws(counts, neighbors, edge_ids)
        return _bytes(counts, edge_ids, neighbors.to(self.id_dtype))

    def read_draws(self, message: torch.Tensor, requests: int):
        """(counts, neighbours, edge ids) of `requests` requests."""
        if self.packed:
            return _core.unpack_draws(message, requests)
        if message.numel() < _I64 * requests:
            raise ValueError(f"draws: a message of {message.numel()} bytes for {requests} requests")
        picks = int(message[:_I64 * requests].clone().view(torch.int64).sum())
        counts, edge_ids, neighbors = _split(message, "draws", [(requests, torch.int64), (picks, torch.int64),
                                                                (picks, self.id_dtype)])
        return counts, neighbors, edge_ids
