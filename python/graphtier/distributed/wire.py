"""How the distributed sampler's requests and replies cross (DistSampler's `packed`): as int64
tensors (8 bytes a value, no work: the default), or packed, each id, count and position a varint of
its delta (graphtier/sample/row_wire.hpp, _core.pack_*: 3.5-4.5x fewer bytes, at 10-20 ns a value
of CPU on each side on the machine of docs/benchmarks.md, so for links slower than about 1-2 Gb/s
per rank). Every message is one tensor per member (uint8 packed, int64 plain), so one all-to-allv
carries each; readers take the sender's message and what the requester knows (the ids it asked
for, their count)."""

from __future__ import annotations

from typing import Tuple

import torch

from graphtier import _core

_HEAD = 8  # bytes of an int64


class Wire:
    """The messages of one DistSampler, packed or plain."""

    def __init__(self, packed: bool):
        self.packed = bool(packed)

    def ids(self, ids: torch.Tensor) -> torch.Tensor:
        return _core.pack_ids(ids) if self.packed else ids

    def read_ids(self, message: torch.Tensor) -> torch.Tensor:
        return _core.unpack_ids(message) if self.packed else message

    def request(self, head: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
        """An owner-draw request: `head` (int64: the minibatch count k, then 2k values) and the ids."""
        if self.packed:
            return torch.cat([head.view(torch.uint8), _core.pack_ids(ids)])
        return torch.cat([head, ids])

    def read_request(self, message: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        """(head, ids) of a request."""
        if not self.packed:
            k = int(message[0])
            return message[:1 + 2 * k], message[1 + 2 * k:]
        message = message.clone()  # its own storage: the int64 head is viewed at offset 0
        k = int(message[:_HEAD].view(torch.int64)[0])
        end = _HEAD * (1 + 2 * k)
        return message[:end].view(torch.int64), _core.unpack_ids(message[end:])

    def rows(self, indptr: torch.Tensor, indices: torch.Tensor, first_edge: torch.Tensor) -> torch.Tensor:
        if self.packed:
            return _core.pack_rows(indptr, indices, first_edge)
        return torch.cat([indptr[1:] - indptr[:-1], first_edge, indices])

    def read_rows(self, message: torch.Tensor, nodes: torch.Tensor):
        """(indptr, indices, first_edge) of the rows of `nodes`, as asked."""
        if self.packed:
            return _core.unpack_rows(message, nodes)
        n = int(nodes.numel())
        indptr = torch.zeros(n + 1, dtype=torch.int64)
        indptr[1:] = torch.cumsum(message[:n], dim=0)
        if message.numel() != 2 * n + int(indptr[-1]):
            raise ValueError(f"rows of {n} nodes and {int(indptr[-1])} neighbours in a message of {message.numel()} "
                             "values")
        return indptr, message[2 * n:], message[n:2 * n]

    def draws(self, counts: torch.Tensor, neighbors: torch.Tensor, edge_ids: torch.Tensor) -> torch.Tensor:
        if self.packed:
            return _core.pack_draws(counts, neighbors, edge_ids)
        return torch.cat([counts, neighbors, edge_ids])

    def read_draws(self, message: torch.Tensor, requests: int):
        """(counts, neighbours, edge ids) of `requests` requests."""
        if self.packed:
            return _core.unpack_draws(message, requests)
        counts = message[:requests]
        picks = int(counts.sum())
        if message.numel() != requests + 2 * picks:
            raise ValueError(f"draws of {requests} requests and {picks} picks in a message of {message.numel()} "
                             "values")
        return counts, message[requests:requests + picks], message[requests + picks:]
