"""Minibatch loaders over the C++ pipeline (graphtier/loader/loader.hpp).

Each `iter(loader)` is a fresh pass, as with a PyTorch DataLoader: it runs one whole epoch
(shuffled by the seed and the epoch number), the epoch after the previous pass's (epoch 0 first),
from batch 0, unless `set_epoch` chose where it starts. So `for epoch ...: for batch in loader` runs
epochs 0, 1, 2, ..., a training loop needs no `set_epoch` unless it resumes, and a pass abandoned
halfway (`break`, `next(iter(loader))`) takes nothing from the next one. The engine runs one pass
at a time: a new `iter(loader)` stops the pipeline of an older live iterator, and using that older
iterator afterwards is a RuntimeError (it never yields batches of the newer pass).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Dict, Iterator, List, Optional, Sequence, Tuple, Union

import torch

from graphtier import _core
from graphtier import options as _options
from graphtier import threads
from graphtier._ids import node_ids, typed_node_ids
from graphtier.dataset import content_hash, open_dataset


class _Csc:
    """What a bipartite CSC (`indptr` [num_dst + 1], `indices` [num_edges] of source positions, and
    `num_src` / `num_dst`) offers: Block's and RelationBlock's shared views."""

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
        """PyG-style [2, num_edges]: row 0 the source's position, row 1 the destination's."""
        return torch.stack([self.indices, self.dst_index])


@dataclass
class Block(_Csc):
    """One layer of a minibatch: a bipartite CSC graph from `num_src` source nodes to the first
    `num_dst` of them (the dst nodes are a prefix of the src nodes).

    `indptr` [num_dst + 1] and `indices` [num_edges] (local positions in `src_nodes`) are int64;
    `weights` [num_edges] float32 holds the layer-wise samplers' normalised edge weights (None for
    neighbour sampling); `edge_ids` maps each edge back to the input graph (None when the sampler
    does not keep them); `edge_types` [num_edges] uint8 is each edge's relation id on a typed graph
    (None otherwise), and `split` gives the block by node type and relation. `src_trees` [num_src]
    int64 is, in a temporal batch (time_attr), the tree (seed index) each src node belongs to: the
    trees are disjoint, so one global id may appear once per tree (PyG's `batch`); None otherwise.
    """

    num_dst: int
    src_nodes: torch.Tensor
    indptr: torch.Tensor
    indices: torch.Tensor
    edge_ids: Optional[torch.Tensor]
    weights: Optional[torch.Tensor]
    edge_types: Optional[torch.Tensor] = None
    src_trees: Optional[torch.Tensor] = None

    @staticmethod
    def from_dict(d: dict) -> "Block":
        """A block from the engine's dict of one layer (python/src: block_dict, the one writer of
        its keys)."""
        return Block(d["num_dst"], d["src_nodes"], d["indptr"], d["indices"], d["edge_ids"], d["weights"],
                     d["edge_types"], d.get("src_trees"))

    def split(self, node_type_offset: torch.Tensor, relations: List[Tuple[int, int]]) -> dict:
        """The block of a typed graph by node type and relation (host memory), what PyG's
        HeteroData and DGL's heterogeneous blocks are built from: {"num_dst": [T] ints,
        "src_nodes": [T] int64 tensors of global ids (the type's dst nodes first, in block order),
        "relations": [R] dicts of "indptr" [num_dst of the dst type + 1], "indices" (positions in
        the src type's list) and "block_edges" (each edge's position in this block, to take its
        edge_ids or weights)}. Every type and every relation is present, empty ones too.
        `node_type_offset` int64 [T + 1] and `relations` [(src_type, dst_type)] * R are the
        graph's (graphtier/graph/hetero_view.hpp)."""
        if self.edge_types is None:
            raise ValueError("split: this block has no edge types (its graph is not typed)")
        cpu = lambda t: t.cpu().contiguous()  # noqa: E731
        return _core.split_block(self.num_dst, cpu(self.src_nodes), cpu(self.indptr), cpu(self.indices),
                                 cpu(self.edge_types), node_ids(node_type_offset, "node_type_offset"),
                                 [(int(s), int(d)) for s, d in relations])

    @property
    def num_src(self) -> int:
        return int(self.src_nodes.numel())

    def to(self, device: Union[str, torch.device]) -> "Block":
        move = lambda t: None if t is None else _to_device(t, device)  # noqa: E731
        return Block(self.num_dst, move(self.src_nodes), move(self.indptr), move(self.indices),
                     move(self.edge_ids), move(self.weights), move(self.edge_types), move(self.src_trees))


