"""Distributed minibatch sampling (docs/architecture.md, Scale-out): every rank samples its own
minibatches of each step, and minibatch b of epoch e is bit-identical to the single-process loader's
(NeighborLoader / LayerLoader with the same seed and batch size), whatever P and c.

Step s of an epoch trains P minibatches: rank K samples global batch b = s * P + K, with the seeds
and the sampler stream of the epoch/batch contract (graphtier/sample/epoch.hpp), so the ranks
together cover every batch of the epoch, each once, in ceil(num_batches / P) steps (at the last
one, the ranks past the epoch's last batch get none).

`bulk` picks the samplers as the loaders' `bulk` does: 0 = the one-at-a-time samplers
(NeighborSampler, LayerSampler with LADIES); k >= 1 = the bulk matrix samplers (bulk GraphSAGE, bulk
LADIES: parallel edges merged, other blocks than one-at-a-time), k minibatches per call, each still
drawn from its own stream, so the batches equal NeighborLoader / LayerLoader(bulk=k)'s.

- Graph replicated: a rank's graph/ dataset is the whole graph; it samples alone (bulk: per layer,
  the rows of the k minibatches' frontiers are read from it and drawn from as below).
- Graph partitioned (1.5D): a rank's graph/ holds only the in-edges of its block row. Per layer, the
  frontiers of the rank's next k minibatches (k = `bulk`, or `group` with bulk 0) go to the owners
  of those rows in its process column (ids out, all-to-allv), in one of two ways:
  owner draws (GraphSAGE, one at a time or bulk): each owner draws the layer for every (node,
    minibatch) it is asked for, with the minibatch's stream, by the sampler's rule (NeighborSampler's,
    or the bulk matrix sampler's on the node's merged row), and replies with the picks only (their
    count, neighbour ids and global edge ids); the requester assembles the blocks from them
    (_core.draw_rows, _core.neighbor_blocks_of_draws: both samplers compact alike);
  row fetch (LADIES, whose column weights need whole rows; GraphSAGE's fanout -1): the union
    of the frontiers goes out, the owners reply with the rows (degree, global position of the first
    edge, neighbour ids), and the layer is drawn locally on the fetched rows. A row fetched for one
    layer is kept for the later layers of the call (a layer's dst nodes are the next one's first src
    nodes), and across calls up to `row_cache` bytes (RowCache: the lowest ids, after `graphtier
    prepare` the hottest rows): only rows not held yet are asked for.
  Either way the draws depend only on the node, its row and the global position of its first edge,
  so they equal the single-process draws. Requests and replies cross plain (node ids as int32 on
  graphs of fewer than 2^31 nodes, the rest as int64), or with `packed` as varints
  (graphtier.distributed.wire, graphtier/sample/row_wire.hpp): each id, count and position a varint
  of its delta (or, where cheaper, of itself: hot ids are small after `graphtier prepare`), an id
  below 2^21 in 1-3 bytes, 2-3x fewer bytes than plain for 10-20 ns of CPU a value on each
  side, which pays on links slower than about 0.5-1 Gb/s per rank (docs/benchmarks.md).

  The cost model that picks the way (per layer; d a row's degree, f the fanout, v the bytes of a
  value on the wire: 4 or 8 plain, 1-3 packed): owner draws move about 2 v + 2 v min(f, d) bytes per
  (node, minibatch) asked (the id out; the count, and a neighbour id and an edge id per pick back;
  bulk: d counts distinct neighbours), row fetch about 3 v + v d per distinct row not held yet (the
  id out; degree, first position and d neighbour ids back). With f >= 1 the picks are at most f
  while power-law frontiers reach long rows (d >> f), so the owners draw; with f = -1 the sample is
  the whole row (2 v + 2 v d > 3 v + v d for d > 1), so rows are fetched. `owner_draws` overrides
  the choice (False: row fetch everywhere, as before issue 28).

A typed dataset (graph replicated, GraphSAGE's method, bulk 0) is sampled per relation as
NeighborLoader samples it (`fanouts` for every relation, or `relation_fanouts[name]`), and its
batches carry `typed_blocks` (x_dict is filled by DistTypedFeatureFetcher).
"""

from __future__ import annotations

