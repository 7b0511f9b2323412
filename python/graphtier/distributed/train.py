"""Distributed training: `python -m graphtier.distributed.launch -n P -- PARTITION_DIR ...`
(docs/architecture.md, Scale-out; README's "Distributed training").

PyTorch DDP over the model, training step and checkpoint of graphtier.training, as graphtier.train.
Step s of an epoch trains P minibatches, one per rank: rank K trains the epoch's minibatch b = s * P + K (the single-process loader's batch b: same
seeds, same sample), so an epoch has ceil(num_batches / P) steps and trains every minibatch the
single process trains. DDP averages the P gradients, so the loss curve is that of one process
accumulating the gradients of the same P minibatches per step (mean). At an uneven last step
(num_batches mod P = r > 0) the r ranks with a minibatch weigh their loss by P / r and the others
take an idle step (training.idle_step: zero gradients through DDP's all-reduce), so that step
averages the gradients of its r minibatches and every rank steps its optimiser alike.

Per rank, a prefetch thread samples the minibatch of step s + 1 and fetches its features
(DistFeatureFetcher, on a process group of its own) while step s trains. Evaluation runs on every
rank's share (minibatch b of the split on rank b % P) and the counts are summed over the ranks.
Rank 0 prints the per-epoch line (per-rank min/mean/max of sample, fetch, wait and compute seconds
and of bytes sent/received), writes the checkpoint and --json (all ranks' figures).

A typed dataset's partition trains R-SAGE/R-GCN/R-GAT (--model rsage|rgcn|rgat) as the
single-process run does: the same typed minibatches (DistSampler, per-relation fanouts), each
type's feature rows fetched from its owners (DistTypedFeatureFetcher), learned embeddings for the
types without a table.
"""

from __future__ import annotations

import argparse
import os
import queue
import sys
import threading
import time
from datetime import timedelta
from types import SimpleNamespace
from typing import List

import torch
import torch.distributed as dist

import graphtier
from graphtier import _core
from graphtier import options, plots, threads
from graphtier.distributed import failure
from graphtier.distributed.comm import CommStats
from graphtier.distributed.features import DistFeatureFetcher, DistTypedFeatureFetcher
from graphtier.distributed.sampler import DistSampler
from graphtier.distributed.grid import ProcessGrid, grid_groups
from graphtier.distributed.partition import Partition, rank_dir_name
from graphtier.training import (batch_seed, dataset_identity, evaluate, idle_step, load_checkpoint,
                                load_model_state, make_model, model_features, one_line, save_checkpoint, train_step,
                                write_json)
from graphtier.training.model import RELATIONAL_MODELS
from graphtier.training.report import best_figures, final_line, not_evaluated, validation_figure


def is_partition_dir(path: str) -> bool:
    """True when `path` is a partition directory (`graphtier partition`'s output, or one rank's
    directory of it), or holds this rank's directory (a copy on this machine of that rank's share).
    ValueError when it is not and the job has several ranks: each would train the whole dataset
    alone, writing the same files."""
    if _core.is_partition_directory(path):
        return True
    rank = os.environ.get("RANK", "")
    if rank.isdigit() and _core.is_partition_directory(os.path.join(path, rank_dir_name(int(rank)))):
        return True
    world = os.environ.get("WORLD_SIZE", "")
    if world.isdigit() and int(world) > 1:
        raise ValueError(f"{path}: not a partition directory, and the job has {world} ranks (WORLD_SIZE): each "
                         f"would train the whole dataset alone; `graphtier partition -d {path} -o DIR --ranks {world}` "
                         f"and train DIR, or run one process")
    return False


def _env_int(name: str) -> int:
    value = os.environ.get(name)
    if value is None:
        raise ValueError(f"a partition directory trains on P processes: launch with python -m "
                         f"graphtier.distributed.launch -n P -- PARTITION_DIR ... ({name} is not set)")
    return int(value)