def _times(values, name: str = "input_time") -> torch.Tensor:
    """`values` (a tensor, array or sequence of integers) as a contiguous int64 CPU tensor of one
    dimension: the timestamps `name` (input_time, edge_label_time); floats and other shapes are a
    ValueError."""
    t = torch.as_tensor(values)
    if t.dtype.is_floating_point or t.dtype == torch.bool or t.is_complex():
        raise ValueError(f"{name}: expected integer timestamps (int64), got {t.dtype}")
    if t.dim() != 1:
        raise ValueError(f"{name}: expected one time per seed (1 dimension), got shape {tuple(t.shape)}")
    return t.to(device="cpu", dtype=torch.int64).contiguous()


@dataclass
class RelationBlock(_Csc):
    """One relation's edges of a TypedBlock: a CSC from the `num_src` nodes of the relation's source
    type to the first `num_dst` nodes of its destination type (positions in TypedBlock.src_nodes of
    each type). `indptr` [num_dst + 1], `indices` [num_edges] and `block_edges` [num_edges] (each
    edge's position in the untyped Block, for its edge_ids) are int64."""

    src_type: str
    dst_type: str
    num_src: int
    num_dst: int
    indptr: torch.Tensor
    indices: torch.Tensor
    block_edges: torch.Tensor

    def to(self, device: Union[str, torch.device]) -> "RelationBlock":
        return RelationBlock(self.src_type, self.dst_type, self.num_src, self.num_dst,
                             _to_device(self.indptr, device), _to_device(self.indices, device),
                             _to_device(self.block_edges, device))


@dataclass
class TypedBlock:
    """A typed dataset's Block by node type and relation (graphtier/sample/hetero_block.hpp), keyed by
    the dataset's names: `src_nodes[t]` int64 global ids of type t (all in its id range), the
    type's `num_dst[t]` dst nodes first, which are the previous block's src nodes of type t;
    `relations[r]` a RelationBlock per relation "src:rel:dst". Every type and every relation is
    present, empty ones too. Temporal batches: `src_trees[t]` each src node's tree (its seed's
    index, PyG's `batch`), else None."""

    num_dst: Dict[str, int]
    src_nodes: Dict[str, torch.Tensor]
    relations: Dict[str, RelationBlock]
    src_trees: Optional[Dict[str, torch.Tensor]] = None

    @staticmethod
    def from_dict(d: dict, node_types: Sequence[str], relations: Sequence[str]) -> "TypedBlock":
        """From the engine's dict of a split block (python/src: hetero_block_dict, the one writer of
        its keys) and the dataset's type and relation names (Dataset.node_types, .relations)."""
        num_dst = dict(zip(node_types, (int(n) for n in d["num_dst"])))
        src_nodes = dict(zip(node_types, d["src_nodes"]))
        rels = {}
        for name, r in zip(relations, d["relations"]):
            src, _, dst = name.split(":")
            rels[name] = RelationBlock(src, dst, int(src_nodes[src].numel()), num_dst[dst], r["indptr"], r["indices"],
                                       r["block_edges"])
        trees = None if d.get("src_trees") is None else dict(zip(node_types, d["src_trees"]))
        return TypedBlock(num_dst, src_nodes, rels, trees)

    def to(self, device: Union[str, torch.device]) -> "TypedBlock":
        return TypedBlock(dict(self.num_dst), {t: _to_device(v, device) for t, v in self.src_nodes.items()},
                          {r: b.to(device) for r, b in self.relations.items()},
                          None if self.src_trees is None else
                          {t: _to_device(v, device) for t, v in self.src_trees.items()})


