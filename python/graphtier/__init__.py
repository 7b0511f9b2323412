"""graphtier: GNN training on graphs whose features do not fit in GPU (or CPU) memory.

The C++ engine samples minibatches, gathers their features from the tiers (GPU hot rows, GPU
cache, pinned host rows, SSD rows through io_uring) and pipelines both ahead of training; this
package hands its minibatches to PyTorch through DLPack without copies.

    ds = graphtier.Dataset("data/cora-wrpr")
    loader = graphtier.NeighborLoader(ds, fanouts=[10, 10], batch_size=64, split="train")
    for batch in loader:          # one epoch; iterate again for the next
        out = model(batch.x, batch.blocks)
        loss = F.cross_entropy(out, batch.y)

Works with PyTorch 1.13 (Debian's python3-torch) and 2.x; CPU everywhere, CUDA when the extension
was built with GRAPHTIER_CUDA=ON and a GPU is visible.
"""

import os
import sys

# Run as a program (`python -m graphtier.train`, under torchrun too: runpy imports this package with
# sys.argv[0] == "-m" before torch), PyTorch's C++ warnings are left out unless asked for: a failed
# rank is told in one graphtier line, and PyTorch 2.x would follow it on every other rank with each
# lost-store warning's 20-frame stack trace. TORCH_CPP_LOG_LEVEL=WARNING shows them again.
if sys.argv[:1] == ["-m"] and "torch" not in sys.modules:
    os.environ.setdefault("TORCH_CPP_LOG_LEVEL", "ERROR")

try:
    import torch  # noqa: F401  (the extension hands out torch tensors)
except ImportError as e:  # pragma: no cover - environment problem, not a code path
    raise ImportError(
        "graphtier needs PyTorch 1.13 or 2.x: install Debian's python3-torch or `pip install torch`"
    ) from e

from graphtier._core import cuda_available
from graphtier.dataset import Dataset
from graphtier.link import LinkBatch, LinkNeighborLoader
from graphtier.loader import Batch, Block, LayerLoader, NeighborLoader
from graphtier.options import Budget, FeatureStoreOptions, LoaderOptions
from graphtier.store import FeatureStore, TypedFeatureStore
from graphtier.threads import divide_threads

__all__ = ["Batch", "Block", "Budget", "Dataset", "FeatureStore", "FeatureStoreOptions", "LayerLoader", "LinkBatch",
           "LinkNeighborLoader", "LoaderOptions", "NeighborLoader", "TypedFeatureStore", "cuda_available",
           "divide_threads"]
__version__ = "0.1.0"