def _rank_sampler(args, partition, grid, groups, split: str, train: bool, stats, comm_device) -> DistSampler:
    """This rank's sampler of one split: batch b = s * P + rank at step s (graph replicated: alone;
    graph partitioned: with the rank's process column, a collective on `groups`). Training and
    evaluation run the epoch's `steps`, which cover every minibatch (a rank without one at the last
    step still takes part in the exchanges)."""
    if args.model == "fastgcn":
        raise NotImplementedError("--model fastgcn: distributed training samples GraphSAGE (sage, mlp) and LADIES")
    method = args.model if args.model in _core.sampler_methods() else "neighbor"  # sage, mlp, r*: GraphSAGE's
    return DistSampler(partition, grid, method, args.fanout_list, args.batch_size if train else args.eval_batch_size,
                       args.seed, split=split, bulk=args.bulk, shuffle=train, groups=groups, stats=stats,
                       comm_device=comm_device, relation_fanouts=getattr(args, "relation_fanouts", None),
                       packed=args.packed_messages)


def _features(x, normalize: bool):
    """A minibatch's fetched features as the model takes them (a typed one's {type: features})."""
    if isinstance(x, dict):
        return {t: model_features(v, normalize) for t, v in x.items()}
    return model_features(x, normalize)


class _Prefetcher:
    """Runs sampling and the feature fetch of steps [first, end) on its own thread, one step ahead
    of training (a queue of one). Every rank runs the same steps, so the fetches (collectives on
    the fetcher's group) are issued in the same order everywhere; a step is never abandoned."""

    _END = object()

    def __init__(self, sampler: DistSampler, fetcher: DistFeatureFetcher, epoch: int, first: int, end: int):
        self.q: "queue.Queue" = queue.Queue(maxsize=1)
        self.sample_seconds = 0.0
        self.wait_seconds = 0.0
        self._thread = threading.Thread(target=self._run, args=(sampler, fetcher, epoch, first, end),
                                        name="graphtier-prefetch", daemon=True)
        self._thread.start()

    def _run(self, sampler, fetcher, epoch, first, end):
        try:
            it = zip(range(first, end), sampler.epoch(epoch, first, end))
            while True:
                t = time.perf_counter()
                item = next(it, None)
                self.sample_seconds += time.perf_counter() - t
                if item is None:
                    break
                step, batch = item
                self.q.put((step, batch, fetcher.gather_batch(batch)))
            self.q.put(self._END)
        except BaseException as e:  # raised again by the training thread
            self.q.put(e)

    def __iter__(self):
        while True:
            t = time.perf_counter()
            item = self.q.get()
            self.wait_seconds += time.perf_counter() - t
            if item is self._END:
                self._thread.join()
                return
            if isinstance(item, BaseException):
                raise item
            yield item


def _stats(values: List[float]) -> str:
    return f"{min(values):.2f}/{sum(values) / len(values):.2f}/{max(values):.2f}"


def _megabytes(values: List[float]) -> str:
    return "/".join(f"{v / 1e6:.2f}" for v in (min(values), sum(values) / len(values), max(values)))