@dataclass
class Batch:
    """A loaded minibatch. `blocks[0]` is next to the seeds, `blocks[-1]` next to the input
    features; `x` [len(input_nodes), dim] holds the features of `input_nodes` (its first
    len(seeds) rows are the seeds'); `y` the seeds' labels (int64, -1 unlabeled); `seed_positions`
    (int64, on the host) each seed's position in the loader's `ids` or split (PyG's `input_id`),
    None where the batch came from elsewhere.

    A typed dataset's batch also has `typed_blocks` (blocks[l] by node type and relation, a
    TypedBlock each) and `x_dict` ({type: features of typed_blocks[-1].src_nodes[type]} for the
    types with a feature table; a type without one is absent: a model gives it learned
    embeddings); both None for a homogeneous dataset. The seeds are of the labelled type."""

    epoch: int
    index: int
    seeds: torch.Tensor
    input_nodes: torch.Tensor
    x: Optional[torch.Tensor]
    y: torch.Tensor
    blocks: List[Block]
    seed_positions: Optional[torch.Tensor] = None
    typed_blocks: Optional[List[TypedBlock]] = None
    x_dict: Optional[Dict[str, torch.Tensor]] = None

    @property
    def num_seeds(self) -> int:
        return int(self.seeds.numel())

    @property
    def input_nodes_dict(self) -> Optional[Dict[str, torch.Tensor]]:
        """A typed batch's input nodes by type (global ids; typed_blocks[-1].src_nodes), else None."""
        return None if not self.typed_blocks else self.typed_blocks[-1].src_nodes

    @property
    def adjs(self) -> List[Tuple[torch.Tensor, Tuple[int, int]]]:
        """One `(edge_index, size)` pair per layer (a list, also for one layer), in the order a model
        applies them: input side first, i.e. `blocks` reversed. `edge_index` is Block.edge_index
        (int64 [2, num_edges]: row 0 the local src position, row 1 the local dst position) and `size`
        is `(num_src, num_dst)`. PyG's NeighborSampler yields `(edge_index, e_id, size)` triples
        instead: unpack these as `for edge_index, size in batch.adjs` (the edges' ids, where the
        sampler keeps them, are in `blocks[l].edge_ids`)."""
        return [(b.edge_index, b.size) for b in reversed(self.blocks)]

    def to(self, device: Union[str, torch.device]) -> "Batch":
        """The batch on `device`. Host tensors reach a CUDA device through pinned memory with
        non_blocking copies on the current stream: the training step never waits for them (the
        labels of every batch, the blocks of a CPU-sampled one)."""
        return Batch(self.epoch, self.index, _to_device(self.seeds, device), _to_device(self.input_nodes, device),
                     None if self.x is None else _to_device(self.x, device), _to_device(self.y, device),
                     [b.to(device) for b in self.blocks], self.seed_positions,
                     None if self.typed_blocks is None else [b.to(device) for b in self.typed_blocks],
                     None if self.x_dict is None else {t: _to_device(x, device) for t, x in self.x_dict.items()})


def _to_device(t: torch.Tensor, device: Union[str, torch.device]) -> torch.Tensor:
    """`t` on `device`; a host tensor bound for a CUDA device is copied into pinned memory (PyTorch's
    caching host allocator, which reuses that block only after the copy has run) and then without a
    host wait: a pageable copy would block the step."""
    device = torch.device(device)
    if device.type != "cuda" or t.device.type != "cpu":
        return t.to(device)
    if not t.is_pinned():
        t = t.pin_memory()
    return t.to(device, non_blocking=True)


def _batch_from_dict(d: dict, node_types: Sequence[str] = (), relations: Sequence[str] = ()) -> Batch:
    """A Batch from the engine's dict (python/src/loader.cpp: batch_dict); a typed dataset's
    `node_types` and `relations` name its typed blocks and x_dict."""
    blocks = [Block.from_dict(b) for b in d["blocks"]]
    typed_blocks = x_dict = None
    if node_types:
        typed_blocks = [TypedBlock.from_dict(b, node_types, relations) for b in d["hetero_blocks"]]
        x_dict = {t: x for t, x in zip(node_types, d["type_x"]) if x is not None}
    return Batch(d["epoch"], d["index"], d["seeds"], d["input_nodes"], d["x"], d["labels"], blocks,
                 d["seed_positions"], typed_blocks, x_dict)


