"""python -m graphtier.train DATASET --task link: link prediction on a graphtier dataset.

A GraphSAGE or GCN (`--model gcn`) encoder over graphtier.LinkNeighborLoader's blocks and a
dot-product (or MLP) decoder score the dataset's seed edges (`graphtier split-links`; a dataset
without them is split here with the split-links defaults, val 0.05, test 0.1, seeded by --seed,
into a temporary dataset). Each epoch trains on the training edges with fresh binary negatives
(one per positive), every training edge passing messages (`--exclude` leaves each batch's own
edges out of its message passing, for small batches), then prints the loss and the validation AUC,
MRR and Hits@K; the run ends with the test figures of the epoch with the best validation AUC. The
defaults (DEFAULTS) are the setting of docs/benchmarks.md's Cora figure. Evaluation draws its
negatives from a fixed stream, so every epoch (and every run with the same seed) is scored against
the same negatives.

Temporal link prediction (`--time-attr edge_time` or `node_time`, `--temporal-strategy`): every
seed edge, training, validation or test, is predicted at its own time (its split-links time) from
the graph strictly before it: each endpoint's tree holds only neighbours whose edge (or node) time
is below the edge's, and with node times its negatives are nodes that existed by then. A dataset
with edge times is split here with `split-links --by-time` (the latest edges are validation and
test edges).
"""

from __future__ import annotations

import argparse
import copy
import os
import subprocess
import sys
import tempfile
import time
from typing import List, Optional

import torch
import torch.nn.functional as F
from torch import nn

import graphtier
from graphtier import link, threads
from graphtier.distributed import failure
from graphtier.models import GCN, GraphSAGE
from graphtier.training import model_features, write_json

# The evaluation loaders' epoch: their own stream, apart from every training epoch's.
EVAL_EPOCH = 1 << 30

#: The options' defaults where they are a choice of method: the setting of docs/benchmarks.md's
#: "Link prediction: Cora test AUC" (0.905 +- 0.008 over 5 seeds, PyG's example 0.901): PyG's
#: GCN, one full batch of training edges a step on Cora (4488 edges), every training edge passing
#: messages (excluding a 4096-edge batch's own edges drops 91% of Cora's message passing; sampled
#: small batches train with --exclude), MRR and Hits@K against 20 corrupted destinations. With
#: --time-attr the model is TEMPORAL_MODEL: GCN normalises by degrees that count later edges.
DEFAULTS = {"model": "gcn", "batch_size": 8192, "exclude": False, "eval_negatives": 20}
TEMPORAL_MODEL = "sage"