from typing import Dict, Iterator, List, Optional, Sequence, Tuple

import torch

from graphtier import _core
from graphtier.distributed.comm import CommStats, alltoallv
from graphtier.distributed.grid import GridGroups, ProcessGrid, grid_groups
from graphtier.distributed.partition import Partition
from graphtier.distributed.wire import Wire
from graphtier.loader import Batch, Block, TypedBlock

_METHODS = tuple(name for name, m in _core.sampler_methods().items() if m["rows"])  # draws on fetched rows


# A set of rows: (nodes ascending and distinct, indptr, neighbour ids, global position of each
# row's first edge), what _core.extract_rows gives and the layer samplers take.
Rows = Tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]


def _empty_rows() -> Rows:
    empty = torch.empty(0, dtype=torch.int64)
    return empty, torch.zeros(1, dtype=torch.int64), empty, empty


def _find(nodes: torch.Tensor, ids: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
    """Which of `ids` the ascending `nodes` hold (a mask) and where (positions; valid where held)."""
    at = torch.searchsorted(nodes, ids)
    held = at < nodes.numel()
    held[held.clone()] = nodes[at[held]] == ids[held]
    return held, at


def _take(rows: Rows, at: torch.Tensor) -> Rows:
    """The rows at positions `at`, in that order."""
    nodes, indptr, indices, first_edge = rows
    start = indptr[at]
    degree = indptr[at + 1] - start
    out = torch.zeros(at.numel() + 1, dtype=torch.int64)
    torch.cumsum(degree, 0, out=out[1:])
    edges = torch.repeat_interleave(start - out[:-1], degree) + torch.arange(int(out[-1]), dtype=torch.int64)
    return nodes[at], out, indices[edges], first_edge[at]


def _merge(a: Rows, b: Rows) -> Rows:
    """Two sets of distinct rows as one, ascending."""
    if b[0].numel() == 0:
        return a
    if a[0].numel() == 0:
        return b
    both = (torch.cat([a[0], b[0]]), torch.cat([a[1], b[1][1:] + a[1][-1]]), torch.cat([a[2], b[2]]),
            torch.cat([a[3], b[3]]))
    return _take(both, torch.argsort(both[0]))


class RowCache:
    """Rows fetched from other process rows, kept from one sampling call to the next (the
    row-fetch path: LADIES, GraphSAGE's fanout -1), up to `budget` bytes: 8 per neighbour id
    and 24 per row (its id, indptr entry and first edge position). The lowest ids are kept: after
    `graphtier prepare` numbers nodes by hotness they are the rows most calls ask for, so the cache
    settles on the hottest remote rows that fit, and rows above the first id that did not fit are
    never admitted again. New rows gather in a second, smaller set that joins the main one once it
    holds half as many bytes (each row is copied a few times in all, not once per call).
    `hits` and `misses` count rows asked for."""

    def __init__(self, budget: int):
        self.budget = int(budget)
        self._main = _empty_rows()
        self._recent = _empty_rows()  # distinct from _main's rows
        self.limit: Optional[int] = None  # ids >= limit are not kept
        self.hits = 0
        self.misses = 0

    @staticmethod
    def _bytes(rows: Rows) -> int:
        return 8 * int(rows[2].numel()) + 24 * int(rows[0].numel())

    @property
    def bytes(self) -> int:
        return self._bytes(self._main) + self._bytes(self._recent)

    @property
    def rows(self) -> Rows:
        """Every row held, ascending."""
        return _merge(self._main, self._recent)

    def take(self, ids: torch.Tensor) -> Tuple[torch.Tensor, Rows]:
        """Which of the ascending distinct `ids` are held (a mask), and their rows, ascending."""
        held = torch.zeros(ids.numel(), dtype=torch.bool)
        found = _empty_rows()
        for part in (self._main, self._recent):
            in_part, at = _find(part[0], ids)
            held |= in_part
            found = _merge(found, _take(part, at[in_part]))
        hits = int(held.sum())
        self.hits += hits
        self.misses += int(ids.numel()) - hits
        return held, found

    def keep(self, fetched: Rows) -> None:
        """Adds the rows a call fetched (none of them held here), then drops the highest ids until
        the budget holds."""
        if self.budget == 0:
            return
        if self.limit is not None:
            fetched = _take(fetched, torch.nonzero(fetched[0] < self.limit).flatten())
        if fetched[0].numel() == 0:
            return
        self._recent = _merge(self._recent, fetched)
        over = self.bytes > self.budget
        if not over and 2 * self._bytes(self._recent) < self._bytes(self._main):
            return
        rows = _merge(self._main, self._recent)
        self._recent = _empty_rows()
        if over:
            size = 8 * rows[1][1:] + 24 * torch.arange(1, rows[0].numel() + 1, dtype=torch.int64)  # each prefix's
            fit = int(torch.searchsorted(size, self.budget, right=True))
            self.limit = int(rows[0][fit])  # below any earlier limit: only ids under it were admitted
            rows = (rows[0][:fit], rows[1][:fit + 1], rows[2][:int(rows[1][fit])], rows[3][:fit])  # the prefix
        self._main = rows


class DistSampler:
    """This rank's minibatches of every step of an epoch, sampled without features (`x` is None: the
    distributed feature fetch fills it).

    `method` "neighbor" (GraphSAGE, `fanouts[l]` neighbours per dst node, -1 = all, `replace`) or
    "ladies" (`fanouts[l]` nodes drawn per layer); `batch_size`, `seed`, `shuffle` and `drop_last`
    as the loaders' (the same values give the loader's batches). `bulk` as the loaders': 0 (the
    default) samples one minibatch at a time, k >= 1 samples k minibatches per call with the bulk
    matrix samplers (the batches of NeighborLoader / LayerLoader with bulk=k, for every k >= 1);
    with the graph partitioned, each layer of the k minibatches is one exchange (draws or rows).
    `group` (bulk 0 only): with the graph partitioned, the layers of `group` minibatches are one
    exchange each (fewer, larger messages; the batches are the same for every group).
    `groups`: this rank's grid groups when the caller made them already (grid_groups is
    collective); else the constructor makes them, on every rank, when the graph is partitioned.
    `stats` counts the bytes exchanged; `comm_device` is where they cross (the backend's: the CPU for
    Gloo, the rank's GPU for NCCL). `relation_fanouts` ({"src:rel:dst": fanout per layer}, a typed
    dataset only) as NeighborLoader's: those relations' fanouts instead of `fanouts`. `owner_draws`
    (graph partitioned): None picks per layer by the cost model of the module docstring, False
    fetches rows everywhere, True asks the owners to draw (GraphSAGE only). The batches
    are the same either way. `row_cache` (graph partitioned, row fetch): bytes of fetched rows kept
    from call to call (RowCache; 0 keeps a call's rows for that call only); the batches are the
    same for every budget. `packed` (graph partitioned): the requests and replies cross packed
    (varints, graphtier.distributed.wire: fewer bytes for more CPU, for slow links) instead of
    plain (int32 node ids, int64 positions). The batches are the same either way.

    Node ids: the seeds are the partition's `split` and every id in the batches is in the
    numbering of the dataset the partition was cut from (after `graphtier prepare`, the prepared
    one; `graphtier.Dataset.to_original` maps them back). No method takes ids from the caller.

    Every rank of a process column must iterate the same epochs, to the end or abandoning them at
    the same step: with the graph partitioned, each bulk of each layer is a collective.
    """

    def __init__(self, partition: Partition, grid: ProcessGrid, method: str = "neighbor",
                 fanouts: Sequence[int] = (10, 5), batch_size: int = 1024, seed: int = 0, bulk: int = 0,
                 split: str = "train", *, replace: bool = False, shuffle: bool = True, drop_last: bool = False,
                 group: int = 1, groups: Optional[GridGroups] = None, stats: Optional[CommStats] = None,
                 comm_device="cpu", relation_fanouts: Optional[Dict[str, Sequence[int]]] = None,
                 owner_draws: Optional[bool] = None, row_cache: int = 64 << 20, packed: bool = False):
        if method not in _METHODS:
            raise ValueError(f"unknown sampling method '{method}' (expected {' or '.join(_METHODS)})")
        if method == "ladies" and replace:
            raise ValueError("replace applies to the neighbor method only")
        if not fanouts:
            raise ValueError("fanouts: at least one layer is needed")
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        if bulk < 0:
            raise ValueError(f"bulk must be >= 0 (0: one minibatch at a time), got {bulk}")
        if group < 1:
            raise ValueError(f"group must be >= 1, got {group}")
        if bulk and group != 1:
            raise ValueError("group applies to bulk 0 only (bulk k exchanges the layers of its k minibatches at once)")
        if bulk and method == "ladies" and min(fanouts) < 0:
            raise ValueError(f"fanouts {list(fanouts)}: bulk LADIES takes layer sizes >= 0")
        if owner_draws and method != "neighbor":
            raise ValueError("owner_draws: the owners draw GraphSAGE's layers only (LADIES' column weights need "
                             "whole rows)")
        if row_cache < 0:
            raise ValueError(f"row_cache must be >= 0 bytes, got {row_cache}")
        if (grid.world, grid.replication, grid.rank) != (partition.ranks, partition.replication, partition.rank):
            raise ValueError(f"{partition.rank_path}: the partition is rank {partition.rank} of {partition.ranks} "
                             f"with replication {partition.replication}, the process grid is rank {grid.rank} of "
                             f"{grid.world} with replication {grid.replication}")
        self.partition = partition
        self.grid = grid
        self.method = method
        self.fanouts = [int(f) for f in fanouts]
        self.batch_size = int(batch_size)
        self.seed = int(seed)
        self.bulk = int(bulk)
        self.group = int(group)
        self.replace = bool(replace)
        self.shuffle = bool(shuffle)
        self.owner_draws = owner_draws
        self.dataset = _core.Dataset(partition.graph_path)
        self.ids = self.dataset.split(split).clone()
        n = int(self.ids.numel())
        if n == 0:
            raise ValueError(f"{partition.graph_path}: the {split} split is empty")
        self.num_batches = n // self.batch_size if drop_last else -(-n // self.batch_size)
        try:
            self._labels: Optional[torch.Tensor] = self.dataset.labels()
        except ValueError:
            self._labels = None
        self.partitioned = partition.graph_mode == "partitioned"
        self.node_types = list(self.dataset.node_types)  # empty: homogeneous
        self.relation_fanouts = self._relation_fanouts(relation_fanouts or {})
        self.comm_device = torch.device(comm_device)
        self.wire = Wire(packed, partition.num_nodes)
        self.stats = stats if stats is not None else CommStats()
        self.groups = groups
        if self.partitioned and self.groups is None:
            self.groups = grid_groups(grid)
        self.row_cache = RowCache(row_cache)
        self._epoch = -1

    def _relation_fanouts(self, by_name: Dict[str, Sequence[int]]) -> Dict[int, List[int]]:
        """A typed graph's checks, and `relation_fanouts` by relation id (the sampler's form)."""
        if not self.node_types:
            if by_name:
                raise ValueError("relation_fanouts: the dataset has no relations (it is not typed); use fanouts")
            return {}
        # The one-at-a-time sampler on the whole graph: the fetched-rows and bulk paths carry no
        # relation per edge.
        if self.partitioned:
            raise NotImplementedError(f"{self.partition.rank_path}: a typed dataset trains on a replicated graph "
                                      "(graphtier partition --graph replicated)")
        if self.method != "neighbor" or self.bulk:
            raise NotImplementedError("a typed dataset is sampled per relation by GraphSAGE's sampler with bulk 0")
        names = list(self.dataset.relations)
        out = {}
        for name, fanouts in by_name.items():
            if name not in names:
                raise ValueError(f"relation_fanouts: unknown relation '{name}' (the dataset's relations: "
                                 f"{', '.join(names)})")
            if len(fanouts) != len(self.fanouts):
                raise ValueError(f"relation_fanouts['{name}'] has {len(fanouts)} fanouts, the sampler "
                                 f"{len(self.fanouts)} layers")
            out[names.index(name)] = [int(f) for f in fanouts]
        types = self.node_types
        self._offsets = torch.tensor(self.dataset.node_type_offset, dtype=torch.int64)
        self._relations = [(types.index(n.split(":")[0]), types.index(n.split(":")[2])) for n in names]
        return out

    @property
    def steps(self) -> int:
        """Steps per epoch, which cover every minibatch: each has one minibatch per rank, but the
        last may leave the ranks past the epoch's last minibatch without one (batches_at)."""
        return -(-self.num_batches // self.grid.world)

    def batches_at(self, step: int) -> int:
        """How many ranks hold a minibatch at `step` (P but at an uneven last step)."""
        return max(0, min(self.grid.world, self.num_batches - step * self.grid.world))

    def __len__(self) -> int:
        return self.steps

    def batch_index(self, step: int) -> int:
        """The global minibatch this rank samples at `step`."""
        return step * self.grid.world + self.grid.rank

    def __iter__(self) -> Iterator[Batch]:
        """The next epoch (epoch 0 first), as the loaders count them."""
        self._epoch += 1
        return self.epoch(self._epoch)

    def epoch(self, epoch: int, first_step: int = 0, end_step: Optional[int] = None) -> Iterator[Optional[Batch]]:
        """This rank's minibatches of `epoch`, step by step, for steps [first_step, end_step) (default:
        to the epoch's `steps`). The last step may leave this rank without a minibatch: it yields
        None there, having taken part in the step's exchanges."""
        end_step = self.steps if end_step is None else end_step
        if not 0 <= first_step <= end_step <= self.steps:
            raise ValueError(f"steps [{first_step}, {end_step}) are not within the epoch's {self.steps}")
        order = _core.shuffled_ids(self.ids, self.seed, epoch) if self.shuffle else self.ids
        per_call = self.bulk or self.group
        for first in range(first_step, end_step, per_call):
            indices = [self.batch_index(s) for s in range(first, min(first + per_call, end_step))]
            present = [b for b in indices if b < self.num_batches]
            seeds = [order[b * self.batch_size:(b + 1) * self.batch_size].contiguous() for b in present]
            streams = [_core.minibatch_stream(epoch, b) for b in present]
            blocks = self.sample_blocks(seeds, streams)  # partitioned: an exchange per layer, even without seeds
            batches = {b: self.batch(epoch, b, s, bl) for b, s, bl in zip(present, seeds, blocks)}
            for b in indices:
                yield batches.get(b)

    def sample_blocks(self, seeds: List[torch.Tensor], streams: List[int]) -> List[List[Block]]:
        """The blocks of the minibatches `seeds` (seeds[i] drawn from streams[i] =
        minibatch_stream(epoch, b)) with this sampler's samplers (`bulk`), all in one call (with the
        graph partitioned, one row exchange per layer: collective over the process column, even for
        no minibatch, as every rank of the column must take part)."""
        if self.bulk or self.partitioned:
            return self._sample_layers(seeds, streams)
        return [self._sample_local(s, t) for s, t in zip(seeds, streams)]

    def draws_at_owners(self, layer: int) -> bool:
        """Whether layer `layer` is drawn by the owners of the rows (the cost model of the module
        docstring, or `owner_draws`), else drawn here on fetched rows."""
        if not self.partitioned or self.method != "neighbor" or self.owner_draws is False:
            return False
        return bool(self.owner_draws) or self.fanouts[layer] >= 0

    def batch(self, epoch: int, index: int, seeds: torch.Tensor, blocks: List[Block]) -> Batch:
        """Minibatch `index` of `epoch` from its seeds and the blocks `sample_blocks` drew for them
        (x None; y the seeds' labels as int64, -1 without labels)."""
        input_nodes = blocks[-1].src_nodes if blocks else seeds
        # int64, as the loaders' (cross_entropy takes no other); the dataset stores int32.
        y = self._labels[seeds].long() if self._labels is not None else torch.full_like(seeds, -1)
        typed = None
        if self.node_types:
            names = list(self.dataset.relations)
            typed = [TypedBlock.from_dict(b.split(self._offsets, self._relations), self.node_types, names)
                     for b in blocks]
        return Batch(epoch, index, seeds, input_nodes, None, y, blocks, typed_blocks=typed)

    def _sample_local(self, seeds: torch.Tensor, stream: int) -> List[Block]:
        d = _core.sample_minibatch(self.dataset, self.method, seeds, self.fanouts, self.replace, self.seed, stream,
                                   relation_fanouts=self.relation_fanouts)
        return [Block.from_dict(b) for b in d["blocks"]]

    def _fetch_rows(self, wanted: torch.Tensor):
        """The rows of the distinct ids `wanted` (ascending) from their owners in this rank's process
        column: (nodes, indptr, indices, first_edge). Collective over the column: the ids out, the
        rows back (self.wire)."""
        group = self.groups.column
        owner = self.partition.topology_owner_row(wanted)
        counts = torch.bincount(owner, minlength=self.grid.rows).tolist()
        requests = list(torch.split(wanted, counts))  # ascending ids: each owner's are contiguous
        # Tensors cross on the backend's device (CUDA for NCCL) and are used on the host.
        asked = alltoallv([self.wire.ids(r) for r in requests], group, self.stats, self.comm_device)
        replies = []
        for member, message in enumerate(asked):  # two members may ask for one row: one extract each
            part = self._read(member, self.wire.read_ids, message)
            self._check_asked(member, part)
            replies.append(self.wire.rows(*_core.extract_rows(self.dataset, part, self.partition.edge_offset)))
        got = [self._read(member, self.wire.read_rows, message, r)
               for member, (message, r) in enumerate(zip(alltoallv(replies, group, self.stats, self.comm_device),
                                                         requests))]
        indptr = torch.zeros(wanted.numel() + 1, dtype=torch.int64)
        indptr[1:] = torch.cumsum(torch.cat([p[0][1:] - p[0][:-1] for p in got]), dim=0)
        return torch.cat(requests), indptr, torch.cat([p[1] for p in got]), torch.cat([p[2] for p in got])

    def _read(self, member: int, read, message: torch.Tensor, *args):
        """read(message, *args) of what process row `member` sent (on the host), its error naming the
        sender."""
        try:
            return read(message.cpu().contiguous(), *args)
        except ValueError as e:
            raise ValueError(f"rank {self.grid.rank}: the message from process row {member}: {e}") from None

    def _check_asked(self, member: int, part: torch.Tensor) -> None:
        """Process row `member` asked this rank for the rows `part`: they must be of its block row."""
        lo, hi = self.partition.topology_bounds[self.grid.row], self.partition.topology_bounds[self.grid.row + 1]
        if part.numel() and (int(part.min()) < lo or int(part.max()) >= hi):
            # Outside the block row a node has no edges here: a silent empty row otherwise.
            raise ValueError(f"rank {self.grid.rank}: process row {member} asked for rows outside this block "
                             f"row [{lo}, {hi})")

    def _rows(self, wanted: torch.Tensor, held):
        """The rows of the distinct ids `wanted` (ascending), in that order: with the graph
        partitioned, those the row cache or this call (`held`: rows earlier layers fetched, or None)
        hold already, the others fetched from the process column (collective, and added to
        `held`); else all read from this rank's whole graph. Returns (the rows, held)."""
        if not self.partitioned:
            indptr, indices, first_edge = _core.extract_rows(self.dataset, wanted, 0)
            return (wanted, indptr, indices, first_edge), held
        held = held if held is not None else _empty_rows()
        in_cache, cached = self.row_cache.take(wanted)
        in_call, _ = _find(held[0], wanted)
        fetched = self._fetch_rows(wanted[~(in_cache | in_call)])
        held = _merge(held, fetched)
        return _merge(cached, _take(held, _find(held[0], wanted[~in_cache])[1])), held

    def _sample_layers(self, seeds: List[torch.Tensor], streams: List[int]) -> List[List[Block]]:
        """The blocks of the minibatches `seeds`, layer by layer (`_layer`); the rows the call
        fetched go to the row cache at its end."""
        blocks: List[List[Block]] = [[] for _ in seeds]
        dst = list(seeds)
        held = None
        for layer in range(len(self.fanouts)):
            dicts, held = self._layer(dst, streams, layer, held)
            for i, d in enumerate(dicts):
                block = Block.from_dict(d)
                blocks[i].append(block)
                dst[i] = block.src_nodes
        if held is not None and self.partitioned:
            self.row_cache.keep(held)
        return blocks

    def _layer(self, dst: List[torch.Tensor], streams: List[int], layer: int, held):
        """Layer `layer` of the minibatches whose frontiers are `dst`: drawn by the owners, or on the
        rows of the union of the frontiers (`_rows`: fetched from the process column with the graph
        partitioned, less those held already). A collective with the graph partitioned. Returns (one
        block dict per minibatch, the rows this call fetched so far)."""
        if self.draws_at_owners(layer):
            return self._draw_at_owners(dst, streams, layer), held
        wanted = torch.unique(torch.cat(dst)) if dst else torch.empty(0, dtype=torch.int64)
        rows, held = self._rows(wanted, held)
        draw = self._draw_bulk if self.bulk else self._draw_each
        return draw(rows, dst, streams, layer), held

    def _draw_at_owners(self, dst: List[torch.Tensor], streams: List[int], layer: int) -> List[dict]:
        """GraphSAGE's layer drawn by the owners: each owner in the process column gets, per
        minibatch, the frontier nodes of its block row and the minibatch's stream, draws them as
        this rank would on their rows (_core.draw_rows; bulk: the bulk matrix sampler's draws), and
        replies with the picks; the blocks are assembled here (_core.neighbor_blocks_of_draws).
        Collective over the column."""
        group = self.groups.column
        rows, k = self.grid.rows, len(dst)
        nodes = torch.cat(dst) if dst else torch.empty(0, dtype=torch.int64)
        batch_of = torch.repeat_interleave(torch.arange(k), torch.tensor([d.numel() for d in dst], dtype=torch.int64))
        owner = self.partition.topology_owner_row(nodes)
        order = torch.argsort(owner, stable=True)  # each owner's requests contiguous, minibatch by minibatch
        nodes, batch_of, owner = nodes[order], batch_of[order], owner[order]
        per_owner = torch.bincount(owner, minlength=rows)
        sizes = torch.bincount(owner * k + batch_of, minlength=rows * k).view(rows, k)
        # A stream is a uint64: it crosses as its bits in an int64.
        bits = torch.tensor([s - (1 << 64) if s >= 1 << 63 else s for s in streams], dtype=torch.int64)
        requests = [self.wire.request(torch.cat([torch.tensor([k]), sizes[o], bits]), part)
                    for o, part in enumerate(torch.split(nodes, per_owner.tolist()))]
        replies = []
        for member, message in enumerate(alltoallv(requests, group, self.stats, self.comm_device)):
            head, part = self._read(member, self.wire.read_request, message)
            m = int(head[0])
            self._check_asked(member, part)
            draws = _core.draw_rows(self.dataset, part, head[1:1 + m].contiguous(), head[1 + m:].contiguous(), layer,
                                    self.fanouts[layer], self.replace, self.seed, self.partition.edge_offset,
                                    bulk=bool(self.bulk))
            replies.append(self.wire.draws(*draws))
        got = [self._read(member, self.wire.read_draws, reply, n)
               for member, (reply, n) in enumerate(zip(alltoallv(replies, group, self.stats, self.comm_device),
                                                       per_owner.tolist()))]
        return _core.neighbor_blocks_of_draws(dst, nodes, batch_of, *(torch.cat([g[i] for g in got]) for i in range(3)))

    def _draw_bulk(self, rows, dst: List[torch.Tensor], streams: List[int], layer: int) -> List[dict]:
        """The bulk matrix samplers' layer (BulkSampler with one stream per batch)."""
        return _core.sample_bulk_layer(*rows, dst, streams, self.method, self.fanouts, self.replace, self.seed, layer)

    def _draw_each(self, rows, dst: List[torch.Tensor], streams: List[int], layer: int) -> List[dict]:
        """The one-at-a-time samplers' layer, each minibatch drawn from its own stream."""
        fanout = self.fanouts[layer]
        if self.method == "neighbor":
            return [_core.sample_neighbor_layer(*rows, d, fanout, self.replace, self.seed, stream, layer)
                    for d, stream in zip(dst, streams)]
        return [_core.sample_ladies_layer(*rows, d, fanout, self.seed, stream, layer)
                for d, stream in zip(dst, streams)]

__all__ = ["DistSampler", "RowCache"]