class Adapter:
    """What the loaders with another framework's interface (graphtier.pyg, graphtier.dgl) pass
    through to the graphtier.NeighborLoader they wrap (`self.loader`)."""

    loader: "NeighborLoader"

    def __len__(self) -> int:
        return len(self.loader)

    def set_epoch(self, epoch: int, first_batch: int = 0) -> None:
        """graphtier.NeighborLoader.set_epoch: the epoch (and batch) the next pass runs."""
        self.loader.set_epoch(epoch, first_batch)

    def stats(self) -> dict:
        """graphtier.NeighborLoader.stats: the pipeline's and the feature tiers' statistics."""
        return self.loader.stats()

    def state_dict(self) -> dict:
        """graphtier.NeighborLoader.state_dict: where the wrapped loader is, to resume mid-epoch."""
        return self.loader.state_dict()

    def load_state_dict(self, state: dict) -> None:
        """graphtier.NeighborLoader.load_state_dict: the next pass resumes where `state` was taken."""
        self.loader.load_state_dict(state)


def seed_from_torch(kwargs: dict) -> None:
    """For the loaders with another framework's interface (graphtier.pyg, graphtier.dgl): without
    `seed=` (or `options=`, which carries one) the seed is torch's, the one `torch.manual_seed(s)`
    last set (`torch.initial_seed()`), so it decides the shuffle and sample streams as it decides
    PyG's and DGL's. Nothing is drawn from torch's generator, so a script's model initialisation is
    the same as with their own loaders."""
    if kwargs.get("seed") is None and kwargs.get("options") is None:
        kwargs["seed"] = torch.initial_seed()


def every_node(kwargs: dict) -> None:
    """For the adapters' "every node" seeds (PyG's input_nodes=None), which are the same nodes in
    either numbering: the ids_numbering that a renumbered dataset needs said, unless the caller said one."""
    options = kwargs.get("options")
    if "ids_numbering" not in kwargs and (options is None or options.ids_numbering is None):
        kwargs["ids_numbering"] = "prepared"  # keywords override the options' fields


def _output_memory(device: torch.device) -> str:
    if device.type == "cpu":
        return "host"
    if device.type == "cuda":
        if not _core.cuda_available():
            raise NotImplementedError(
                "device='cuda' needs the extension built with GRAPHTIER_CUDA=ON and a visible GPU")
        return "device"
    raise ValueError(f"unsupported device {device} (expected cpu or cuda)")


# The fields a loader sets itself: the sampler from its class, the output memory and GPU from
# `device=`.
_FIXED = ("sampler", "output", "device", "device_batches")
# FeatureStore options that conflict with a shared `store=` (which has its own); `seed` also seeds
# the sampler, so it is the loader's as well.
_STORE_ONLY = tuple(n for n in _options.FeatureStoreOptions.fields if n not in _options.LoaderOptions.fields)


