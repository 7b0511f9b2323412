"""Distributed link prediction: `torchrun --nproc-per-node P -m graphtier.train PARTITION_DIR --task
link ...` on the partition of a dataset with seed edges (`graphtier split-links`, then `graphtier
partition --graph replicated`).

The one-process job (graphtier.link_train) split over the ranks as node classification is
(graphtier.distributed.train): step s of an epoch trains P link minibatches, rank K the epoch's
minibatch b = s * P + K, which is the one-process loader's batch b (its edges, negatives and
sample are drawn from the (seed, epoch, b) streams, whatever the rank count). Each rank samples
from its graph/ (the whole graph: the graph must be replicated) and fetches its batch's feature
rows from their owners (DistFeatureFetcher). The gradients of a step are summed over the ranks, each
rank's loss weighed by 1 / (the step's minibatches), so the loss curve is that of one process
accumulating the same minibatches per step; a rank without a minibatch at an epoch's uneven last
step adds zeros. One all-reduce of the flattened gradients per step (the encoder and decoder are
two modules and GCN's encoder reads the graph's degrees outside its state: no DDP wrapper needed).

Validation and test: minibatch b of the split's evaluation loaders on rank b % P; the scores and
ranks are gathered, so the AUC, MRR and Hits@K are those of one process.
"""

from __future__ import annotations

import copy
import time
from datetime import timedelta
from typing import Iterator, List, Optional, Tuple

import torch
import torch.distributed as dist
import torch.nn.functional as F

import graphtier
from graphtier import link, link_train
from graphtier.distributed.features import DistFeatureFetcher
from graphtier.distributed.grid import ProcessGrid, grid_groups
from graphtier.training import model_features, write_json

_NO_IDS = torch.zeros(0, dtype=torch.int64)