def parse_args(argv: Optional[List[str]] = None, prog: str = "python -m graphtier.train") -> argparse.Namespace:
    p = argparse.ArgumentParser(prog=prog + " --task link", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("dataset", help="dataset directory (graphtier format, one node type, with features; without "
                                   "seed edges it is split here as `graphtier split-links` splits), or a partition "
                                   "directory of one with seed edges (graphtier partition --graph replicated)")
    p.add_argument("--task", choices=["link"], default="link", help="the task")
    p.add_argument("--model", choices=["sage", "gcn"], default=argparse.SUPPRESS,
                   help="encoder: GraphSAGE (mean) or GCN (self-loops, symmetric normalisation, PyG's GCNConv) "
                        f"(default: {DEFAULTS['model']}; with --time-attr {TEMPORAL_MODEL})")
    p.add_argument("--fanouts", default="-1,-1", help="per-layer fanouts, seeds' hop first, -1 = all")
    p.add_argument("--batch-size", type=int, default=DEFAULTS["batch_size"],
                   help="training edges per minibatch (the default holds all of Cora's: one step an epoch)")
    p.add_argument("--eval-batch-size", type=int, default=4096, help="edges per minibatch in validation and test")
    p.add_argument("--epochs", type=int, default=100, help="training epochs")
    p.add_argument("--hidden", type=int, default=128, help="hidden channels")
    p.add_argument("--out", type=int, default=64, help="embedding channels")
    p.add_argument("--dropout", type=float, default=0.0, help="dropout probability")
    p.add_argument("--lr", type=float, default=0.01, help="Adam's learning rate")
    p.add_argument("--decoder", choices=["dot", "mlp"], default="dot", help="edge scores from the two embeddings")
    p.add_argument("--hits", type=int, default=10, help="K of Hits@K")
    p.add_argument("--eval-negatives", type=int, default=DEFAULTS["eval_negatives"],
                   help="corrupted destinations per positive for MRR and Hits@K")
    p.add_argument("--normalize-features", action="store_true",
                   help="divide each feature row by its sum (PyG's NormalizeFeatures, for bag-of-words features)")
    p.add_argument("--exclude", action=argparse.BooleanOptionalAction, default=argparse.SUPPRESS,
                   help="--exclude: leave each training batch's own edges (and their reverses) out of its message "
                        "passing, so that the model cannot read them off the graph (for small sampled batches); "
                        "--no-exclude: every training edge passes messages, as in PyG's full-batch example "
                        f"(default: --{'' if DEFAULTS['exclude'] else 'no-'}exclude; temporal batches exclude "
                        "nothing, each sees only earlier edges)")
    p.add_argument("--time-attr", choices=link.TIME_ATTRS, default=None,
                   help="temporal sampling: predict each seed edge from the neighbours before its time, by "
                        "their edge or node times (the split must carry edge times; node_time: a split-links "
                        "--disjoint split)")
    p.add_argument("--temporal-strategy", choices=link.TEMPORAL_STRATEGIES, default="uniform",
                   help="with --time-attr: draw the neighbours in time uniformly, or take the latest ones")
    p.add_argument("--seed", type=int, default=0, help="seed of the split (when drawn here), sampling and the model")
    p.add_argument("--device", default="cpu", help="where the model trains: cpu or cuda[:N] (distributed: cuda is "
                   "each rank's LOCAL_RANK GPU)")
    failure.add_arguments(p)
    threads.add_arguments(p)
    p.add_argument("--json", default=None, help="write the per-epoch figures and the result as JSON to this file")
    from graphtier.train import _fanouts_joined  # `--fanouts -1,-1` as the node task reads it

    args = p.parse_args(_fanouts_joined(list(argv) if argv is not None else sys.argv[1:]))
    try:
        args.fanouts = [int(f) for f in str(args.fanouts).split(",")]
    except ValueError:
        p.error(f"--fanouts: expected comma-separated integers, got {args.fanouts!r}")
    if any(f < -1 for f in args.fanouts) or args.batch_size < 1 or args.epochs < 1 or args.eval_negatives < 1:
        p.error("--fanouts must be -1 or more, --batch-size, --epochs and --eval-negatives positive")
    try:
        failure.check_arguments(args)
    except ValueError as e:
        p.error(str(e))
    if not hasattr(args, "model"):
        args.model = DEFAULTS["model"] if args.time_attr is None else TEMPORAL_MODEL
    if args.time_attr is not None and args.model == "gcn":
        p.error("--time-attr: --model gcn normalises by the whole graph's degrees, later edges included; use sage")
    if args.time_attr is not None and hasattr(args, "exclude"):
        p.error(f"--{'' if args.exclude else 'no-'}exclude: temporal batches exclude no seed edges (each sees only "
                "earlier edges)")
    if not hasattr(args, "exclude"):
        args.exclude = DEFAULTS["exclude"]
    return args


class Decoder(nn.Module):
    def __init__(self, kind: str, dim: int):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(dim, dim), nn.ReLU(), nn.Linear(dim, 1)) if kind == "mlp" else None

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return (a * b).sum(-1) if self.mlp is None else self.mlp(a * b).squeeze(-1)


def auc(scores: torch.Tensor, labels: torch.Tensor) -> float:
    """Area under the ROC curve: the probability that a positive outscores a negative (ties half)."""
    order = torch.argsort(scores)
    s = scores[order]
    ranks = torch.empty_like(s, dtype=torch.float64)
    # Average ranks over ties (1-based).
    _, inverse, counts = torch.unique_consecutive(s, return_inverse=True, return_counts=True)
    ends = torch.cumsum(counts, 0).to(torch.float64)
    ranks = ((ends - (counts.to(torch.float64) - 1) / 2))[inverse]
    y = labels[order] > 0
    p, n = int(y.sum()), int((~y).sum())
    if p == 0 or n == 0:
        return float("nan")
    return float((ranks[y].sum() - p * (p + 1) / 2) / (p * n))


def _ensure_split(path: str, seed: int, workdir: str) -> str:
    """`path`, or a split of it drawn into `workdir` when it has no seed edges (`graphtier
    split-links`; its refusal is a ValueError with the command's own line). What the task cannot
    train (a typed dataset, one without features) is refused first, before any split is drawn."""
    ds = graphtier.Dataset(path)
    link.require_homogeneous(ds)
    if ds.feature_dim == 0:
        raise ValueError(f"{path} has no features to encode")
    if link.link_split(ds) is not None:
        return path
    out = os.path.join(workdir, "split")
    command = os.path.join(os.path.dirname(sys.executable), "graphtier")
    if not os.path.exists(command):
        command = "graphtier"
    # A graph with edge times is split as temporal benchmarks split it, whether or not this run
    # samples by time, so that a run with --time-attr and one without score the same edges.
    by_time = ["--by-time"] if ds.edge_time is not None else []
    done = subprocess.run([command, "-q", "split-links", "-d", path, "-o", out, "--seed", str(seed), *by_time],
                          capture_output=True, text=True)
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines() or [f"exit status {done.returncode}"]
        raise ValueError(f"{path} has no seed edges and `graphtier split-links` could not draw them: {lines[-1]}")
    return out


