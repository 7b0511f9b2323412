"""Minibatch loaders over the C++ pipeline (graphtier/loader/loader.hpp).

A loader is iterable once per epoch: each `for batch in loader` runs the next epoch (shuffled by
the seed and the epoch number), so a training loop needs no `set_epoch` unless it resumes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, List, Optional, Sequence, Tuple, Union

import torch

from graphtier import _core
from graphtier._ids import node_ids


@dataclass
class Block:
    """One layer of a minibatch: a bipartite CSC graph from `num_src` source nodes to the first
    `num_dst` of them (the dst nodes are a prefix of the src nodes).

    `indptr` [num_dst + 1] and `indices` [num_edges] (local positions in `src_nodes`) are int64;
    `weights` [num_edges] float32 holds the layer-wise samplers' normalised edge weights (None for
    neighbour sampling); `edge_ids` maps each edge back to the input graph (None when the sampler
    does not keep them).
    """

    num_dst: int
    src_nodes: torch.Tensor
    indptr: torch.Tensor
    indices: torch.Tensor
    edge_ids: Optional[torch.Tensor]
    weights: Optional[torch.Tensor]

    @property
    def num_src(self) -> int:
        return int(self.src_nodes.numel())

    @property
    def num_edges(self) -> int:
        return int(self.indices.numel())

    @property
    def size(self) -> Tuple[int, int]:
        """(num_src, num_dst), PyG's `size` of a bipartite `edge_index`."""
        return (self.num_src, self.num_dst)

    @property
    def dst_index(self) -> torch.Tensor:
        """The dst position of every edge (the CSC column expanded), int64 [num_edges]."""
        counts = self.indptr[1:] - self.indptr[:-1]
        return torch.repeat_interleave(torch.arange(self.num_dst, device=self.indptr.device), counts)

    @property
    def edge_index(self) -> torch.Tensor:
        """PyG-style [2, num_edges] (row 0: source = local src position, row 1: local dst position)."""
        return torch.stack([self.indices, self.dst_index])

    def to(self, device: Union[str, torch.device]) -> "Block":
        move = lambda t: None if t is None else t.to(device)  # noqa: E731
        return Block(self.num_dst, move(self.src_nodes), move(self.indptr), move(self.indices),
                     move(self.edge_ids), move(self.weights))


@dataclass
class Batch:
    """A loaded minibatch. `blocks[0]` is next to the seeds, `blocks[-1]` next to the input
    features; `x` [len(input_nodes), dim] holds the features of `input_nodes` (its first
    len(seeds) rows are the seeds'); `y` the seeds' labels (int64, -1 unlabeled)."""

    epoch: int
    index: int
    seeds: torch.Tensor
    input_nodes: torch.Tensor
    x: Optional[torch.Tensor]
    y: torch.Tensor
    blocks: List[Block]

    @property
    def num_seeds(self) -> int:
        return int(self.seeds.numel())

    @property
    def adjs(self) -> List[Tuple[torch.Tensor, Tuple[int, int]]]:
        """(edge_index, size) per layer in the order a model applies them (input side first), as
        PyG's NeighborSampler yields them."""
        return [(b.edge_index, b.size) for b in reversed(self.blocks)]

    def to(self, device: Union[str, torch.device]) -> "Batch":
        return Batch(self.epoch, self.index, self.seeds.to(device), self.input_nodes.to(device),
                     None if self.x is None else self.x.to(device), self.y.to(device),
                     [b.to(device) for b in self.blocks])


def _batch_from_dict(d: dict) -> Batch:
    blocks = [Block(b["num_dst"], b["src_nodes"], b["indptr"], b["indices"], b["edge_ids"], b["weights"])
              for b in d["blocks"]]
    return Batch(d["epoch"], d["index"], d["seeds"], d["input_nodes"], d["x"], d["labels"], blocks)


def _output_memory(device: torch.device) -> str:
    if device.type == "cpu":
        return "host"
    if device.type == "cuda":
        if not _core.cuda_available():
            raise NotImplementedError(
                "device='cuda' needs the extension built with GRAPHTIER_CUDA=ON and a visible GPU")
        return "device"
    raise ValueError(f"unsupported device {device} (expected cpu or cuda)")


