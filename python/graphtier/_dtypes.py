"""The engine's element types (FeatureStore.dtype, Dataset.feature_dtype) as torch dtypes: the one
table, for the store, the distributed fetcher and the baseline's feature table."""

from __future__ import annotations

import torch

_TORCH_DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16,
                 "int32": torch.int32, "int64": torch.int64, "uint8": torch.uint8}


def torch_dtype(name: str) -> torch.dtype:
    """The torch dtype of the engine's element type `name` ("float32", "bfloat16", ...)."""
    try:
        return _TORCH_DTYPES[name]
    except KeyError:
        raise ValueError(f"element type '{name}' has no torch dtype here (expected one of "
                         f"{', '.join(_TORCH_DTYPES)})") from None