class _Loader:
    def __init__(self, dataset: Union[_core.Dataset, str], sampler: str, fanouts: Sequence[int], batch_size: Optional[int], *,
                 split: Optional[str], ids, device, store, features: bool, options: Optional[_core.LoaderOptions],
                 kwargs: dict, input_time=None):
        dataset = open_dataset(dataset, "dataset")
        argument = kwargs.pop("_ids_argument", "ids")  # the adapters' name for it (input_nodes, indices)
        if (split is None) == (ids is None):
            raise ValueError("give exactly one of split= and ids=")
        if ids is not None:
            ids = (typed_node_ids(dataset, ids, argument) if dataset.node_types else
                   node_ids(ids, argument, dataset.num_nodes))
        from_split = None
        if input_time is not None:
            input_time = _times(input_time)
            if split is not None:  # the times go with ids: the split's, in its order (the engine's global ids)
                ids, split, from_split = _core.Dataset.split(dataset, split), None, split
        shared_typed = isinstance(store, _core.TypedFeatureStore)
        shared = isinstance(store, _core.FeatureStore) or shared_typed
        if store is not None and not shared and not isinstance(store, _core.FeatureStoreOptions):
            raise TypeError(f"store: expected a graphtier.FeatureStore, TypedFeatureStore or FeatureStoreOptions, "
                            f"got {type(store).__name__}")
        o, store_options, store_named = _options.route(kwargs, options, None if shared else store, fixed=_FIXED)
        if from_split is not None:  # the split's ids are the dataset's own
            if o.ids_numbering == "original":
                raise ValueError(f"the {from_split} split is in the dataset's own numbering: ids_numbering 'original' "
                                 f"applies to ids given, not to a split")
            o.ids_numbering = "prepared"
        if not o.gpu_sampling:  # GPU sampling's threads drive streams: the engine keeps its 4
            o.sample_threads = threads.engine_threads(o.sample_threads)
        conflicting = sorted(store_named & set(_STORE_ONLY)) if shared else []
        if conflicting:
            raise ValueError(f"store= is a FeatureStore with its own tiers: drop {'=, '.join(conflicting)}= "
                             f"(or pass store=FeatureStoreOptions(...))")
        self.dataset = dataset
        self.ids = ids  # checked: int64, the engine's (global) ids, in the numbering given; None over a split
        self.device = torch.device(device)
        o.sampler = sampler
        o.fanouts = [int(f) for f in fanouts]
        if batch_size is not None:
            o.batch_size = batch_size
        o.output = _output_memory(self.device)
        o.device = self.device.index or 0
        o.device_batches = self.device.type == "cuda"
        typed_store = None
        if not features:
            store = None
        elif shared_typed:
            typed_store, store = store, None
        elif dataset.node_types and any(dataset.node_type_feature_dims):
            # A typed dataset's per-type tables: a TypedFeatureStore with the same options.
            if shared:
                raise ValueError("store= is a FeatureStore of one table; a typed dataset's features are per type "
                                 "(pass a graphtier.TypedFeatureStore, FeatureStoreOptions(...) or nothing)")
            store_options.device = o.device
            if store is None and "seed" not in store_named:
                store_options.seed = o.seed
            typed_store = _core.TypedFeatureStore(dataset, options=store_options, threads=o.sample_threads)
            store = None
        elif not shared and dataset.feature_dim > 0:
            # The open dataset, not its path: the store reads its manifest and features, and the
            # topology is validated once (when the Dataset was opened).
            store_options.device = o.device
            if store is None and "seed" not in store_named:
                store_options.seed = o.seed  # the defaults': one seed for the loader and its store
            store = _core.FeatureStore(dataset, options=store_options, threads=o.sample_threads)
        elif not shared:
            store = None
        self.store = store
        self.typed_store = typed_store
        self.options = o
        self._node_types = list(dataset.node_types)  # a typed dataset's names, for its batches
        self._relations = list(dataset.relations)
        self._loader = _core.Loader(dataset=dataset, store=store, ids=None if ids is None else ids.numpy(),
                                    split=split, options=o, typed_store=typed_store,
                                    input_time=None if input_time is None else input_time.numpy())
        self._batch_stride = int(o.batch_stride)
        self._position = (0, 0)
        self._start: Optional[Tuple[int, int]] = None  # set_epoch's, for the next pass only
        self._last_epoch = -1  # epoch of the last pass started
        self._pass = 0  # generation of the newest pass; older iterators compare theirs with it
        self._stream = (split, ids, input_time)  # what the minibatches depend on, for state_dict (hashed when asked)

    def __len__(self) -> int:
        """Batches a pass delivers (with batch_offset/batch_stride, only the selected ones)."""
        return self._loader.num_delivered

    @property
    def num_batches(self) -> int:
        """Batches of an epoch before striding: batch indices run over [0, num_batches)."""
        return self._loader.num_batches

    @property
    def position(self) -> Tuple[int, int]:
        """(epoch, batch) of the minibatch after the last one yielded: what a checkpoint keeps, and
        where `set_epoch(*position)` continues an interrupted pass. (epoch + 1, 0) once a pass has
        yielded its last batch."""
        return self._position

    def set_epoch(self, epoch: int, first_batch: int = 0) -> None:
        """Makes the next pass (`iter(loader)`) run `epoch` from batch `first_batch` (resume; a batch
        index, with striding the pass starts at the first selected batch >= it); later passes follow
        from there."""
        if first_batch < 0 or first_batch > self.num_batches:
            raise IndexError(f"first_batch {first_batch} is outside [0, {self.num_batches}]")
        self._start = (int(epoch), int(first_batch))
        self._position = self._start

    def __iter__(self) -> Iterator[Batch]:
        epoch, first = self._start if self._start is not None else (self._last_epoch + 1, 0)
        self._start = None
        self._last_epoch = epoch
        self._position = (epoch, first)
        self._pass += 1
        self._loader.start(epoch, first)  # stops the pipeline of an older pass, if one runs
        return _Pass(self, self._pass, epoch)

    def stats(self) -> dict:
        """The running or last epoch: stage busy/wait seconds, the time the window's announce/consume
        waited for the feature caches' lock (window_wait_seconds), gathers, queue fill, per-tier
        rows, bytes and seconds (features), storage reads and IOPS (features.io)."""
        return self._loader.stats()

    def state_dict(self) -> dict:
        """The stateful-dataloader protocol (torchdata's StatefulDataLoader): where the loader is,
        `position`, and what its minibatches depend on (the dataset's content, the seeds, the
        sampling options). Plain values: it goes into a checkpoint next to the model's. Taken
        mid-pass, `load_state_dict` on a fresh loader makes its next pass deliver exactly the
        batches this pass has not yet yielded (minibatch b of epoch e is a function of the seed,
        e and b), then the epochs after it."""
        return {"epoch": self._position[0], "batch": self._position[1], "identity": self._identity()}

    def load_state_dict(self, state: dict) -> None:
        """Resumes where `state` (a state_dict) was taken: the next pass continues its epoch at its
        batch. ValueError naming the first difference when it was taken on another dataset (by
        content), other seeds or other sampling options."""
        self.set_epoch(*state_position(state, self._identity()))

    def _identity(self) -> dict:
        return _stream_identity(self.dataset, self.options, *self._stream)