class _Loader:
    def __init__(self, dataset: _core.Dataset, sampler: str, fanouts: Sequence[int], *,
                 batch_size: int, split: Optional[str], ids, shuffle: bool, drop_last: bool, seed: int,
                 replace: bool, device, store: Optional[_core.FeatureStore], gpu_hot: str, gpu_cache: str,
                 cpu_buffer: str, host_cache: str, io_depth: int, window: int, accumulate: bool,
                 max_merge: int, prefetch: int, num_threads: int, gpu_sampling: bool, topology: str,
                 topology_cache_bytes: int, features: bool = True):
        if (split is None) == (ids is None):
            raise ValueError("give exactly one of split= and ids=")
        if ids is None:
            ids = dataset.split(split)
        ids = node_ids(ids, "ids")
        self.dataset = dataset
        self.device = torch.device(device)
        output = _output_memory(self.device)
        if not features:
            store = None
        elif store is None and dataset.feature_dim > 0:
            # The open dataset, not its path: the store reads its manifest and features, and the
            # topology is validated once (when the Dataset was opened).
            store = _core.FeatureStore(dataset, gpu_hot=str(gpu_hot), gpu_cache=str(gpu_cache),
                                       cpu=str(cpu_buffer), host_cache=str(host_cache), io_depth=io_depth,
                                       threads=num_threads, device=self.device.index or 0, seed=seed)
        self.store = store
        # Every option by name (the binding takes keywords only, each required).
        self._loader = _core.Loader(
            dataset=dataset, store=store, ids=ids.numpy(), sampler=sampler, fanouts=[int(f) for f in fanouts],
            replace=replace, batch_size=batch_size, shuffle=shuffle, drop_last=drop_last, seed=seed,
            window=window, accumulate=accumulate, max_merge=max_merge, prefetch=prefetch,
            sample_threads=num_threads, output=output, device=self.device.index or 0, gpu_sampling=gpu_sampling,
            topology=topology, topology_cache_bytes=topology_cache_bytes)
        self._epoch = 0
        self._first_batch = 0

    def __len__(self) -> int:
        return self._loader.num_batches

    @property
    def position(self) -> Tuple[int, int]:
        """(epoch, batch) of the next minibatch this loader will yield: what a checkpoint keeps."""
        return (self._epoch, self._first_batch)

    def set_epoch(self, epoch: int, first_batch: int = 0) -> None:
        """Makes the next iteration run `epoch` from batch `first_batch` (resume)."""
        if first_batch < 0 or first_batch > len(self):
            raise IndexError(f"first_batch {first_batch} is outside [0, {len(self)}]")
        self._epoch, self._first_batch = int(epoch), int(first_batch)

    def __iter__(self) -> Iterator[Batch]:
        epoch = self._epoch
        self._loader.start(epoch, self._first_batch)
        try:
            while True:
                d = self._loader.next()
                if d is None:
                    break
                batch = _batch_from_dict(d)
                if self.device.type != "cpu":
                    batch = batch.to(self.device)  # x is already there: its .to() is a no-op
                # Advanced before the yield: a checkpoint taken while this batch trains resumes
                # after it.
                if batch.index + 1 < len(self):
                    self._epoch, self._first_batch = epoch, batch.index + 1
                else:
                    self._epoch, self._first_batch = epoch + 1, 0
                yield batch
        finally:
            self._loader.stop()  # early exit (break, exception): cancel the stages, join them

    def stats(self) -> dict:
        """The running or last epoch: stage busy/wait seconds, gathers, queue fill, per-tier rows,
        bytes and seconds (features), storage reads and IOPS (features.io)."""
        return self._loader.stats()


class NeighborLoader(_Loader):
    """GraphSAGE neighbour sampling: `fanouts[l]` neighbours per dst node in block l (seeds' hop
    first, -1 = all), uniform, without replacement unless `replace`.

    Feature placement: `store` (a shared graphtier.FeatureStore), or one made from the budgets
    (bytes like "4GiB" or a percent of the table like "10%"): `gpu_hot` static GPU rows, `gpu_cache`
    GPU software cache, `cpu_buffer` static pinned host rows, `host_cache` host cache of SSD rows;
    the rest is read from SSD. `window` minibatches are sampled ahead and announced to the caches;
    `accumulate` merges their SSD reads up to the store's queue depth. `features=False` samples
    only (`x` is None).
    """

    def __init__(self, dataset: _core.Dataset, fanouts: Sequence[int], batch_size: int = 1024, *,
                 split: Optional[str] = None, ids=None, shuffle: bool = True, drop_last: bool = False,
                 seed: int = 0, replace: bool = False, device="cpu", store=None, gpu_hot="0", gpu_cache="0",
                 cpu_buffer="100%", host_cache="0", io_depth: int = 0, window: int = 4, accumulate: bool = True,
                 max_merge: int = 8, prefetch: int = 2, num_threads: int = 0, gpu_sampling: bool = False,
                 topology: str = "device", topology_cache_bytes: int = 0, features: bool = True):
        super().__init__(dataset, "neighbor", fanouts, batch_size=batch_size, split=split, ids=ids,
                         shuffle=shuffle, drop_last=drop_last, seed=seed, replace=replace, device=device,
                         store=store, gpu_hot=gpu_hot, gpu_cache=gpu_cache, cpu_buffer=cpu_buffer,
                         host_cache=host_cache, io_depth=io_depth, window=window, accumulate=accumulate,
                         max_merge=max_merge, prefetch=prefetch, num_threads=num_threads,
                         gpu_sampling=gpu_sampling, topology=topology, topology_cache_bytes=topology_cache_bytes,
                         features=features)


class LayerLoader(_Loader):
    """Layer-wise sampling: LADIES (`method="ladies"`) or FastGCN (`"fastgcn"`) draws
    `layer_sizes[l]` nodes for block l; each block carries row-normalised edge `weights`
    (self-loops included). Feature options as NeighborLoader."""

    def __init__(self, dataset: _core.Dataset, layer_sizes: Sequence[int], batch_size: int = 1024, *,
                 method: str = "ladies", split: Optional[str] = None, ids=None, shuffle: bool = True,
                 drop_last: bool = False, seed: int = 0, device="cpu", store=None, gpu_hot="0", gpu_cache="0",
                 cpu_buffer="100%", host_cache="0", io_depth: int = 0, window: int = 4, accumulate: bool = True,
                 max_merge: int = 8, prefetch: int = 2, num_threads: int = 0):
        if method not in ("ladies", "fastgcn"):
            raise ValueError(f"unknown layer-wise method '{method}' (expected ladies or fastgcn)")
        super().__init__(dataset, method, layer_sizes, batch_size=batch_size, split=split, ids=ids,
                         shuffle=shuffle, drop_last=drop_last, seed=seed, replace=False, device=device,
                         store=store, gpu_hot=gpu_hot, gpu_cache=gpu_cache, cpu_buffer=cpu_buffer,
                         host_cache=host_cache, io_depth=io_depth, window=window, accumulate=accumulate,
                         max_merge=max_merge, prefetch=prefetch, num_threads=num_threads, gpu_sampling=False,
                         topology="device", topology_cache_bytes=0)