def _temporal(ds, split: str, args) -> dict:
    """The loader options that sample split `split`'s edges in time (none without --time-attr).

    Each edge is labelled with its time minus one, i.e. predicted from the graph strictly before
    it. Temporal batches cannot exclude seed edges, and a training edge is also a message-passing
    edge (without --disjoint in split-links): sampled up to its own time, its tree would hold the
    edge itself, the label read off the input. Strictly earlier also hides the edges that arrive at
    the same instant (a new node's other links), as validation and test edges are hidden from
    their own trees, so training sees the graph as evaluation does."""
    if args.time_attr is None:
        return {}
    times = link.link_edge_time(ds, split)
    if times is None:
        raise ValueError(f"--time-attr: the link split of {args.dataset} carries no edge times (split a dataset "
                         f"with edge_time.bin, e.g. `graphtier generate --time-steps`, with `graphtier split-links`)")
    if args.time_attr == "node_time" and not link.link_split(ds)["disjoint"]:
        # Node times bound the neighbours' arrivals, not the edges': a training edge from a new node
        # to an older one passes that bound in its own tree whenever it also passes messages.
        raise ValueError("--time-attr node_time: the training edges of this split also pass messages, and node times "
                         "would not keep an edge out of its own tree; split with `graphtier split-links --disjoint` "
                         "or sample by edge_time")
    return {"time_attr": args.time_attr, "edge_label_time": times - 1,
            "temporal_strategy": args.temporal_strategy}


def make_encoder(kind: str, ds, feature_dim: int, args, num_layers: int, device: torch.device):
    """(model, encode) on `device`: GraphSAGE or GCN over `feature_dim` features, and encode(x,
    blocks) -> embeddings (GCN also reads the degrees of `ds`'s graph, kept here rather than in the
    model's state)."""
    if kind == "sage":
        model = GraphSAGE(feature_dim, args.hidden, args.out, num_layers, args.dropout).to(device)
        return model, model
    model = GCN(feature_dim, args.hidden, args.out, num_layers, args.dropout).to(device)
    degree = GCN.degrees(link.all_edges(ds), ds.num_nodes).to(device)
    return model, lambda x, blocks: model(x, blocks, degree)


def eval_loaders(ds, split: str, args, fanouts, store) -> tuple:
    """Split `split`'s two evaluation loaders, each on its fixed stream: binary negatives (AUC) and
    `--eval-negatives` corrupted destinations per positive (MRR, Hits@K), guaranteed non-edges."""
    common = dict(non_edges=True, exclude_seed_edges=False, seed=args.seed, store=store, device=args.device,
                  **_temporal(ds, split, args))
    loaders = (graphtier.LinkNeighborLoader(ds, fanouts, args.eval_batch_size, edges=split, negatives="binary",
                                            **common),
               graphtier.LinkNeighborLoader(ds, fanouts, args.eval_batch_size, edges=split, negatives="triplet",
                                            amount=args.eval_negatives, **common))
    for loader in loaders:
        loader.set_epoch(EVAL_EPOCH)
    return loaders


def pair_scores(encode, decoder, b, x: torch.Tensor) -> torch.Tensor:
    """The scores of a binary batch's labelled pairs (positives then negatives), features `x`."""
    h = encode(x, b.blocks)
    return decoder(h[b.label_index[0]], h[b.label_index[1]])


def positive_ranks(encode, decoder, b, x: torch.Tensor) -> torch.Tensor:
    """Each positive's rank among its corrupted destinations (triplet batch, features `x`)."""
    h = encode(x, b.blocks)
    pos = decoder(h[b.src_index], h[b.dst_pos_index])
    neg = decoder(h[b.src_index].unsqueeze(1), h[b.dst_neg_index])
    # Optimistic ties would flatter a constant model: a tie counts against the positive.
    return 1 + (neg >= pos.unsqueeze(1)).sum(1)


def eval_figures(scores: torch.Tensor, labels: torch.Tensor, ranks: torch.Tensor, hits: int) -> dict:
    """AUC of the scored pairs, MRR and Hits@`hits` of the positives' ranks."""
    ranks = ranks.to(torch.float64)
    return {"auc": auc(scores, labels), "mrr": float((1.0 / ranks).mean()), f"hits@{hits}": float((ranks <= hits).to(
        torch.float64).mean())}


