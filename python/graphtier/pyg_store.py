"""graphtier behind PyG's own remote-backend interfaces, as cuGraph-PyG puts cuGraph there: a
`torch_geometric.data.FeatureStore` whose reads go through graphtier's feature tiers, a
`GraphStore` over the dataset's CSC, and a `torch_geometric.sampler.BaseSampler` backed by
graphtier's sampler, so that PyG's own loader classes run on a graphtier dataset:

    from torch_geometric.loader import NodeLoader
    from graphtier.pyg_store import GraphtierFeatureStore, GraphtierGraphStore, GraphtierSampler
    ds = graphtier.Dataset("data/cora")
    feature_store, graph_store = GraphtierFeatureStore(ds, cpu_buffer="10%"), GraphtierGraphStore(ds)
    sampler = GraphtierSampler(ds, num_neighbors=[10, 10], ids_numbering="prepared")  # ids as ds.split gives
    loader = NodeLoader((feature_store, graph_store), node_sampler=sampler, input_nodes=ds.split("train"),
                        batch_size=64)

Ids follow PyG's remote-backend convention: a typed dataset's node type is a feature-store group
and its ids are local to the type (0 .. nodes of the type); an edge type is (src_type, rel,
dst_type). Everything is in the dataset's own (prepared) numbering (graphtier.Dataset.to_original
maps it back). The stores are read-only: the dataset's files are written by `graphtier convert`.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple, Union

import torch

try:
    from torch_geometric.data import FeatureStore as _PygFeatureStore
    from torch_geometric.data import GraphStore as _PygGraphStore
    from torch_geometric.data import TensorAttr
    from torch_geometric.data.graph_store import EdgeAttr, EdgeLayout
    from torch_geometric.sampler import (BaseSampler, EdgeSamplerInput, HeteroSamplerOutput, NegativeSampling,
                                         NodeSamplerInput, SamplerOutput)
except ImportError as e:
    raise ImportError("graphtier.pyg_store needs PyTorch Geometric: `pip install torch_geometric`") from e

from graphtier import _core
from graphtier import loader as _loader
from graphtier import pyg as _pyg
from graphtier._ids import checked_node_ids, type_node_ids
from graphtier.dataset import open_dataset
from graphtier.store import FeatureStore, TypedFeatureStore

_READ_ONLY = ("{store} is read-only: it reads the dataset's files ({path}); write a dataset with "
              "`graphtier convert`, or keep new tensors in a torch_geometric store of your own")


def _local_ids(index, num_nodes: int, name: str, node_type: Optional[str]) -> torch.Tensor:
    """PyG's index `name` (ids, a bool mask, a slice, an int, or None: every node) as int64 ids of
    node type `node_type` (None: the graph's nodes), 0 to num_nodes - 1, checked by the package's
    one check of ids (graphtier._ids: an IndexError names `name`, the type and its range)."""
    if index is None:
        return torch.arange(num_nodes, dtype=torch.int64)
    if isinstance(index, slice):
        return torch.arange(num_nodes, dtype=torch.int64)[index]
    if isinstance(index, int):
        index = [index]
    if node_type is None:
        return checked_node_ids(index, name, num_nodes)
    return type_node_ids(index, name, node_type, (0, num_nodes))


class GraphtierFeatureStore(_PygFeatureStore):
    """A `torch_geometric.data.FeatureStore` over a graphtier dataset (a graphtier.Dataset or its
    directory): `x` gathered through graphtier's feature tiers (the GPU, host and SSD tiers of a
    graphtier.FeatureStore, or a TypedFeatureStore's per-type ones: only the rows asked for are
    read, every row only for `index=None`),
    `y` the dataset's labels (int64). `store=` shares an existing graphtier store; otherwise one is
    made from `options` and the keyword options (graphtier.FeatureStoreOptions' fields: `cpu_buffer`,
    `gpu_cache`, ...), with `threads` gather threads.

    Homogeneous: group None, attributes "x" [num_nodes, feature_dim] and "y" [num_nodes]. Typed:
    group = node type, "x" for each type with a feature table, "y" on the labelled type; `index`
    holds ids local to the type (PyG's convention). An unknown group or attribute is a KeyError,
    an id outside the group's nodes an IndexError naming both; put/remove a NotImplementedError.
    Rows come back in host memory, in the table's dtype."""

    def __init__(self, dataset, options: Optional[_core.FeatureStoreOptions] = None, *, store=None,
                 threads: int = 0, **kwargs):
        super().__init__()
        ds = open_dataset(dataset, "dataset")
        self.__dict__["dataset"] = ds
        typed = ds.is_hetero
        if store is None and ((typed and any(d > 0 for d in ds.node_type_feature_dims)) or
                              (not typed and ds.feature_dim > 0)):
            make = TypedFeatureStore if typed else FeatureStore
            store = make(ds, options, threads=threads, **kwargs)
        elif store is not None and (options is not None or kwargs):
            raise TypeError("options configure the graphtier store made here; with store= configure that store")
        self.__dict__["store"] = store
        # (group, attr) -> (rows, row shape): the tensors this store holds.
        sizes: Dict[Tuple[Optional[str], str], Tuple[int, ...]] = {}
        if typed:
            for t, (begin, end) in ds.node_type_ranges.items():
                dim = ds.node_type_feature_dims[ds.node_types.index(t)]
                if dim > 0:
                    sizes[(t, "x")] = (end - begin, dim)
            if ds.num_classes > 0 and ds.labelled_type is not None:
                begin, end = ds.node_type_ranges[ds.labelled_type]
                sizes[(ds.labelled_type, "y")] = (end - begin,)
        else:
            if ds.feature_dim > 0:
                sizes[(None, "x")] = (ds.num_nodes, ds.feature_dim)
            if ds.num_classes > 0:
                sizes[(None, "y")] = (ds.num_nodes,)
        self.__dict__["_sizes"] = sizes
        # Labels are 4 bytes a node: kept in memory, the features are not.
        self.__dict__["_labels"] = ds.labels().to(torch.int64) if ds.num_classes > 0 else None

    def _key(self, attr: TensorAttr) -> Tuple[Optional[str], str]:
        key = (attr.group_name, attr.attr_name)
        if key not in self._sizes:
            held = ", ".join(f"({g!r}, {a!r})" for g, a in self._sizes) or "none"
            raise KeyError(f"no tensor ({attr.group_name!r}, {attr.attr_name!r}) in the graphtier feature store of "
                           f"{self.dataset.path} (it holds {held})")
        return key

    def _get_tensor(self, attr: TensorAttr) -> torch.Tensor:
        group, name = self._key(attr)
        ids = _local_ids(attr.index, self._sizes[(group, name)][0], "index", group)
        if name == "y":
            out = self._labels[ids + (0 if group is None else self.dataset.node_type_ranges[group][0])]
        elif group is None:
            out = self.store.gather(ids)
        else:
            out = self.store.gather(group, ids)  # ids within the type
        return out[0] if isinstance(attr.index, int) else out

    def _get_tensor_size(self, attr: TensorAttr) -> Tuple[int, ...]:
        return self._sizes[self._key(attr)]

    def get_all_tensor_attrs(self) -> List[TensorAttr]:
        return [TensorAttr(group_name=g, attr_name=a) for g, a in self._sizes]

    def _put_tensor(self, tensor, attr: TensorAttr) -> bool:
        raise NotImplementedError(_READ_ONLY.format(store="graphtier's feature store", path=self.dataset.path))

    def _remove_tensor(self, attr: TensorAttr) -> bool:
        raise NotImplementedError(_READ_ONLY.format(store="graphtier's feature store", path=self.dataset.path))

    def __repr__(self) -> str:
        return f"GraphtierFeatureStore({self.dataset.path!r})"


class GraphtierGraphStore(_PygGraphStore):
    """A `torch_geometric.data.GraphStore` over a graphtier dataset's topology, in CSC layout (PyG's
    (row, colptr): sources, then offsets by destination). Homogeneous: edge type None, `colptr` and
    `row` viewing the dataset's memory maps (int64 indices files are not copied; int32 ones are
    widened to int64 once, on the first request, and kept). Typed: one CSC per edge type (src_type,
    rel, dst_type) in ids local to the types, made by the engine from the typed CSC on the first
    request and kept. `coo()` and `csr()` convert as PyG's GraphStore does. An unknown edge type is
    a KeyError naming the dataset's; put/remove a NotImplementedError."""

    def __init__(self, dataset):
        super().__init__()
        ds = open_dataset(dataset, "dataset")
        self.__dict__["dataset"] = ds
        attrs = {}
        if ds.is_hetero:
            ranges = ds.node_type_ranges
            for r, name in enumerate(ds.relations):
                src, rel, dst = name.split(":")
                size = (ranges[src][1] - ranges[src][0], ranges[dst][1] - ranges[dst][0])
                attrs[(src, rel, dst)] = (r, EdgeAttr((src, rel, dst), EdgeLayout.CSC, size=size))
        else:
            attrs[None] = (None, EdgeAttr(None, EdgeLayout.CSC, size=(ds.num_nodes, ds.num_nodes)))
        self.__dict__["_attrs"] = attrs
        self.__dict__["_csc"] = {}

    def edge_ids(self, edge_type=None) -> Optional[torch.Tensor]:
        """Each edge of `edge_type`'s CSC (in order) as a position in the dataset's CSC (the e_id
        graphtier's samplers give), int64; None on a homogeneous dataset, where they are the same."""
        return self._relation(edge_type)[2]

    def _relation(self, edge_type) -> Tuple[torch.Tensor, torch.Tensor, Optional[torch.Tensor]]:
        edge_type = tuple(edge_type) if isinstance(edge_type, list) else edge_type
        if edge_type not in self._attrs:
            held = ", ".join(repr(k) for k in self._attrs)
            raise KeyError(f"no edge type {edge_type!r} in the graphtier graph store of {self.dataset.path} "
                           f"(it holds {held})")
        if edge_type not in self._csc:
            r = self._attrs[edge_type][0]
            if r is None:
                indptr, indices = _core.graph_csc(self.dataset)
                self._csc[edge_type] = (indptr, indices.to(torch.int64), None)
            else:
                self._csc[edge_type] = _core.relation_csc(self.dataset, r)
        return self._csc[edge_type]

    def _get_edge_index(self, edge_attr: EdgeAttr) -> Tuple[torch.Tensor, torch.Tensor]:
        indptr, indices, _ = self._relation(edge_attr.edge_type)
        if edge_attr.layout != EdgeLayout.CSC:
            raise ValueError(f"graphtier's graph store holds edge type {edge_attr.edge_type!r} in CSC layout, "
                             f"asked for {edge_attr.layout.value}: use graph_store.coo() or graph_store.csr()")
        return indices, indptr

    def get_all_edge_attrs(self) -> List[EdgeAttr]:
        return [attr for _, attr in self._attrs.values()]

    def _put_edge_index(self, edge_index, edge_attr: EdgeAttr) -> bool:
        raise NotImplementedError(_READ_ONLY.format(store="graphtier's graph store", path=self.dataset.path))

    def _remove_edge_index(self, edge_attr: EdgeAttr) -> bool:
        raise NotImplementedError(_READ_ONLY.format(store="graphtier's graph store", path=self.dataset.path))

    def __repr__(self) -> str:
        return f"GraphtierGraphStore({self.dataset.path!r})"


def _negative_sampling(neg_sampling: Optional[NegativeSampling]) -> Tuple[str, float]:
    if neg_sampling is None:
        return "none", 1.0
    return neg_sampling.mode.value, float(neg_sampling.amount)


class GraphtierSampler(BaseSampler):
    """A `torch_geometric.sampler.BaseSampler` that draws with graphtier's neighbour sampler, for
    PyG's `NodeLoader(data=(feature_store, graph_store), node_sampler=...)` and `LinkLoader(...,
    link_sampler=...)`. Its outputs are PyG's SamplerOutput / HeteroSamplerOutput as PyG's
    NeighborSampler lays them out (graphtier.pyg, "PyG samples hop k's neighbours only for the
    nodes first reached in hop k-1"): seeds first, then each hop's new nodes; `row` the neighbour's
    position, `col` the node it was sampled for; `edge` the positions in the dataset's CSC
    (homogeneous; None on a typed dataset).

    `dataset` a graphtier.Dataset or its directory; `num_neighbors` per hop (-1: all), or on a
    typed dataset a dict by edge type (src, rel, dst) of per-hop lists (an edge type left out
    samples nothing); `replace` draws with replacement; `seed` the engine's seed (default
    torch.initial_seed(), so torch.manual_seed decides it, nothing drawn from torch's generator).
    `ids_numbering`: the numbering of the loader's input ids (`input_nodes`, `edge_label_index`):
    "prepared" (the dataset's own) or "original" (the converted graph's, e.g. PyG's train_mask;
    mapped by Dataset.from_original); required on a dataset `graphtier prepare` renumbered, where
    the two differ. The outputs (`n_id`, the stores' ids) are always in the dataset's own.

    Batch i that this sampler draws (counted from 0, or from set_epoch) uses graphtier's stream of
    batch i of epoch `epoch`: unshuffled with the same seed, batch_size and num_workers=0, PyG's
    NodeLoader over it yields graphtier.pyg.NeighborLoader's batches. In a DataLoader worker the
    seed is the worker's torch.initial_seed() (new each epoch and worker), so no two workers draw
    alike.

    Link prediction (sample_from_edges, homogeneous datasets): graphtier's link sampler with
    PyG's negative sampling ("binary" or "triplet", its amount); with `exclude_seed_edges` (default
    True, as graphtier.pyg.LinkNeighborLoader) a batch's positives and their reverses pass no
    message.
    """

    def __init__(self, dataset, num_neighbors: Union[Sequence[int], dict], *, replace: bool = False,
                 seed: Optional[int] = None, exclude_seed_edges: bool = True, ids_numbering: Optional[str] = None):
        ds = open_dataset(dataset, "dataset")
        self.dataset = ds
        # Checked now, not at the first batch: a renumbered dataset needs it said (Dataset.in_own_numbering).
        ds.in_own_numbering(torch.zeros(0, dtype=torch.int64), ids_numbering, "GraphtierSampler input ids")
        self.ids_numbering = ids_numbering
        self.replace = bool(replace)
        self.seed = torch.initial_seed() if seed is None else int(seed)
        self.exclude_seed_edges = bool(exclude_seed_edges)
        self.relation_fanouts: Dict[int, List[int]] = {}
        if isinstance(num_neighbors, dict):
            if not ds.is_hetero:
                raise ValueError("num_neighbors: a dict by edge type needs a typed dataset; this one has none")
            hops = {len(v) for v in num_neighbors.values()}
            if len(hops) != 1:
                raise ValueError(f"num_neighbors: every edge type needs the same number of hops, got {sorted(hops)}")
            by_name = _pyg._relation_fanouts(num_neighbors, ds.relations, hops.pop())
            self.relation_fanouts = {ds.relations.index(n): f for n, f in by_name.items()}
            num_neighbors = [0] * len(next(iter(by_name.values())))
        self.num_neighbors = [int(f) for f in num_neighbors]
        if not self.num_neighbors:
            raise ValueError("num_neighbors: expected one fanout per hop, got none")
        self._link = None
        self.set_epoch(0)

    def set_epoch(self, epoch: int) -> None:
        """The next draw is batch 0 of epoch `epoch` (as the loaders' set_epoch)."""
        self._epoch, self._calls = int(epoch), 0

    def _stream(self) -> Tuple[int, int]:
        """(engine seed, sampler stream) of the next batch."""
        stream = _core.minibatch_stream(self._epoch, self._calls)
        self._calls += 1
        worker = torch.utils.data.get_worker_info()
        return (self.seed if worker is None else torch.initial_seed()), stream

    def _global_ids(self, ids: torch.Tensor) -> torch.Tensor:
        """Checked global ids in the dataset's own numbering (mapped from the original one when the
        sampler's ids_numbering says so)."""
        return self.dataset.in_own_numbering(ids, self.ids_numbering, "GraphtierSampler input ids")

    def _seeds(self, node: torch.Tensor, input_type) -> torch.Tensor:
        """The global ids of PyG's seeds (ids local to `input_type` on a typed dataset)."""
        ds = self.dataset
        if not ds.is_hetero:
            if input_type is not None:
                raise ValueError(f"input_nodes: node type {input_type!r} given, but the dataset has no node types")
            return self._global_ids(_local_ids(node, ds.num_nodes, "input_nodes", None))
        ranges = ds.node_type_ranges
        if input_type not in ranges:
            raise ValueError(f"input_nodes: on a typed dataset, a node type of {', '.join(ds.node_types)} and its ids; "
                             f"got node type {input_type!r}")
        begin, end = ranges[input_type]
        return self._global_ids(_local_ids(node, end - begin, "input_nodes", input_type) + begin)

    def sample_from_nodes(self, inputs: NodeSamplerInput) -> Union[SamplerOutput, HeteroSamplerOutput]:
        if inputs.time is not None:
            raise NotImplementedError("GraphtierSampler: temporal sampling (input_time) is not supported; use "
                                      "graphtier.pyg.NeighborLoader's time_attr")
        seeds = self._seeds(inputs.node, inputs.input_type)
        seed, stream = self._stream()
        d = _core.sample_minibatch(self.dataset, "neighbor", seeds, self.num_neighbors, self.replace, seed, stream,
                                   relation_fanouts=self.relation_fanouts)
        blocks = [_loader.Block.from_dict(b) for b in d["blocks"]]
        metadata = (inputs.input_id, None)
        if not self.dataset.is_hetero:
            return _node_output(blocks, d["input_nodes"], int(seeds.numel()), metadata)
        return self._hetero_output(blocks, d["input_nodes"], int(seeds.numel()), inputs.input_type, metadata)

    def _hetero_output(self, blocks: list, input_nodes: torch.Tensor, num_seeds: int, seed_type: str,
                       metadata) -> HeteroSamplerOutput:
        ds = self.dataset
        offset = torch.tensor(ds.node_type_offset, dtype=torch.int64)
        types = {t: i for i, t in enumerate(ds.node_types)}
        pairs = []
        for name in ds.relations:
            s, _, d = name.split(":")
            pairs.append((types[s], types[d]))
        typed = [_loader.TypedBlock.from_dict(b.split(offset, pairs), ds.node_types, ds.relations) for b in blocks]
        if not typed:  # no hops: the seeds alone
            last_nodes = {t: input_nodes[(input_nodes >= b) & (input_nodes < e)] for t, (b, e) in
                          ds.node_type_ranges.items()}
        else:
            last_nodes = typed[-1].src_nodes
        nodes, edges = _pyg._trim_by_hop({t: int(v.numel()) for t, v in last_nodes.items()}, seed_type, num_seeds,
                                         [[(name, r.src_type, r.dst_type, r.indices, r.dst_index, None)
                                           for name, r in block.relations.items()] for block in typed], "cpu")
        node, row, col = {}, {}, {}
        for t, (order, _, _) in nodes.items():
            node[t] = last_nodes[t][order] - ds.node_type_ranges[t][0]
        for name, (srcs, dsts, _) in edges.items():
            s, rel, d = name.split(":")
            row[(s, rel, d)] = nodes[s][1][torch.cat(srcs)]
            col[(s, rel, d)] = nodes[d][1][torch.cat(dsts)]
        return HeteroSamplerOutput(
            node=node, row=row, col=col, edge=None,
            num_sampled_nodes={t: counts for t, (_, _, counts) in nodes.items()},
            num_sampled_edges={tuple(name.split(":")): [int(e.numel()) for e in srcs]
                               for name, (srcs, _, _) in edges.items()},
            metadata=metadata)

    def sample_from_edges(self, inputs: EdgeSamplerInput,
                          neg_sampling: Optional[NegativeSampling] = None) -> SamplerOutput:
        ds = self.dataset
        if ds.is_hetero or inputs.input_type is not None:
            raise NotImplementedError("GraphtierSampler.sample_from_edges: graphtier's link sampler takes a "
                                      "homogeneous dataset; this one is typed")
        if inputs.time is not None:
            raise NotImplementedError("GraphtierSampler: temporal link sampling (edge_label_time) is not supported; "
                                      "use graphtier.pyg.LinkNeighborLoader's time_attr")
        mode, amount = _negative_sampling(neg_sampling)
        src = self._global_ids(_local_ids(inputs.row, ds.num_nodes, "edge_label_index", None))
        dst = self._global_ids(_local_ids(inputs.col, ds.num_nodes, "edge_label_index", None))
        pairs = torch.stack([src, dst], dim=1).contiguous().view(-1)
        seed, stream = self._stream()
        # Made once per seed (once per worker) and negative sampling: the engine checks the negative
        # options when the sampler is made, for batches of up to this many edges.
        key = (seed, mode, amount, int(src.numel()))
        if self._link is None or self._link[0][:3] != key[:3] or self._link[0][3] < key[3]:
            self._link = (key, _core.LinkSampler(ds, self.num_neighbors, self.replace, seed, negatives=mode,
                                                 amount=amount, batch_size=max(key[3], 1)))
        d = self._link[1].sample(pairs, stream, self.exclude_seed_edges)
        blocks = [_loader.Block.from_dict(b) for b in d["blocks"]]
        num_pos = int(src.numel())
        if mode == "triplet":
            neg = d["dst_neg_index"].view(num_pos, -1)
            metadata = (inputs.input_id, d["src_index"], d["dst_pos_index"], neg.squeeze(-1) if neg.shape[1] == 1
                        else neg, None)
        else:
            label_index = torch.stack([d["label_src"], d["label_dst"]])
            label = inputs.label
            if mode == "binary":
                positive = torch.ones(num_pos) if label is None else label
                label = torch.cat([positive, positive.new_zeros(label_index.shape[1] - num_pos)])
            metadata = (inputs.input_id, label_index, label, None)
        return _node_output(blocks, d["input_nodes"], int(d["seeds"].numel()), metadata)


def _node_output(blocks: list, input_nodes: torch.Tensor, num_seeds: int, metadata) -> SamplerOutput:
    """A homogeneous minibatch (graphtier blocks over `input_nodes`, the first `num_seeds` the seeds)
    as PyG's SamplerOutput."""
    nodes, edges = _pyg._trim_by_hop({None: int(input_nodes.numel())}, None, num_seeds,
                                     [[(None, None, None, b.indices, b.dst_index, b.edge_ids)] for b in blocks], "cpu")
    order, new_pos, counts = nodes[None]
    sources, targets, edge_ids = edges.get(None, ([], [], []))
    empty = torch.zeros(0, dtype=torch.int64)
    row = new_pos[torch.cat(sources)] if sources else empty
    col = new_pos[torch.cat(targets)] if targets else empty
    edge = torch.cat(edge_ids) if edge_ids and len(edge_ids) == len(blocks) else None
    return SamplerOutput(node=input_nodes[order], row=row, col=col, edge=edge, num_sampled_nodes=counts,
                         num_sampled_edges=[int(s.numel()) for s in sources], metadata=metadata)