def run(args, prog: str, job=None, check=None) -> dict:
    """The distributed job on this rank (see the module's comment): `job(args, prog, partition,
    rank, world, device, backend)` (default: node classification's training) once the ranks are
    checked, the process group is up and the watchdog runs. `check(partition)` raises ValueError or
    NotImplementedError for a partition the job cannot train: told to every rank before any
    collective, as a missing directory is. Every failure ends this process with a non-zero status
    after one line naming the failed rank; never returns on failure."""
    rank, world = _env_int("RANK"), _env_int("WORLD_SIZE")
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    if getattr(args, "baseline", False):
        raise ValueError("--baseline is single-process only (its feature table is the whole dataset's)")
    # This rank's directory and the world size, checked before anything starts; every error (a
    # directory missing on one machine, ranks beyond the partition's, which have none) is told to
    # every rank through the store below, so no rank waits for one that has left.
    error, partition = None, None
    try:
        partition = Partition.open(args.dataset, rank)
        partition.check_world(world)
        if check is not None:
            check(partition)
    except (ValueError, OSError, NotImplementedError) as e:
        error = one_line(e)
    device = torch.device(args.device)
    if device.type == "cuda":
        device = torch.device("cuda", local_rank)
        torch.cuda.set_device(device)
        args.device = str(device)
    backend = "nccl" if device.type == "cuda" else "gloo"
    timeout = timedelta(seconds=args.dist_timeout)
    # Our rendezvous first: a rank that never starts is named, within the timeout, on the others.
    dist.init_process_group(backend, store=failure.join(rank, world, args.dist_timeout), rank=rank, world_size=world,
                            timeout=timeout)
    store = failure.store_client(args.dist_timeout)
    record = {"graphtier": graphtier.__version__, "torch": torch.__version__.split("+")[0], "backend": backend,
              "partition": partition.identity() if partition is not None else None}
    failure.check_ranks(store, rank, world, record, error)  # raises on every rank (exit 2), no collective yet
    stale = max(2.0, min(10.0, args.dist_timeout / 3))
    watchdog = failure.Watchdog(failure.store_client(args.dist_timeout), rank, world, prog, stale_after=stale).start()
    watchdog.watch_signals()  # SIGTERM/SIGINT/SIGHUP: the others are told at once, not after the heartbeat
    # The rank's share of the cores, divided by graphtier.threads' rule: the fetcher's
    # gather pool takes the engine's part (--threads as the jobs read it), PyTorch the rest; the
    # result records it (the epoch lines stay one per epoch).
    division = threads.of_rank_arguments(args)
    args = argparse.Namespace(**{**vars(args), "threads": division.engine})
    try:
        with threads.torch_threads(division):
            result = (job or _train)(args, prog, partition, rank, world, device, backend)
        result["threads"] = division.as_dict()
        watchdog.stop()
        dist.barrier()
    except BaseException as e:
        _fail(watchdog, rank, e, prog)
    dist.destroy_process_group()
    return result


def _fail(watchdog: failure.Watchdog, rank: int, e: BaseException, prog: str) -> None:
    """Ends the process after `e`: a communication error waits for the watchdog to name the rank
    that caused it (it exits the process when it does); anything else is this rank's failure."""
    if failure.is_communication_error(e) and \
            watchdog.wait_for_diagnosis(watchdog.stale_after + 4 * watchdog.interval) is not None:
        watchdog.leave(1)  # the watchdog has reported the failed rank and ends the process
    message = f"{type(e).__name__}: {one_line(e)}"
    watchdog.publish(rank, message)
    print(f"{prog}: error: rank {rank}: {message}", file=sys.stderr, flush=True)
    watchdog.leave(2 if isinstance(e, (ValueError, IndexError, OSError, NotImplementedError)) else 1)


