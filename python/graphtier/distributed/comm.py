"""All-to-allv over torch.distributed: every member of a group sends a variable number of rows to
every other. Built on all_to_all_single, which Gloo (CPU) and NCCL (GPU) both implement; the
payload crosses as bytes, so any dtype travels, bfloat16 included."""

from __future__ import annotations

import socket
import threading
from dataclasses import dataclass, field
from typing import List, Optional, Sequence

import torch
import torch.distributed as dist


def free_port() -> int:
    """A free TCP port on 127.0.0.1, for a process group of this machine's processes (the tests and
    benchmarks that start their own ranks; torchrun picks its own)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class CommStats:
    """Bytes this rank sent to and received from other ranks (its own share, which never leaves the
    process, is not counted), and the exchanges made. Thread-safe: a prefetch thread and the main
    thread may count into one."""

    bytes_sent: int = 0
    bytes_received: int = 0
    exchanges: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, sent: int, received: int) -> None:
        with self._lock:
            self.bytes_sent += sent
            self.bytes_received += received
            self.exchanges += 1

    def as_dict(self) -> dict:
        with self._lock:
            return {"bytes_sent": self.bytes_sent, "bytes_received": self.bytes_received,
                    "exchanges": self.exchanges}


def alltoallv(sends: Sequence[torch.Tensor], group: Optional[dist.ProcessGroup] = None,
              stats: Optional[CommStats] = None, device: Optional[torch.device] = None) -> List[torch.Tensor]:
    """Sends sends[i] to the member of `group` whose group rank is i and returns what each member
    sent here, in group-rank order. Every tensor has the same dtype and the same shape after its
    first dimension (rows of any width; a member may send zero rows); received tensors have that
    dtype and row shape, on `device` (default: the tensors' device; NCCL needs CUDA tensors).
    Collective: every member calls it with len(sends) == group size. Two exchanges: the row counts,
    then the payload."""
    size = dist.get_world_size(group)
    me = dist.get_rank(group)
    if len(sends) != size:
        raise ValueError(f"alltoallv: {len(sends)} send buffers for a group of {size}")
    first = sends[0]
    row_shape = tuple(first.shape[1:])
    for i, t in enumerate(sends):
        if t.dtype != first.dtype or tuple(t.shape[1:]) != row_shape:
            raise ValueError(f"alltoallv: send buffer {i} is {t.dtype} {tuple(t.shape)}, buffer 0 is "
                             f"{first.dtype} {tuple(first.shape)}")
    device = first.device if device is None else torch.device(device)
    row_bytes = first.element_size()
    for extent in row_shape:
        row_bytes *= extent

    send_rows = torch.tensor([int(t.shape[0]) for t in sends], dtype=torch.int64, device=device)
    recv_rows = torch.empty(size, dtype=torch.int64, device=device)
    dist.all_to_all_single(recv_rows, send_rows, group=group)
    recv_counts = recv_rows.tolist()

    payload = [t.contiguous().reshape(-1).view(torch.uint8).to(device) for t in sends]
    send_bytes = [int(t.shape[0]) * row_bytes for t in sends]
    recv_bytes = [n * row_bytes for n in recv_counts]
    out = torch.empty(sum(recv_bytes), dtype=torch.uint8, device=device)
    dist.all_to_all_single(out, torch.cat(payload) if payload else out, recv_bytes, send_bytes, group=group)

    if stats is not None:
        stats.add(sum(send_bytes) - send_bytes[me], sum(recv_bytes) - recv_bytes[me])
    received = []
    offset = 0
    for n, nbytes in zip(recv_counts, recv_bytes):
        chunk = out[offset:offset + nbytes]
        offset += nbytes
        received.append(chunk.view(first.dtype).reshape((n,) + row_shape) if nbytes else
                        torch.empty((n,) + row_shape, dtype=first.dtype, device=device))
    return received
