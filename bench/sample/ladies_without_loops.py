"""graphtier.train with the self-loops removed from every block the LADIES model sees (the
experiment of docs/benchmarks.md, bulk sampling in the loader):

    OMP_NUM_THREADS=1 .venv/bin/python bench/sample/ladies_without_loops.py drop_loops \
        data/cora-wrpr --model ladies --fanouts 256,256 --epochs 15 --batch-size 64 --threads 2 --seed S

MODE "drop_loops": every self-loop edge (dst i -> src i) is removed and its row's weights
renormalised to sum 1, which for LayerSampler's blocks is exactly the LADIES block without the
added loop of A + I (their weights are (1 / w_u) / sum); "asis": unchanged. The other arguments
are graphtier.train's."""
import sys
import torch
import graphtier.models as models
from graphtier.loader import Block
from graphtier import train

mode = sys.argv[1]
orig = models.LayerGCN._layer

def drop_loops(block):
    dst = block.dst_index
    keep = block.indices != dst
    w = block.weights[keep]
    d = dst[keep]
    sums = torch.zeros(block.num_dst, dtype=w.dtype).index_add_(0, d, w)
    w = w / sums[d]
    counts = torch.bincount(d, minlength=block.num_dst)
    indptr = torch.zeros(block.num_dst + 1, dtype=torch.int64)
    indptr[1:] = torch.cumsum(counts, 0)
    return Block(block.num_dst, block.src_nodes, indptr, block.indices[keep], None, w)

def patched(x, lin, block):
    if mode == "drop_loops":
        block = drop_loops(block)
    return orig(x, lin, block)

models.LayerGCN._layer = staticmethod(patched)
res = train.run(train.parse_args(sys.argv[2:]))
