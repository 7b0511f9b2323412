"""graphtier.FeatureStore: the C++ store (graphtier/feature/feature_store.hpp) with its id
argument checked here, as the loaders' are."""

from __future__ import annotations

import torch

from typing import Optional

from graphtier import _core
from graphtier import options as _options
from graphtier import threads as _threads
from graphtier._dtypes import torch_dtype
from graphtier._ids import node_ids, node_type_ranges, type_node_ids

class FeatureStore(_core.FeatureStore):
    """The feature store of `dataset` (a graphtier.Dataset, used as opened, or the path of one),
    its tiers as `options` (a graphtier.FeatureStoreOptions) says, with keyword options overriding
    its fields; `threads` gather threads (0: the engine's share of graphtier.divide_threads()
    when the script asked for one, else all cores). The store keeps no reference to the
    Dataset. `gather` takes ids in the dataset's own (prepared) numbering."""

    def __init__(self, dataset, options: Optional[_core.FeatureStoreOptions] = None, *, threads: int = 0, **kwargs):
        super().__init__(dataset, options=_options.store_options(kwargs, options),
                         threads=_threads.engine_threads(threads))

    def gather(self, ids, memory: str = "host", out: Optional[torch.Tensor] = None) -> torch.Tensor:
        """X[ids] as a new [len(ids), dim] tensor, byte for byte, in host, pinned or device memory
        (the store's GPU). `ids`: integer node ids in the dataset's own (prepared) numbering (a
        sequence, numpy array or tensor; Dataset.from_original maps original ones), or a bool mask
        with one entry per node (numpy array or tensor): the rows of its True positions.

        In device memory the tensor comes from PyTorch's caching allocator (torch.empty on the
        current stream), so freeing it costs no cudaFree.

        `out`: a contiguous host tensor of the table's dtype with at least len(ids) rows, to gather
        into instead (its first len(ids) rows are returned): a loop that reuses one does not fault a
        new tensor's pages in every call."""
        ids = node_ids(ids, "ids", self.num_nodes).numpy()
        if out is not None:
            if memory != "host" or out.device.type != "cpu":
                raise ValueError(f"gather: out= takes a host tensor (got one on {out.device}, memory={memory!r})")
            if out.dim() != 2 or out.shape[0] < len(ids):
                raise ValueError(f"gather: out has shape {tuple(out.shape)}; it needs at least {len(ids)} rows of "
                                 f"{self.feature_dim}")
            rows = out[:len(ids)]
            super().gather_into(ids, rows)
            return rows
        if memory != "device":
            return super().gather(ids, memory)
        device = torch.device("cuda", self.device)
        out = torch.empty((len(ids), self.feature_dim), dtype=torch_dtype(self.dtype), device=device)
        # The allocator may hand out memory that work queued on the current stream still reads; the
        # gather writes on the store's own stream, so it starts once that work is done (a host wait
        # on an event), and it is complete when gather_into returns.
        ready = torch.cuda.Event()
        ready.record(torch.cuda.current_stream(device))
        ready.synchronize()
        super().gather_into(ids, out)
        return out


class TypedFeatureStore(_core.TypedFeatureStore):
    """The per-type feature tables of a typed `dataset` (a graphtier.Dataset;
    graphtier/feature/typed_feature_store.hpp): one store per node type that has a table, the
    budgets of `options` (and keyword options) shared between the types by expected reads per
    byte. A ValueError for a homogeneous dataset or one whose types have no features. Loaders over
    the dataset take it as `store=`, so that several share its tiers."""

    def __init__(self, dataset, options: Optional[_core.FeatureStoreOptions] = None, *, threads: int = 0, **kwargs):
        super().__init__(dataset, options=_options.store_options(kwargs, options),
                         threads=_threads.engine_threads(threads))
        self.node_types = list(dataset.node_types)
        self._ranges = node_type_ranges(dataset)

    def gather(self, node_type: str, ids) -> torch.Tensor:
        """The features of node type `node_type`'s nodes `ids` (ids within the type, 0 to its count - 1,
        as Dataset.type_features and the typed loaders number them, or a bool mask of the type's
        nodes; an IndexError names one outside the type) as a new [len(ids), dim] host tensor of the
        type's dtype."""
        if node_type not in self.node_types:
            raise ValueError(f"unknown node type {node_type!r} (the dataset's: {', '.join(self.node_types)})")
        rows = type_node_ids(ids, "ids", node_type, self._ranges[node_type])
        return super().gather(self.node_types.index(node_type), rows.numpy())