def _rank_steps(loader: "graphtier.LinkNeighborLoader", epoch: int, rank: int,
                world: int) -> Iterator[Tuple[int, Optional[link.LinkBatch]]]:
    """(step, this rank's minibatch or None) for every step of the epoch: ceil(len / P) steps."""
    n = len(loader)
    mine = loader.batches(epoch, range(rank, n, world))
    for step in range(-(-n // world)):
        yield step, (next(mine) if step * world + rank < n else None)


def check(args, partition) -> None:
    """What distributed link prediction needs of its options and partition (`run`'s check: refused
    on every rank before the first collective)."""
    if args.time_attr is not None:
        raise NotImplementedError("--time-attr: distributed link prediction samples without times (`graphtier "
                                  "partition` carries no seed edges' times); train temporal links in one process")
    if partition.typed:
        raise NotImplementedError(f"{partition.rank_path}: link prediction trains homogeneous datasets; this is the "
                                  "partition of a typed one")
    if partition.graph_mode != "replicated":
        raise NotImplementedError(f"{partition.rank_path}: link prediction samples on each rank's whole graph: "
                                  "partition with --graph replicated (this one is partitioned)")
    if link.link_split(graphtier.Dataset(partition.graph_path)) is None:
        raise ValueError(f"{partition.graph_path}: no seed edges; run `graphtier split-links` on the dataset before "
                         "`graphtier partition`")


def job(args, prog: str, partition, rank: int, world: int, device: torch.device, backend: str) -> dict:
    """Rank `rank`'s share of `--task link` on `partition` (graphtier.distributed.train.run's job)."""
    torch.manual_seed(args.seed)
    graph_ds = graphtier.Dataset(partition.graph_path)
    grid = ProcessGrid(world, partition.replication, rank)
    groups = grid_groups(grid, timedelta(seconds=args.dist_timeout))
    comm_device = device if backend == "nccl" else torch.device("cpu")
    fetcher = DistFeatureFetcher(partition, grid, group=groups.column, device=device, comm_device=comm_device,
                                 threads=args.threads)
    if fetcher.dim == 0:
        raise ValueError(f"{args.dataset} has no features to encode")
    fanouts = args.fanouts
    encoder, encode = link_train.make_encoder(args.model, graph_ds, fetcher.dim, args, len(fanouts), device)
    decoder = link_train.Decoder(args.decoder, args.out).to(device)
    params = list(encoder.parameters()) + list(decoder.parameters())
    optimiser = torch.optim.Adam(params, lr=args.lr)
    # graph/ holds no feature table (the fetcher serves the rows): the loaders gather nothing.
    loader = graphtier.LinkNeighborLoader(graph_ds, fanouts, args.batch_size, edges="train", negatives="binary",
                                          exclude_seed_edges=args.exclude, shuffle=True, seed=args.seed, store=None,
                                          device=device)
    features = lambda batch: model_features(  # noqa: E731  (a collective: every rank, every step)
        fetcher.gather(batch.input_nodes if batch is not None else _NO_IDS), args.normalize_features)
    history, best, best_state, batch_losses = [], None, None, []
    for epoch in range(args.epochs):
        encoder.train()
        decoder.train()
        start, fetch_seconds = time.perf_counter(), fetcher.counters()["seconds"]
        mine: List[Tuple[int, float, int]] = []
        for step, b in _rank_steps(loader, epoch, rank, world):
            x = features(b)
            optimiser.zero_grad()
            if b is not None:
                logits = link_train.pair_scores(encode, decoder, b, x)
                loss = F.binary_cross_entropy_with_logits(logits, b.label)
                (loss / min(world, len(loader) - step * world)).backward()
                mine.append((b.index, float(loss.detach()), int(b.label.numel())))
            _sum_gradients(params, comm_device)
            optimiser.step()
        seconds = time.perf_counter() - start
        everyone: list = [None] * world
        dist.all_gather_object(everyone, {"losses": mine, "seconds": seconds,
                                          "fetch_seconds": fetcher.counters()["seconds"] - fetch_seconds})
        losses = sorted(sum((r["losses"] for r in everyone), []))
        batch_losses += [[index, value] for index, value, _ in losses]
        loss = sum(v * n for _, v, n in losses) / max(sum(n for _, _, n in losses), 1)
        val = evaluate(encode, encoder, decoder, graph_ds, "val", args, features, rank, world, comm_device)
        row = {"epoch": epoch, "loss": loss, "seconds": seconds, **{f"val_{k}": v for k, v in val.items()},
               "ranks": [{"rank": r, "seconds": f["seconds"], "fetch_seconds": f["fetch_seconds"]}
                         for r, f in enumerate(everyone)]}
        history.append(row)
        if rank == 0:
            print(f"epoch {epoch:3d}  loss {loss:.4f}  val auc {val['auc']:.4f}  mrr {val['mrr']:.4f}  "
                  f"hits@{args.hits} {val[f'hits@{args.hits}']:.4f}  {seconds:.2f} s ({world} minibatches a step)",
                  flush=True)
        if best is None or val["auc"] > best["val_auc"]:
            best = row
            best_state = (copy.deepcopy(encoder.state_dict()), copy.deepcopy(decoder.state_dict()))
    encoder.load_state_dict(best_state[0])
    decoder.load_state_dict(best_state[1])
    test = evaluate(encode, encoder, decoder, graph_ds, "test", args, features, rank, world, comm_device)
    result = {"ranks": world, "best_epoch": best["epoch"], "val_auc": best["val_auc"],
              **{f"test_{k}": v for k, v in test.items()}, "losses": [v for _, v in batch_losses],
              "batch_losses": batch_losses}
    if rank == 0:
        print(f"test auc {test['auc']:.4f}  mrr {test['mrr']:.4f}  hits@{args.hits} {test[f'hits@{args.hits}']:.4f}  "
              f"(epoch {best['epoch']}, val auc {best['val_auc']:.4f}, {world} ranks)", flush=True)
        if args.json:
            write_json(args.json, {"history": history, "result": result})
    return result


def _sum_gradients(params: List[torch.nn.Parameter], comm_device: torch.device) -> None:
    """Every parameter's gradient summed over the ranks (a rank without a minibatch adds zeros), in
    one all-reduce of the flattened gradients."""
    grads = [p.grad if p.grad is not None else torch.zeros_like(p) for p in params]
    flat = torch.cat([g.reshape(-1) for g in grads]).to(comm_device)
    dist.all_reduce(flat)
    offset = 0
    for p in params:
        n = p.numel()
        p.grad = flat[offset:offset + n].view_as(p).to(p.device)
        offset += n


@torch.no_grad()
def evaluate(encode, encoder, decoder, graph_ds, split: str, args, features, rank: int, world: int,
             comm_device: torch.device) -> dict:
    """link_train.evaluate over the ranks: each scores its share of the split's minibatches, and
    every rank gets the figures of all of them."""
    encoder.eval()
    decoder.eval()
    binary, triplet = link_train.eval_loaders(graph_ds, split, args, args.fanouts, None)
    scores, labels, ranks = [], [], []
    for _, b in _rank_steps(binary, link_train.EVAL_EPOCH, rank, world):
        x = features(b)
        if b is not None:
            scores.append(link_train.pair_scores(encode, decoder, b, x).cpu())
            labels.append(b.label.cpu())
    for _, b in _rank_steps(triplet, link_train.EVAL_EPOCH, rank, world):
        x = features(b)
        if b is not None:
            ranks.append(link_train.positive_ranks(encode, decoder, b, x).cpu())
    empty = torch.zeros(0)
    mine = (torch.cat(scores) if scores else empty, torch.cat(labels) if labels else empty,
            torch.cat(ranks) if ranks else empty.to(torch.int64))
    everyone: list = [None] * world
    dist.all_gather_object(everyone, mine)
    return link_train.eval_figures(*(torch.cat([r[i] for r in everyone]) for i in range(3)), args.hits)
