"""Bulk LADIES against one-at-a-time LADIES on the same seeds and streams (docs/benchmarks.md, bulk
sampling in the loader):

    .venv/bin/python bench/sample/ladies_blocks.py [DATASET (default data/cora-wrpr)]

Prints, per layer, over the training batches of epoch 0 (batch size 64, seed 0, the loaders'
seeds and streams): dst and src nodes, edges, self-loop edges, dst rows without edges, and the
mean weight a dst row puts on itself. Then, with every candidate kept (layer size 10^6), whether
both keep the same nodes and non-loop edges, and how far apart their weights are once the
self-loops are dropped and each row renormalised."""
import sys
import torch
import graphtier
from graphtier import _core

ds = graphtier.Dataset(sys.argv[1] if len(sys.argv) > 1 else "data/cora-wrpr")
n = ds.num_nodes
all_nodes = torch.arange(n, dtype=torch.int64)
rows = (all_nodes,) + tuple(_core.extract_rows(ds, all_nodes, 0))
SEED, BATCH = 0, 64
train = ds.split("train") if hasattr(ds, "split") else None
ids = _core.shuffled_ids(train, SEED, 0)
B = -(-ids.numel() // BATCH)  # every training batch of epoch 0

def bulk_blocks(seeds, stream, sizes):
    dst, out = seeds, []
    for layer in range(len(sizes)):
        d = _core.sample_bulk_layer(*rows, [dst], [stream], "ladies", sizes, False, SEED, layer)[0]
        out.append(d)
        dst = d["src_nodes"]
    return out

def one_blocks(seeds, stream, sizes):
    return _core.sample_minibatch(ds, "ladies", seeds, sizes, False, SEED, stream)["blocks"]

def weights(b):
    return b["weights"] if b["weights"] is not None else torch.zeros(b["indices"].numel())

def stats(b):
    indptr, idx, w = b["indptr"], b["indices"], weights(b)
    nd = b["num_dst"]
    dst = torch.repeat_interleave(torch.arange(nd), indptr[1:] - indptr[:-1])
    loop = idx == dst
    self_w = torch.zeros(nd).index_add_(0, dst[loop], w[loop].float())
    return dict(edges=int(idx.numel()), src=int(b["src_nodes"].numel()), dst=nd, loops=int(loop.sum()),
                empty=int(((indptr[1:] - indptr[:-1]) == 0).sum()), self_w=float(self_w.mean()))

def drop_loops(b):
    """(global dst, global src, weight) of the non-loop edges, weights renormalised per row."""
    indptr, idx, w = b["indptr"], b["indices"], weights(b).double()
    nd = b["num_dst"]
    dst = torch.repeat_interleave(torch.arange(nd), indptr[1:] - indptr[:-1])
    keep = idx != dst
    d, w = dst[keep], w[keep]
    s = torch.zeros(nd, dtype=torch.float64).index_add_(0, d, w)
    return b["src_nodes"][d], b["src_nodes"][idx[keep]], w / s[d]

def canonical(d, src, w):
    order = torch.argsort(d * (n + 1) + src)
    return d[order], src[order], w[order]

sizes = [256, 256]
print(f"Cora, layer sizes {sizes}, batch {BATCH}, the {B} training batches of epoch 0, seed {SEED}")
for name, fn in (("one at a time", one_blocks), ("bulk", bulk_blocks)):
    tot = [dict() for _ in sizes]
    for b in range(B):
        seeds = ids[b * BATCH:(b + 1) * BATCH].contiguous()
        stream = _core.minibatch_stream(0, b)
        for l, blk in enumerate(fn(seeds, stream, sizes)):
            for k, v in stats(blk).items():
                tot[l][k] = tot[l].get(k, 0) + v
    for l, t in enumerate(tot):
        print(f"  {name:14s} block {l}: dst {t['dst']/B:7.1f} src {t['src']/B:7.1f} edges {t['edges']/B:7.1f} "
              f"self-loops {t['loops']/B:6.1f} dst rows without edges {t['empty']/B:6.1f} "
              f"mean self weight {t['self_w']/B:.3f}")

# Every candidate kept: the only difference left should be the self-loops.
full = [10**6, 10**6]
worst, same_edges = 0.0, True
for b in range(B):
    seeds = ids[b * BATCH:(b + 1) * BATCH].contiguous()
    stream = _core.minibatch_stream(0, b)
    for x, y in zip(one_blocks(seeds, stream, full), bulk_blocks(seeds, stream, full)):
        if not torch.equal(x["src_nodes"].sort().values, y["src_nodes"].sort().values):
            same_edges = False
        d1, s1, w1 = canonical(*drop_loops(x))
        d2, s2, w2 = canonical(*drop_loops(y))
        if not (torch.equal(d1, d2) and torch.equal(s1, s2)):
            same_edges = False
            continue
        worst = max(worst, float((w1 - w2).abs().max()) if w1.numel() else 0.0)
print(f"every candidate kept: same nodes and non-loop edges: {same_edges}; "
      f"largest weight difference after dropping the loops and renormalising: {worst:.2e}")