@torch.no_grad()
def evaluate(encoder, encode, decoder, ds, store, split: str, args, fanouts) -> dict:
    encoder.eval()
    decoder.eval()
    binary, triplet = eval_loaders(ds, split, args, fanouts, store)
    scores, labels = [], []
    for b in binary:
        scores.append(pair_scores(encode, decoder, b, model_features(b.x, args.normalize_features)))
        labels.append(b.label)
    ranks = [positive_ranks(encode, decoder, b, model_features(b.x, args.normalize_features)) for b in triplet]
    return eval_figures(torch.cat(scores), torch.cat(labels), torch.cat(ranks), args.hits)


def run(args: argparse.Namespace, prog: str = "python -m graphtier.train") -> dict:
    """The job: on a dataset in this process, or on a partition directory (under torchrun) over the
    ranks (graphtier.distributed.link_train)."""
    from graphtier.distributed.train import is_partition_dir

    if is_partition_dir(args.dataset):
        from graphtier.distributed import link_train as distributed_link
        from graphtier.distributed import train as distributed_train

        return distributed_train.run(args, prog, job=distributed_link.job,
                                     check=lambda partition: distributed_link.check(args, partition))
    division = threads.of_arguments(args)
    print(division, flush=True)
    with threads.torch_threads(division):
        return _run(args, division)


def _run(args: argparse.Namespace, division: threads.ThreadDivision) -> dict:
    torch.manual_seed(args.seed)
    fanouts = args.fanouts
    with tempfile.TemporaryDirectory(prefix="graphtier-link-") as workdir:
        ds = graphtier.Dataset(_ensure_split(args.dataset, args.seed, workdir))
        device = torch.device(args.device)
        encoder, encode = make_encoder(args.model, ds, ds.feature_dim, args, len(fanouts), device)
        decoder = Decoder(args.decoder, args.out).to(device)
        optimiser = torch.optim.Adam(list(encoder.parameters()) + list(decoder.parameters()), lr=args.lr)
        # One store for every loader, its gather pool the engine's share of the cores.
        store = graphtier.FeatureStore(ds, threads=division.engine)
        loader = graphtier.LinkNeighborLoader(ds, fanouts, args.batch_size, edges="train", negatives="binary",
                                              exclude_seed_edges=None if args.time_attr else args.exclude,
                                              shuffle=True, seed=args.seed, store=store, device=device,
                                              **_temporal(ds, "train", args))
        history, best, best_state = [], None, None
        for epoch in range(args.epochs):
            encoder.train()
            decoder.train()
            start, total, count = time.perf_counter(), 0.0, 0
            for b in loader:
                optimiser.zero_grad()
                logits = pair_scores(encode, decoder, b, model_features(b.x, args.normalize_features))
                loss = F.binary_cross_entropy_with_logits(logits, b.label)
                loss.backward()
                optimiser.step()
                total += float(loss) * b.label.numel()
                count += b.label.numel()
            seconds = time.perf_counter() - start
            val = evaluate(encoder, encode, decoder, ds, store, "val", args, fanouts)
            row = {"epoch": epoch, "loss": total / max(count, 1), "seconds": seconds,
                   **{f"val_{k}": v for k, v in val.items()}}
            history.append(row)
            print(f"epoch {epoch:3d}  loss {row['loss']:.4f}  val auc {val['auc']:.4f}  mrr {val['mrr']:.4f}  "
                  f"hits@{args.hits} {val[f'hits@{args.hits}']:.4f}  {seconds:.2f} s", flush=True)
            if best is None or val["auc"] > best["val_auc"]:
                best = row
                best_state = (copy.deepcopy(encoder.state_dict()), copy.deepcopy(decoder.state_dict()))
        encoder.load_state_dict(best_state[0])
        decoder.load_state_dict(best_state[1])
        test = evaluate(encoder, encode, decoder, ds, store, "test", args, fanouts)
    result = {"best_epoch": best["epoch"], "val_auc": best["val_auc"], **{f"test_{k}": v for k, v in test.items()},
              "threads": division.as_dict()}
    print(f"test auc {test['auc']:.4f}  mrr {test['mrr']:.4f}  hits@{args.hits} {test[f'hits@{args.hits}']:.4f}  "
          f"(epoch {best['epoch']}, val auc {best['val_auc']:.4f})", flush=True)
    if args.json:
        write_json(args.json, {"history": history, "result": result})
    return result


def main(argv: Optional[List[str]] = None, prog: str = "python -m graphtier.train") -> int:
    run(parse_args(argv, prog))
    return 0