def state_position(state: dict, identity: dict) -> Tuple[int, int]:
    """(epoch, batch) of a loader's state_dict `state`, once its identity is checked against this
    loader's `identity`: a ValueError names the first difference (another dataset, other seeds or
    options), or says what `state` is not. The one check of the loaders' load_state_dict."""
    if not isinstance(state, dict) or not {"epoch", "batch", "identity"} <= set(state):
        raise ValueError("load_state_dict: expected a graphtier loader's state_dict() (epoch, batch, identity), "
                         f"got {type(state).__name__} {sorted(state) if isinstance(state, dict) else ''}".rstrip())
    theirs = state["identity"]
    for key, mine in identity.items():
        if theirs.get(key) != mine:
            raise ValueError(f"load_state_dict: the state is of another loader: its {key} is {theirs.get(key)!r}, "
                             f"this loader's {mine!r}")
    return int(state["epoch"]), int(state["batch"])


def digest(data: bytes) -> str:
    """16 hex digits of SHA-256: a tensor's bytes in a loader's identity."""
    return hashlib.sha256(data).hexdigest()[:16]


# The loader options a minibatch's content depends on (threads, window and queue depths do not).
_STREAM_OPTIONS = ("sampler", "fanouts", "relation_fanouts", "replace", "time_attr", "temporal_strategy", "batch_size",
                   "shuffle", "drop_last", "batch_offset", "batch_stride", "seed", "bulk", "gpu_sampling",
                   "ids_numbering")


def _stream_identity(dataset: _core.Dataset, o: _core.LoaderOptions, split: Optional[str], ids,
                     input_time) -> dict:
    """What a loader's minibatches depend on, for state_dict: the dataset by content (content_hash,
    as a checkpoint's), the seeds and the sampling options."""
    content = content_hash(dataset.file_checksums)
    seeds = f"split {split}" if split is not None else f"ids {digest(ids.numpy().tobytes())}"
    if input_time is not None:
        seeds += f", input_time {digest(input_time.numpy().tobytes())}"
    opts = {}
    for name in _STREAM_OPTIONS:
        value = getattr(o, name)
        opts[name] = dict(value) if isinstance(value, dict) else list(value) if isinstance(value, list) else value
    return {"dataset": f"{dataset.name} {content}", "seeds": seeds, **opts}


