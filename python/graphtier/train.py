"""python -m graphtier.train DATASET: minibatch GNN training on a graphtier dataset.

Trains GraphSAGE (`--model sage`), a LADIES or FastGCN GCN (`--model ladies|fastgcn`) or an MLP on
the same features (`--model mlp`); on a typed dataset (e.g. datasets/acm converted), R-SAGE, R-GCN
or R-GAT (`--model rsage|rgcn|rgat`) on the labelled type, with learned embeddings
(--embedding-dim) for the node types without features, prints per-epoch loss, accuracy, batches/s, the loader's stage
and tier statistics, and ends with the test accuracy of the epoch with the best validation
accuracy. `--checkpoint PATH` saves the model, optimiser and loader position after every epoch
(atomically); `--resume` continues from it along the same sample stream, so an interrupted run and
an uninterrupted one give the same loss curve. `--plot run.png` draws the loss and accuracy curves
and each feature tier's rows/s per epoch (matplotlib, imported only then).

Given a partition directory (`graphtier partition`'s output) instead of a dataset, it trains on P
processes (`python -m graphtier.distributed.launch -n P -- PARTITION_DIR`, or torchrun):
PyTorch DDP, each step trains P minibatches, one per rank (rank K trains batch s * P + K at step
s), so an epoch has ceil(num_batches / P) steps and trains every minibatch (the last step may be
uneven); see graphtier.distributed.train. The
pieces both jobs share (model, step, evaluation, checkpoint) are graphtier.training.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import List, Optional

import torch

import graphtier
from graphtier import options, plots, threads
from graphtier.distributed import failure
from graphtier.training import (batch_seed, dataset_identity, evaluate, load_checkpoint, load_feature_table,
                                load_model_state, make_model, mapped_type_tables, model_features, save_checkpoint,
                                train_step, write_json)
from graphtier.training.model import RELATIONAL_MODELS
from graphtier.training.report import best_figures, final_line, not_evaluated, validation_figure


def parse_args(argv: Optional[List[str]] = None, prog: str = "python -m graphtier.train") -> argparse.Namespace:
    # ArgumentDefaultsHelpFormatter appends "(default: ...)" to every option with a help text.
    p = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("dataset", help="dataset directory (graphtier format, with features, labels and splits), or a "
                                   "partition directory (graphtier partition) to train on its P ranks (python -m "
                                   "graphtier.distributed.launch -n P -- ARGS): each step trains P minibatches, one per rank (rank K: batch s * P + K "
                                   "at step s), so an epoch has ceil(num_batches / P) steps, the last maybe uneven, "
                                   "and trains every minibatch")
    p.add_argument("--task", choices=["node", "link"], default="node",
                   help="node classification, or link prediction (graphtier.link_train: its own options, see "
                        "--task link --help)")
    p.add_argument("--model", choices=["sage", "ladies", "fastgcn", "mlp", *RELATIONAL_MODELS], default="sage",
                   help="the model (rsage, rgcn, rgat: typed datasets)")
    p.add_argument("--fanouts", default=argparse.SUPPRESS,
                   help="per-layer fanouts, comma-separated, seeds' hop first; sage: neighbours per node, -1 = all "
                        "(default 25,10; rsage/rgcn/rgat: per relation, see --relation-fanouts); ladies/fastgcn: "
                        "nodes per layer (default 512,512); mlp: ignored")
    p.add_argument("--mlp-layers", type=int, default=2, help="layers of --model mlp")
    p.add_argument("--batch-size", type=int, default=1024, help="training seeds per minibatch")
    p.add_argument("--eval-batch-size", type=int, default=1024, help="seeds per minibatch in validation and test")
    p.add_argument("--epochs", type=int, default=50, help="training epochs")
    p.add_argument("--hidden", type=int, default=128, help="hidden channels")
    p.add_argument("--embedding-dim", type=int, default=64,
                   help="rsage/rgcn/rgat: the learned embedding of each node of a type without features")
    p.add_argument("--dropout", type=float, default=0.5, help="dropout probability")
    p.add_argument("--lr", type=float, default=0.01, help="Adam's learning rate")
    p.add_argument("--weight-decay", type=float, default=5e-4, help="Adam's weight decay")
    p.add_argument("--normalize-features", action="store_true",
                   help="divide each feature row by its sum (PyG's NormalizeFeatures, for bag-of-words features)")
    p.add_argument("--seed", type=int, default=0, help="seed of the sample stream, shuffling and the model")
    p.add_argument("--device", default="cpu", help="cpu or cuda[:N]")
    # The tier and pipeline flags are the option classes' fields (graphtier.options): their names,
    # defaults and help are the engine's.
    options.add_arguments(p, options.FeatureStoreOptions, options.CLI_STORE_OPTIONS)
    options.add_arguments(p, options.LoaderOptions, options.CLI_LOADER_OPTIONS)
    threads.add_arguments(p)
    p.add_argument("--baseline", action="store_true",
                   help="the pipeline without graphtier's feature path, for comparison: graphtier's CPU sampler, "
                        "then x_cpu.index_select(0, input_nodes).to(device) in the training loop (features in RAM; "
                        "a typed dataset's per-type tables memory-mapped)")
    p.add_argument("--packed-messages", action="store_true",
                   help="a partitioned graph's distributed sampling: requests and replies packed as varints (2-3x "
                   "fewer bytes for 10-20 ns of CPU a value: for links slower than ~0.5-1 Gb/s per rank)")
    p.add_argument("--no-eval", action="store_true", help="skip validation and test (timing runs)")
    p.add_argument("--deterministic", action="store_true",
                   help="deterministic PyTorch kernels (on a GPU the aggregation's index_add otherwise sums "
                        "in atomics' order, so loss curves differ in the last bits run to run)")
    p.add_argument("--checkpoint", default=None, help="checkpoint file, written after every epoch")
    p.add_argument("--resume", action="store_true", help="continue from --checkpoint if it exists")
    p.add_argument("--stop-after-batches", type=int, default=None,
                   help="checkpoint and stop after this many training batches in this run (interruption tests; "
                        "distributed: steps of P minibatches)")
    failure.add_arguments(p)
    p.add_argument("--json", default=None, help="write the per-epoch metrics and per-batch losses to this file")
    p.add_argument("--plot", default=None,
                   help="draw loss, accuracy and per-tier rows/s per epoch into this PNG (needs matplotlib)")
    p.add_argument("--quiet", action="store_true", help="only the final line")
    args = p.parse_args(_fanouts_joined(sys.argv[1:] if argv is None else list(argv)))
    if args.resume and not args.checkpoint:
        raise ValueError("--resume needs --checkpoint PATH (the file to continue from)")
    if getattr(args, "fanouts", None) is None:
        args.fanouts = {"ladies": "512,512", "fastgcn": "512,512", "mlp": "0"}.get(args.model, "25,10")
    if args.model == "mlp":
        args.fanouts = "0"  # one empty block: the seeds' own features
    args.fanout_list = [_integer("--fanouts", f) for f in args.fanouts.split(",") if f.strip()]
    for f in args.fanout_list:
        if f < -1:
            raise ValueError(f"--fanouts: {f} is not a fanout (expected -1 for all neighbours, or a count >= 0)")
    if not args.fanout_list:
        p.error("--fanouts needs at least one layer")
    _check_ranges(args)
    return args


# The lowest value of each count (argparse only checks that it is an integer); the fanouts' range
# is the sampler's (-1 means all neighbours) and the budgets' the engine's.
_MINIMUM = {"epochs": 0, "batch_size": 1, "eval_batch_size": 1, "hidden": 1, "embedding_dim": 1, "mlp_layers": 1,
            "io_depth": 0,
            "window": 0, "prefetch": 1, "threads": 0, "torch_threads": 0, "stop_after_batches": 1, "bulk": 0}


def _fanouts_joined(argv: List[str]) -> List[str]:
    """`--fanouts -1,10` as `--fanouts=-1,10`: argparse takes a value that starts with '-' and is not
    a plain negative number for an option, and would refuse the -1 (all neighbours)."""
    out: List[str] = []
    i = 0
    while i < len(argv):
        if argv[i] == "--":
            return out + argv[i:]
        if argv[i] == "--fanouts" and i + 1 < len(argv) and argv[i + 1].startswith("-") \
                and all(part.strip().lstrip("-").isdigit() for part in argv[i + 1].split(",")):
            out.append(f"--fanouts={argv[i + 1]}")
            i += 2
            continue
        out.append(argv[i])
        i += 1
    return out


def _integer(option: str, text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"{option}: {text.strip()!r} is not an integer") from None


def _check_ranges(args: argparse.Namespace) -> None:
    """Refuses negative counts and seeds (ValueError naming the option): they would otherwise run
    zero epochs, build empty layers or reach the engine as a huge unsigned number."""
    for name, low in _MINIMUM.items():
        value = getattr(args, name)
        if value is not None and value < low:
            raise ValueError(f"--{name.replace('_', '-')}: expected an integer >= {low}, got {value}")
    failure.check_arguments(args)
    if not 0 <= args.seed < 2**64:
        raise ValueError(f"--seed: expected an integer in [0, 2^64), got {args.seed}")


def _check_model_fits(args, ds) -> None:
    """A typed dataset trains a relational model on its labelled type; a homogeneous one any other
    (ValueError naming the mismatch)."""
    if ds.num_classes == 0:
        raise ValueError(f"{args.dataset}: training needs labels")
    if ds.is_hetero:
        if args.model not in RELATIONAL_MODELS:
            raise ValueError(f"{args.dataset} is a typed dataset (node types {', '.join(ds.node_types)}): train it "
                             f"with --model {'|'.join(RELATIONAL_MODELS)}")
        if ds.labelled_type is None:
            raise ValueError(f"{args.dataset}: no node type is labelled")
    elif args.model in RELATIONAL_MODELS:
        raise ValueError(f"--model {args.model} trains a typed dataset; {args.dataset} has one node type")
    elif ds.feature_dim == 0:
        raise ValueError(f"{args.dataset}: training needs features and labels")


def make_loader(args, ds, store, split: str, train: bool, engine_threads: Optional[int] = None):
    """The loader of `split`; `engine_threads` sampling threads (default: --threads as given)."""
    o = options.from_arguments(args, options.LoaderOptions, options.CLI_LOADER_OPTIONS,
                               batch_size=args.batch_size if train else args.eval_batch_size, shuffle=train,
                               seed=args.seed,
                               sample_threads=args.threads if engine_threads is None else engine_threads)
    if args.model in ("ladies", "fastgcn"):
        return graphtier.LayerLoader(ds, args.fanout_list, method=args.model, split=split, device=args.device,
                                     store=store, options=o)
    if args.model in RELATIONAL_MODELS:
        return graphtier.NeighborLoader(ds, args.fanout_list, split=split, device=args.device, store=store,
                                        features=not args.baseline, options=o)
    if args.baseline:
        o.gpu_sampling = False
    return graphtier.NeighborLoader(ds, args.fanout_list, split=split, device="cpu" if args.baseline else args.device,
                                    store=store, features=not args.baseline, options=o)


def model_inputs(batch, args, x_cpu=None):
    """(x, batch) ready for the model on args.device. The baseline (x_cpu given) gathers x with
    index_select on the CPU and copies it and the batch to the device; graphtier's x is already there.
    A typed batch's x is {type: features}; its baseline's x_cpu {type: (first id, memory-mapped table)}."""
    if batch.typed_blocks is not None:
        if x_cpu is not None:
            nodes = batch.typed_blocks[-1].src_nodes
            x_dict = {t: table.index_select(0, nodes[t].cpu() - begin).to(args.device)
                      for t, (begin, table) in x_cpu.items()}
            batch = batch.to(args.device)
        else:
            x_dict = batch.x_dict
        return {t: model_features(x, args.normalize_features) for t, x in x_dict.items()}, batch
    if x_cpu is not None:
        x = x_cpu.index_select(0, batch.input_nodes).to(args.device)
        batch = batch.to(args.device)
    else:
        x = batch.x
    return model_features(x, args.normalize_features), batch


def accuracy(model, loader, args, x_cpu=None) -> float:
    """The model's accuracy on the labelled seeds of `loader`'s split (the same sampled
    neighbourhoods at every evaluation: the loader's epoch 0)."""
    loader.set_epoch(0)
    correct, total = evaluate(model, (model_inputs(batch, args, x_cpu) for batch in loader))
    return correct / max(total, 1)


def _tier_summary(stats: dict) -> str:
    f = stats["features"]
    parts = [f"{name} {f[name]['rows']}" for name in ("gpu_hot", "gpu_cache", "host", "host_cache", "storage")
             if f[name]["rows"]]
    io = f["io"]
    if io["reads"]:
        parts.append(f"io {io['iops'] / 1e3:.1f}K IOPS")
    return ", ".join(parts) or "none"


def _clock(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}" if seconds >= 3600 \
        else f"{seconds // 60}:{seconds % 60:02d}"


class ProgressBar:
    """One epoch's progress on a terminal, redrawn in place (carriage return): batches done/total, batches/s,
    ETA and the last loss, at most every `interval` seconds (and at the last batch). It writes
    nothing when `stream` is not a terminal, so logs and pipes get only the per-epoch lines."""

    WIDTH = 24

    def __init__(self, stream, epoch: int, total: int, interval: float = 0.1, enabled: Optional[bool] = None):
        self.stream, self.epoch, self.total, self.interval = stream, epoch, total, interval
        self.enabled = stream.isatty() if enabled is None else enabled
        self.start = time.perf_counter()
        self.last = float("-inf")
        self.drawn = False

    def update(self, done: int, loss: float) -> None:
        now = time.perf_counter()
        if not self.enabled or (done < self.total and now - self.last < self.interval):
            return
        self.last = now
        rate = done / max(now - self.start, 1e-9)
        filled = self.WIDTH * done // max(self.total, 1)
        eta = _clock((self.total - done) / rate) if rate > 0 else "?"
        self.stream.write(f"\repoch {self.epoch:3d} [{'#' * filled}{'.' * (self.WIDTH - filled)}] {done}/{self.total} "
                          f"batches  {rate:.1f} batches/s  ETA {eta}  loss {loss:.4f}\033[K")
        self.stream.flush()
        self.drawn = True

    def clear(self) -> None:
        """Erases the bar (before the epoch's line is printed in its place)."""
        if self.drawn:
            self.stream.write("\r\033[K")
            self.stream.flush()
            self.drawn = False


def run(args: argparse.Namespace, prog: str = "python -m graphtier.train") -> dict:
    from graphtier.distributed.train import is_partition_dir

    if is_partition_dir(args.dataset):
        from graphtier.distributed import train as distributed_train

        return distributed_train.run(args, prog)
    if args.plot:
        plots.require()
    division = threads.of_arguments(args)
    with threads.torch_threads(division):
        return _train(args, division)


def _train(args: argparse.Namespace, division: threads.ThreadDivision) -> dict:
    if not args.quiet:
        print(division, flush=True)
    if args.deterministic:
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")  # read when cuBLAS starts
        torch.use_deterministic_algorithms(True, warn_only=True)
    torch.manual_seed(args.seed)
    ds = graphtier.Dataset(args.dataset)
    _check_model_fits(args, ds)
    device = torch.device(args.device)
    if args.baseline and args.model not in ("ladies", "fastgcn"):
        store = None  # the baseline reads its own tables (x_cpu); only the layer-wise loaders still gather
    elif ds.is_hetero:
        # One store of the per-type tables for the three loaders, when a type has one.
        store = (graphtier.TypedFeatureStore(ds, options=options.cli_store_options(args), threads=division.engine)
                 if any(ds.node_type_feature_dims) else None)
    else:
        store = graphtier.FeatureStore(ds, options.cli_store_options(args), threads=division.engine,
                                       device=device.index or 0)
    train_loader = make_loader(args, ds, store, "train", train=True, engine_threads=division.engine)
    valid_loader = make_loader(args, ds, store, "valid", train=False, engine_threads=division.engine)
    test_loader = make_loader(args, ds, store, "test", train=False, engine_threads=division.engine)
    x_cpu = None if not args.baseline else mapped_type_tables(ds) if ds.is_hetero else load_feature_table(ds)
    model = make_model(args, ds.feature_dim, ds.num_classes, ds).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)

    history = {"epochs": [], "losses": []}
    best = not_evaluated()
    partial = {"loss_sum": 0.0, "correct": 0, "seen": 0}  # the running epoch, for a mid-epoch checkpoint
    if args.resume and args.checkpoint and os.path.exists(args.checkpoint):
        state = load_checkpoint(args.checkpoint, ds)
        load_model_state(args.checkpoint, state, model, optimizer)
        train_loader.set_epoch(*state["position"])
        history, best, partial = state["history"], state["best"], state["partial"]
        if not args.quiet:
            print(f"resumed from {args.checkpoint} at epoch {state['position'][0]}, batch {state['position'][1]}")

    def checkpoint() -> None:
        if args.checkpoint:
            save_checkpoint(args.checkpoint, {
                "model": model.state_dict(), "optimizer": optimizer.state_dict(), "position": train_loader.position,
                "history": history, "best": best, "partial": partial, "args": vars(args),
                "dataset": dataset_identity(ds)})

    steps_this_run = 0
    events = ([torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)]
              if device.type == "cuda" else None)
    while train_loader.position[0] < args.epochs:
        epoch = train_loader.position[0]
        model.train()
        start = time.perf_counter()
        compute_seconds = 0.0
        bar = ProgressBar(sys.stdout, epoch, len(train_loader), enabled=False if args.quiet else None)
        for batch in train_loader:
            x, batch = model_inputs(batch, args, x_cpu)
            step_start = time.perf_counter()
            if events:
                events[0].record()
            step = train_step(model, optimizer, x, batch, batch_seed(args.seed, epoch, batch.index))
            if events:
                events[1].record()
            loss_value, labelled, correct = step.figures()  # waits for the device: the step is done
            history["losses"].append(loss_value)
            # Busy time: on a GPU the step's own time on the device (CUDA events), else its wall time.
            compute_seconds += (events[0].elapsed_time(events[1]) / 1000 if events
                                else time.perf_counter() - step_start)
            partial["loss_sum"] += loss_value * labelled
            partial["correct"] += correct
            partial["seen"] += labelled
            bar.update(batch.index + 1, loss_value)
            steps_this_run += 1
            if args.stop_after_batches is not None and steps_this_run >= args.stop_after_batches:
                bar.clear()
                checkpoint()
                return {"stopped": True, "position": train_loader.position, "losses": history["losses"],
                        "seconds": time.perf_counter() - start}  # this epoch's, up to the stop
        seconds = time.perf_counter() - start
        stats = train_loader.stats()
        val_acc = None if args.no_eval else accuracy(model, valid_loader, args, x_cpu)
        if val_acc is not None and val_acc > best["val_acc"]:
            best = {"val_acc": val_acc, "test_acc": accuracy(model, test_loader, args, x_cpu), "epoch": epoch}
        record = {"epoch": epoch, "loss": partial["loss_sum"] / max(partial["seen"], 1),
                  "train_acc": partial["correct"] / max(partial["seen"], 1), "val_acc": val_acc,
                  "seconds": seconds, "batches_per_second": stats["batches"] / max(seconds, 1e-9),
                  "wait_fraction": stats["wait_seconds"] / max(seconds, 1e-9),
                  "busy_fraction": compute_seconds / max(seconds, 1e-9), "loader": stats}
        history["epochs"].append(record)
        partial = {"loss_sum": 0.0, "correct": 0, "seen": 0}
        bar.clear()
        if not args.quiet:
            print(f"epoch {epoch:3d}  loss {record['loss']:.4f}  train {record['train_acc']:.3f}  "
                  f"{validation_figure(val_acc)}{record['batches_per_second']:.1f} batches/s  "
                  f"busy {100 * record['busy_fraction']:.0f}%  sample {stats['sample_seconds']:.2f}s "
                  f"(window wait {stats['window_wait_seconds']:.2f}s) "
                  f"gather {stats['gather_seconds']:.2f}s ({stats['gathers']} gathers)  tiers: {_tier_summary(stats)}",
                  flush=True)
        checkpoint()

    result = {"model": args.model, "dataset": args.dataset, "seed": args.seed, **best_figures(best),
              "threads": division.as_dict(),
              "epochs": history["epochs"], "losses": history["losses"]}
    print(final_line(result), flush=True)
    if args.json:
        write_json(args.json, result)
    if args.plot:
        plots.write_png(plots.training_figure(result), args.plot)
    return result


def _task(argv: List[str]) -> str:
    """The --task given (node when none), read before the task's own options are parsed."""
    for i, arg in enumerate(argv):
        if arg.startswith("--task="):
            return arg.split("=", 1)[1]
        if arg == "--task" and i + 1 < len(argv):
            return argv[i + 1]
    return "node"


def main(argv: Optional[List[str]] = None, prog: str = "python -m graphtier.train") -> int:
    """Runs the job; `prog` names the command in usage lines (`graphtier train` runs this). A bad
    option, dataset or checkpoint is one line on stderr and exit status 2."""
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        if _task(argv) == "link":
            from graphtier import link_train  # its own options and loop (python/graphtier/link_train.py)
            link_train.run(link_train.parse_args(argv, prog), prog)
        else:
            run(parse_args(argv, prog), prog)
    except (ValueError, IndexError, OSError, NotImplementedError) as e:
        print(f"{prog}: error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
