"""graphtier.FeatureStore: the C++ store (graphtier/feature/feature_store.hpp) with its id
argument checked here, as the loaders' are."""

from __future__ import annotations

import torch

from graphtier import _core
from graphtier._ids import node_ids


class FeatureStore(_core.FeatureStore):
    __doc__ = _core.FeatureStore.__doc__

    def gather(self, ids, memory: str = "host") -> torch.Tensor:
        """X[ids] as a new [len(ids), dim] tensor, byte for byte, in host, pinned or device memory
        (the store's GPU). `ids`: integer node ids (a sequence, numpy array or tensor), or a bool
        mask with one entry per node (numpy array or tensor): the rows of its True positions."""
        return super().gather(node_ids(ids, "ids", self.num_nodes).numpy(), memory)