class _Pass:
    """One iteration of a loader: the batches of one epoch, in order, while it is the loader's newest
    pass. Closing it early (break, an exception, garbage collection) cancels the pipeline's stages
    and joins them; an older pass's close leaves the newer pass running."""

    def __init__(self, loader: _Loader, generation: int, epoch: int):
        self._owner = loader
        self._generation = generation
        self._epoch = epoch
        self._done = False

    def __iter__(self) -> "_Pass":
        return self

    def _current(self) -> bool:
        return self._owner._pass == self._generation

    def __next__(self) -> Batch:
        if self._done:
            raise StopIteration
        loader = self._owner
        if not self._current():
            raise RuntimeError(f"this iterator of the loader (epoch {self._epoch}) was superseded by a newer "
                               f"iter(loader): the loader runs one pass at a time")
        # The stream that reads the batch's device tensors (torch's current one): their memory is
        # freed after the work queued on it when the last of them dies.
        stream = 0
        if loader.device.type == "cuda":
            stream = torch.cuda.current_stream(torch.device("cuda", loader.device.index or 0)).cuda_stream
        try:
            d = loader._loader.next(stream)
        except BaseException:
            self.close()
            raise
        if d is None:
            if self._current():
                loader._position = (self._epoch + 1, 0)  # also after an empty pass (no batch left)
            # Its stages have ended; the sampler goes on with the next epoch's first batches (the
            # next pass's, unless set_epoch picks another), so it is not stopped here.
            self._done = True
            raise StopIteration
        batch = _batch_from_dict(d, loader._node_types, loader._relations)
        if loader.device.type != "cpu":
            # x is already there, and so are the blocks, seeds and input nodes when they were sampled
            # on the GPU by the neighbour sampler (their .to() is a no-op); the labels come from the
            # host, pinned, by a non_blocking copy on the current stream (Batch.to).
            batch = batch.to(loader.device)
        # Advanced before the batch is handed out: a checkpoint taken while it trains resumes after it
        # (at the next batch this loader delivers).
        if batch.index + loader._batch_stride < loader.num_batches:
            loader._position = (self._epoch, batch.index + loader._batch_stride)
        else:
            loader._position = (self._epoch + 1, 0)
        return batch

    def close(self) -> None:
        """Ends the pass; when it is the loader's newest, cancels the stages and joins them."""
        if not self._done:
            self._done = True
            if self._current():
                self._owner._loader.stop()

    def __del__(self) -> None:
        self.close()


_OPTIONS_DOC = """
    Options, as keywords or in `options` (a graphtier.LoaderOptions; keywords override its fields)
    and, for the store the loader makes, in `store` (a graphtier.FeatureStoreOptions) or as
    keywords; `store` may instead be a shared graphtier.FeatureStore, which has its own tiers (its
    options as keywords are then a ValueError). `ids=` (integer ids or a bool mask over the nodes)
    are in the numbering `ids_numbering` names: "prepared", the dataset's own (that of its splits
    and of every batch), or "original", that of the input the dataset was converted from, before
    `graphtier prepare` renumbered it (Dataset.from_original maps them); on a renumbered dataset
    it must be given (ids look alike in both), elsewhere None reads them as the dataset's own. On a
    typed dataset `ids=` is {labelled type: ids or a mask within the type} (Dataset.split's layout).

"""


def _options_doc() -> str:
    loader = [n for n in _options.LoaderOptions.fields if n not in _FIXED + ("fanouts", "batch_size")]
    return (_OPTIONS_DOC + "    LoaderOptions:\n" + _options.describe(_options.LoaderOptions, loader) +
            "\n    FeatureStoreOptions:\n" + _options.describe(_options.FeatureStoreOptions, _STORE_ONLY) + "\n")


