"""graphtier.Dataset: the C++ reader (graphtier/graph/dataset.hpp) with the id arguments of its id
maps checked here, as the loaders' are.

Node numberings: `graphtier prepare` renumbers a dataset's nodes (hot nodes first) and keeps the
map in permutation.bin. Everything the dataset holds and the engine returns (splits, labels,
features, a batch's seeds and input nodes) is in the dataset's own numbering, "prepared"; the ids of
the input it was converted from (a PyG mask, an OGB split, ...) are "original". A dataset that was
never prepared has one numbering, both names for it.
"""

from __future__ import annotations

import torch

from graphtier import _core
from graphtier._ids import node_ids


class Dataset(_core.Dataset):
    """A dataset directory opened read-only (memory maps); `Dataset(path)` validates it.

    `prepared` says whether its nodes were renumbered (it has permutation.bin); `to_original` and
    `from_original` map ids between the two numberings (the identity when it was not)."""

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
