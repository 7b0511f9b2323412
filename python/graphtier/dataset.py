"""graphtier.Dataset: the C++ reader (graphtier/graph/dataset.hpp) with the id arguments of its id
maps checked here, as the loaders' are.

Node numberings: `graphtier prepare` renumbers a dataset's nodes (hot nodes first) and keeps the
map in permutation.bin. Everything the dataset holds and the engine returns (splits, labels,
features, a batch's seeds and input nodes) is in the dataset's own numbering, "prepared"; the ids of
the input it was converted from (a PyG mask, an OGB split, ...) are "original". A dataset that was
never prepared has one numbering, both names for it.

Typed datasets number their nodes globally on disk (type t holds ids node_type_offset[t] to
node_type_offset[t + 1]), but every id the package takes or returns with a node type is local to
that type, as PyG, DGL and OGB number them: `split` returns {labelled type: ids within it}
(graphtier._ids.typed_node_ids is the one check of such ids).
"""

from __future__ import annotations

import hashlib
import os

import torch

from graphtier import _core
from graphtier._ids import node_ids, node_type_ranges


class Dataset(_core.Dataset):
    """A dataset directory opened read-only (memory maps); `Dataset(path)` validates it.

    `prepared` says whether its nodes were renumbered (it has permutation.bin); `to_original` and
    `from_original` map ids between the two numberings (the identity when it was not).

    A typed (heterogeneous) dataset names its node types (`node_types`, in id order; type `t`
    holds the ids `node_type_offset[t]` to `node_type_offset[t + 1]`, see `node_type_ranges`), its
    relations (`relations`, as "src:rel:dst"; `reverse_relations[r]` is the index of the relation
    holding r's edges reversed, or -1) and its `labelled_type` (or None). A homogeneous dataset
    has none: empty lists, `is_hetero` False."""

    def split(self, name: str):
        """The ids of split `name` ("train", "val" or "valid", "test"), int64, in the dataset's own
        (prepared) numbering. A typed dataset's are {labelled type: ids within the type}, as OGB's
        get_idx_split gives them and as the typed loaders (graphtier.pyg, graphtier.dgl, ids= of
        NeighborLoader) take them; a ValueError when the dataset has no such split."""
        ids = super().split(name)
        if not self.is_hetero:
            return ids
        begin = self.node_type_ranges[self.labelled_type][0]
        return {self.labelled_type: ids - begin}

    @property
    def is_hetero(self) -> bool:
        """Whether the dataset has node types and relations (docs/format.md, Heterogeneous datasets)."""
        return len(self.node_types) > 0

    @property
    def node_type_ranges(self) -> dict[str, tuple[int, int]]:
        """Each node type's global id range [begin, end), by name, in id order."""
        return node_type_ranges(self)

    def to_original(self, ids) -> torch.Tensor:
        """The original ids of prepared node `ids` (integer ids or a bool mask over the dataset's
        nodes, as loaders take them), int64, in their order; an id outside [0, num_nodes) is an
        IndexError naming it."""
        return super().to_original(node_ids(ids, "ids", self.num_nodes).numpy())

    def from_original(self, ids) -> torch.Tensor:
        """The prepared (the dataset's own) ids of original node `ids` (integer ids, or a bool mask
        over the original nodes, e.g. a PyG `train_mask`), int64, in their order: what the loaders'
        `ids=` take by default; an id outside [0, num_nodes) is an IndexError naming it."""
        return super().from_original(node_ids(ids, "ids", self.num_nodes).numpy())


def open_dataset(data, argument: str) -> _core.Dataset:
    """`data` as an open dataset: a graphtier.Dataset as it is, a directory opened; anything else
    (an in-memory PyG Data or DGLGraph) is a TypeError naming `argument` and the way to convert it."""
    if isinstance(data, _core.Dataset):
        return data
    if isinstance(data, (str, os.PathLike)):
        return Dataset(os.fspath(data))
    raise TypeError(f"{argument}: expected a graphtier.Dataset or a dataset directory, got {type(data).__name__} "
                    f"(convert an in-memory graph with the `graphtier convert` command)")


def content_hash(file_checksums: dict) -> str:
    """A dataset's identity by content: SHA-256 (16 hex digits) over its files' names and XXH3-64
    checksums as its manifest records them (`file_checksums`: file name -> checksum, as
    Dataset.file_checksums, or a partition's source files). Another directory or name with the same
    files has the same hash; a renumbered, re-split or otherwise rewritten copy another."""
    text = "".join(f"{name} {file_checksums[name]}\n" for name in sorted(file_checksums))
    return hashlib.sha256(text.encode()).hexdigest()[:16]