class NeighborLoader(_Loader):
    """GraphSAGE neighbour sampling: `fanouts[l]` neighbours per dst node in block l (seeds' hop
    first, -1 = all), uniform, without replacement unless `replace`.

    Feature placement: `store` (a shared graphtier.FeatureStore), or one the loader makes from
    FeatureStoreOptions, whose budgets (bytes like "4GiB" or a percent of the table like "10%") are
    `gpu_hot` static GPU rows, `gpu_cache` GPU software cache, `cpu_buffer` static pinned host rows,
    `host_cache` host cache of SSD rows; the rest is read from SSD. `window` minibatches are sampled ahead and announced to the caches;
    `accumulate` merges their SSD reads up to the store's queue depth. `features=False` samples
    only (`x` is None).

    With `gpu_sampling` and a CUDA `device`, the blocks, seeds and input nodes stay on the GPU
    where they were sampled (device tensors shared through DLPack, no host round trip); a block's
    memory returns to the sampler when its last tensor dies, after the work queued meanwhile on
    the stream that was current when the batch was delivered (work on another stream must finish
    first, e.g. with a synchronize, before the batch's tensors are dropped).

    `bulk=k` (k >= 1) samples k minibatches per call with the bulk matrix GraphSAGE sampler (on
    the GPU with `gpu_sampling`): parallel edges merge into one entry, so a node keeps
    min(fanout, distinct neighbours); 0 samples one minibatch at a time. `batch_offset` and
    `batch_stride` make a pass deliver only batches offset, offset + stride, ... (rank K of P:
    offset K, stride P), each the same minibatch as without striding.

    A typed dataset (Dataset.is_hetero) is sampled per relation: `fanouts[l]` neighbours of each
    relation per dst node in block l, or `relation_fanouts[name][l]` for a relation named there
    ("src:rel:dst", as Dataset.relations lists them); seeds from a split or `ids={labelled type:
    ids within it}` are of the labelled type (a bare id tensor is refused: its numbering, global or
    within the type, cannot be told).
    Its batches carry `typed_blocks` and, for the types with a feature table, `x_dict` (from a
    TypedFeatureStore made with the store options, gathered on `device` as `x` is, each type's rows
    announced to its own store's window and merged gathers reading each type once). CPU sampling
    only.

    Temporal sampling (`time_attr="node_time"` or `"edge_time"`, the dataset's Dataset.node_time or
    edge_time): each seed's tree reaches only neighbours whose node (or edge) time is no later than
    the seed's time, `input_time[i]` for `ids[i]` (or the split's i-th id) when given, else the
    seed's node time; `temporal_strategy` "uniform" draws up to the fanout of them uniformly, "last"
    takes the most recent. The trees are disjoint, as PyG's (`Block.src_trees`). CPU sampling of a
    homogeneous dataset, bulk 0.
    """

    def __init__(self, dataset: Union[_core.Dataset, str], fanouts: Sequence[int], batch_size: Optional[int] = None, *,
                 split: Optional[str] = None, ids=None, device="cpu", store=None, features: bool = True,
                 options: Optional[_core.LoaderOptions] = None, input_time=None, **kwargs):
        super().__init__(dataset, "neighbor", fanouts, batch_size, split=split, ids=ids, device=device, store=store,
                         features=features, options=options, kwargs=kwargs, input_time=input_time)


class LayerLoader(_Loader):
    """Layer-wise sampling: LADIES (`method="ladies"`) or FastGCN (`"fastgcn"`) draws
    `layer_sizes[l]` nodes for block l; each block carries row-normalised edge `weights`
    (self-loops included). Feature options as NeighborLoader.

    Sampling runs on the GPU with `gpu_sampling` (None, the default: when `device` is a CUDA
    device), with the same minibatches as on the CPU (CudaLayerSampler: the topology is copied to
    the GPU once); with a CUDA `device` its blocks (weights included), seeds and input nodes stay
    on the GPU as with NeighborLoader (the bulk sampler's too). `bulk=k`
    (k >= 1, LADIES only) samples k minibatches per call with the bulk matrix LADIES sampler
    (CudaBulkSampler with GPU sampling): its blocks hold A + I's entries, self-loops included, as
    LayerSampler's, but with parallel edges merged (weights (A + I)/P row-normalised) and drawn
    otherwise. Striding as NeighborLoader."""

    def __init__(self, dataset: Union[_core.Dataset, str], layer_sizes: Sequence[int], batch_size: Optional[int] = None, *,
                 method: str = "ladies", split: Optional[str] = None, ids=None, device="cpu", store=None,
                 options: Optional[_core.LoaderOptions] = None, **kwargs):
        if method not in ("ladies", "fastgcn"):
            raise ValueError(f"unknown layer-wise method '{method}' (expected ladies or fastgcn)")
        if options is None and kwargs.get("gpu_sampling") is None:
            kwargs["gpu_sampling"] = torch.device(device).type == "cuda"
        super().__init__(dataset, method, layer_sizes, batch_size, split=split, ids=ids, device=device, store=store,
                         features=True, options=options, kwargs=kwargs)


NeighborLoader.__doc__ += _options_doc()
LayerLoader.__doc__ += _options_doc()
