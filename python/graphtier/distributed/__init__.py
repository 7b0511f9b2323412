"""graphtier.distributed: training across processes and machines on torch.distributed.

P ranks form a (P/c) x c process grid (docs/architecture.md, Scale-out): process row i holds feature
block i (and, with the graph partitioned, topology block row i) on its c ranks; process column j
holds one rank of every row, so it holds the whole graph and every feature row between them. A rank
fetches what it lacks from its own column with all-to-allv. `graphtier partition` writes what each
rank needs (docs/format.md, Partition directory); collectives are torch.distributed's (Gloo on CPUs,
NCCL on GPUs, launched by graphtier.distributed.launch or torchrun), never a transport of our own.
"""

from graphtier.distributed.comm import CommStats, alltoallv
from graphtier.distributed.grid import ProcessGrid, grid_groups
from graphtier.distributed.partition import Partition
from graphtier.distributed.sampler import DistSampler, RowCache

__all__ = ["CommStats", "DistSampler", "Partition", "ProcessGrid", "RowCache", "alltoallv", "grid_groups"]
