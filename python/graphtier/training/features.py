"""Features as the model takes them: float32, each row divided by its sum with
--normalize-features; and the baseline's tables: the whole table in RAM, or a typed dataset's
memory-mapped per-type tables."""

from __future__ import annotations

import os

import numpy as np
import torch

from graphtier._dtypes import torch_dtype


def model_features(x: torch.Tensor, normalize: bool) -> torch.Tensor:
    """x (any float dtype the store holds) as float32; `normalize`: each row divided by its sum
    (PyG's NormalizeFeatures, for bag-of-words features; an all-zero row stays zero)."""
    x = x.float()
    if normalize:
        x = x / x.sum(dim=1, keepdim=True).clamp(min=1e-12)
    return x


def load_feature_table(ds) -> torch.Tensor:
    """The whole feature table of the dataset `ds` as one CPU tensor in its stored dtype
    (the baseline's x_cpu): features.bin read into RAM, each row's padding dropped."""
    raw = torch.from_numpy(np.fromfile(os.path.join(ds.path, "features.bin"), dtype=np.uint8))
    rows = raw.reshape(ds.num_nodes, -1).view(torch_dtype(ds.feature_dtype))[:, : ds.feature_dim]
    return rows.contiguous()


def mapped_type_tables(ds) -> dict:
    """A typed dataset's feature tables as the baseline reads them: {type: (its first global id, a
    [nodes of the type, dim] view of the memory-mapped features.<type>.bin)} for each type with
    features; a row is read (through the page cache) when it is indexed."""
    return {t: (begin, ds.type_features(t)) for t, (begin, _), dim in
            zip(ds.node_types, ds.node_type_ranges.values(), ds.node_type_feature_dims) if dim > 0}