def _train(args, prog: str, partition, rank: int, world: int, device: torch.device, backend: str) -> dict:
    if args.plot:
        plots.require()
    if args.deterministic:
        torch.use_deterministic_algorithms(True, warn_only=True)
    torch.manual_seed(args.seed)
    m = partition.manifest
    grid = ProcessGrid(world, partition.replication, rank)
    # Sampling exchanges and fetches run on the prefetch thread only (training and evaluation
    # alike), one after the other, on grid groups of their own; the training thread's collectives
    # (DDP, figures) use the default group.
    groups = grid_groups(grid, timedelta(seconds=args.dist_timeout))
    fetch_group = groups.column
    sample_stats = CommStats()
    graph_ds = graphtier.Dataset(partition.graph_path)
    comm_device = device if backend == "nccl" else torch.device("cpu")
    if graph_ds.num_classes == 0:
        raise ValueError(f"{partition.graph_path}: training needs labels")
    if partition.typed != (args.model in RELATIONAL_MODELS):
        raise ValueError(f"{args.dataset}: a partition of a typed dataset trains --model {'|'.join(RELATIONAL_MODELS)}"
                         if partition.typed else f"--model {args.model} trains a typed dataset; {args.dataset} is a "
                         "partition of a homogeneous one")
    fetcher = (DistTypedFeatureFetcher if partition.typed else DistFeatureFetcher)(
        partition, grid, group=fetch_group, device=device, comm_device=comm_device,
        store=options.cli_store_options(args), threads=args.threads)
    # The whole graph's dataset as a checkpoint knows it (this rank's graph/ and features/ hold parts).
    whole = SimpleNamespace(name=graph_ds.name, num_nodes=int(m["num_nodes"]), num_edges=int(m["num_edges"]),
                            feature_dim=fetcher.dim, num_classes=graph_ds.num_classes, path=args.dataset,
                            file_checksums=m["source"]["files"])
    train_batches = _rank_sampler(args, partition, grid, groups, "train", True, sample_stats, comm_device)
    valid_batches = _rank_sampler(args, partition, grid, groups, "valid", False, sample_stats, comm_device)
    test_batches = _rank_sampler(args, partition, grid, groups, "test", False, sample_stats, comm_device)
    steps = train_batches.steps
    typed = None
    if partition.typed:
        # The graph's types and relations; the feature dims are features/' (graph/ holds no tables).
        dims = {t: fetcher.dims.get(t, 0) for t in graph_ds.node_types}
        typed = (list(graph_ds.node_types), list(graph_ds.relations), dict(fetcher.dims))
        model = make_model(args, 0, graph_ds.num_classes, SimpleNamespace(
            node_types=graph_ds.node_types, node_type_ranges=graph_ds.node_type_ranges,
            node_type_feature_dims=[dims[t] for t in graph_ds.node_types], relations=graph_ds.relations,
            labelled_type=graph_ds.labelled_type)).to(device)
    else:
        model = make_model(args, fetcher.dim, graph_ds.num_classes).to(device)
    # A relational model's last layer computes every type, the loss only the labelled one: its
    # other types' parameters get no gradient, which DDP must be told to expect.
    ddp = torch.nn.parallel.DistributedDataParallel(model, device_ids=[device.index] if device.type == "cuda" else None,
                                                    find_unused_parameters=typed is not None)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)
    distributed = {"ranks": world, "replication": grid.replication}

    history = {"epochs": [], "losses": []}
    best = not_evaluated()
    partial = {"loss_sum": 0.0, "correct": 0, "seen": 0, "losses": []}
    position = (0, 0)
    if args.resume and args.checkpoint:
        # Rank 0 reads the checkpoint and hands it to every rank: no file system shared by the ranks.
        box = [None]
        if rank == 0 and os.path.exists(args.checkpoint):
            state = load_checkpoint(args.checkpoint, whole, distributed=distributed)
            box[0] = state
        dist.broadcast_object_list(box, src=0)
        state = box[0]
        if state is not None:
            load_model_state(args.checkpoint, state, model, optimizer)
            position = tuple(state["position"])
            history, best = state["history"], state["best"]
            # Each rank sums its own share of the running epoch; the saved sums join rank 0's.
            partial = state["partial"] if rank == 0 else {"loss_sum": 0.0, "correct": 0, "seen": 0, "losses": []}
            if rank == 0 and not args.quiet:
                print(f"resumed from {args.checkpoint} at epoch {position[0]}, step {position[1]}", flush=True)

    def merged(figures: list) -> dict:
        return {"loss_sum": sum(f["loss_sum"] for f in figures), "correct": sum(f["correct"] for f in figures),
                "seen": sum(f["seen"] for f in figures),
                "losses": sorted(sum((f["losses"] for f in figures), []))}

    def checkpoint(pos, part) -> None:
        if args.checkpoint and rank == 0:
            save_checkpoint(args.checkpoint, {
                "model": model.state_dict(), "optimizer": optimizer.state_dict(), "position": list(pos),
                "history": history, "best": best, "partial": part, "args": vars(args),
                "dataset": dataset_identity(whole), "distributed": distributed})

    def accuracy(batches: DistSampler) -> float:
        """Over every rank's share of the split (a collective)."""
        prefetch = _Prefetcher(batches, fetcher, 0, 0, batches.steps)
        correct, total = evaluate(model, ((_features(x, args.normalize_features), batch.to(device))
                                          for _, batch, x in prefetch if batch is not None))
        counts = torch.tensor([correct, total], dtype=torch.int64, device=device if backend == "nccl" else "cpu")
        dist.all_reduce(counts)
        return int(counts[0]) / max(int(counts[1]), 1)

    steps_this_run = 0
    while position[0] < args.epochs:
        epoch, first = position
        end = steps
        if args.stop_after_batches is not None:
            end = min(steps, first + args.stop_after_batches - steps_this_run)
        model.train()
        start = time.perf_counter()
        fetcher.reset_counters()
        sampled_before = sample_stats.as_dict()
        compute = 0.0
        prefetch = _Prefetcher(train_batches, fetcher, epoch, first, end)
        for step, batch, x in prefetch:
            t = time.perf_counter()
            if batch is None:  # past the epoch's last minibatch: DDP's all-reduce still needs this rank
                idle_step(ddp, optimizer, fetcher.dim, len(args.fanout_list), device, typed)
                compute += time.perf_counter() - t
                steps_this_run += 1
                continue
            batch = batch.to(device)
            x = _features(x, args.normalize_features)
            weight = world / train_batches.batches_at(step)
            loss_value, labelled, correct = train_step(ddp, optimizer, x, batch,
                                                       batch_seed(args.seed, epoch, batch.index), weight).figures()
            compute += time.perf_counter() - t
            partial["loss_sum"] += loss_value * labelled
            partial["correct"] += correct
            partial["seen"] += labelled
            partial["losses"].append([batch.index, loss_value])
            steps_this_run += 1
        seconds = time.perf_counter() - start
        sent = fetcher.counters()
        sampled = {k: v - sampled_before[k] for k, v in sample_stats.as_dict().items()}
        # Bytes sent/received: the feature fetch's and, with the graph partitioned, the sampler's.
        figures = {"rank": rank, "sample_seconds": prefetch.sample_seconds, "fetch_seconds": sent["seconds"],
                   "wait_seconds": prefetch.wait_seconds, "compute_seconds": compute, "seconds": seconds,
                   "bytes_sent": sent["bytes_sent"] + sampled["bytes_sent"],
                   "bytes_received": sent["bytes_received"] + sampled["bytes_received"],
                   "fetch": sent, "sample_exchange": sampled, "loss_sum": partial["loss_sum"],
                   "correct": partial["correct"], "seen": partial["seen"], "losses": partial["losses"]}
        everyone: list = [None] * world
        dist.all_gather_object(everyone, figures)
        total = merged(everyone)
        if end < steps:  # --stop-after-batches: the running epoch's sums go into the checkpoint
            checkpoint((epoch, end), total)
            return {"stopped": True, "position": [epoch, end], "losses": [l for _, l in history["losses"]]}
        history["losses"] += total["losses"]
        val_acc = None if args.no_eval else accuracy(valid_batches)
        if val_acc is not None and val_acc > best["val_acc"]:
            best = {"val_acc": val_acc, "test_acc": accuracy(test_batches), "epoch": epoch}
        ranks = [{k: v for k, v in f.items() if k not in ("losses",)} for f in everyone]
        record = {"epoch": epoch, "loss": total["loss_sum"] / max(total["seen"], 1),
                  "train_acc": total["correct"] / max(total["seen"], 1), "val_acc": val_acc, "seconds": seconds,
                  "steps": end - first, "steps_per_second": (end - first) / max(seconds, 1e-9), "ranks": ranks}
        history["epochs"].append(record)
        partial = {"loss_sum": 0.0, "correct": 0, "seen": 0, "losses": []}
        position = (epoch + 1, 0)
        if rank == 0 and not args.quiet:
            col = lambda key: [f[key] for f in everyone]  # noqa: E731
            print(f"epoch {epoch:3d}  loss {record['loss']:.4f}  train {record['train_acc']:.3f}  "
                  f"{validation_figure(val_acc)}"
                  f"{record['steps_per_second']:.1f} steps/s ({world} minibatches each)  min/mean/max over "
                  f"{world} ranks: sample {_stats(col('sample_seconds'))}s  fetch {_stats(col('fetch_seconds'))}s  "
                  f"wait {_stats(col('wait_seconds'))}s  compute {_stats(col('compute_seconds'))}s  "
                  f"sent {_megabytes(col('bytes_sent'))} MB  received {_megabytes(col('bytes_received'))} MB",
                  flush=True)
        checkpoint(position, partial)

    losses = [l for _, l in history["losses"]]
    result = {"model": args.model, "dataset": args.dataset, "seed": args.seed, "ranks": world,
              "replication": grid.replication, "steps_per_epoch": steps, **best_figures(best),
              "epochs": history["epochs"], "losses": losses, "batch_losses": history["losses"]}
    if rank == 0:
        print(final_line(result, ranks=world), flush=True)
        if args.json:
            write_json(args.json, result)
    return result
