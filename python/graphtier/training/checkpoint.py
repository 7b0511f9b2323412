"""Checkpoints of a training job: the model, optimiser, position in the sample stream and the
figures so far, in graphtier's tensor archive (no pickle: loading runs no code from the file),
written atomically and checked before anything of them is used (a damaged or hostile file, another
dataset, model or number of ranks is a ValueError naming the file)."""

from __future__ import annotations

import sys
from typing import Optional

import torch

from graphtier.dataset import content_hash
from graphtier.training.archive import read_archive, write_archive_file
from graphtier.training.report import one_line


def dataset_identity(ds) -> dict:
    """What a checkpoint must agree with to resume on `ds`: its content (content_hash of its
    `file_checksums`) and counts; its path, which may have moved, is recorded for messages only."""
    return {"name": ds.name, "num_nodes": ds.num_nodes, "num_edges": ds.num_edges, "feature_dim": ds.feature_dim,
            "num_classes": ds.num_classes, "content": content_hash(ds.file_checksums), "path": str(ds.path)}


# Recorded for messages, never compared.
_NOT_COMPARED = ("path",)


CHECKPOINT_KEYS = ("model", "optimizer", "position", "history", "best", "partial")

# What earlier versions wrote: torch.save's zip archive and its legacy format, a pickle. Either runs
# code when torch 1.13 loads it (its torch.load has the full unpickler), so neither is read.
_TORCH_SAVE_MAGICS = (b"PK\x03\x04", b"\x80\x02\x8a\x0a")


def save_checkpoint(path: str, state: dict) -> None:
    """`state` (plain values and tensors, as load_checkpoint returns them) as a tensor archive
    (graphtier.training.archive, docs/format.md) in `path`, atomically: a crash while writing leaves
    the previous checkpoint."""
    write_archive_file(path, state)


def load_checkpoint(path: str, ds, distributed: Optional[dict] = None) -> dict:
    """The state saved by a training run (its keys CHECKPOINT_KEYS; tensors on the CPU), checked
    against `ds`, the dataset it trains (anything with dataset_identity's fields and a path): a file
    that is not a whole, unchanged tensor archive (truncated, damaged, hostile, written by torch.save
    in an earlier version), one written for another dataset, or by a run on another number of ranks
    (`distributed`: {"ranks": P, ...}, None for one process), is a ValueError naming the file.
    Reading runs no code from the file (no pickle) on any torch version."""
    with open(path, "rb") as f:  # an OSError opening it names the file; past that, the contents are at fault
        if f.read(4) in _TORCH_SAVE_MAGICS:
            raise ValueError(f"{path}: a checkpoint of an earlier graphtier (torch.save's format), which is not "
                             "loaded: unpickling it could run code. Re-create it by training again with "
                             "--checkpoint (without --resume, or after deleting the file)")
        f.seek(0)
        state = read_archive(f, path)
    if not isinstance(state, dict) or any(k not in state for k in CHECKPOINT_KEYS):
        raise ValueError(f"{path}: not a checkpoint of python -m graphtier.train (expected the keys "
                         f"{', '.join(CHECKPOINT_KEYS)})")
    saved, here = state.get("dataset"), dataset_identity(ds)
    if saved is not None and not isinstance(saved, dict):
        raise ValueError(f"{path}: its dataset record is a {type(saved).__name__}, not a dict (not a checkpoint of "
                         "python -m graphtier.train?)")
    if saved is not None and "content" not in saved:
        # Written before checkpoints recorded the dataset's content (graphtier <= issue 49): accepted on
        # its name and counts, said once, since a renumbered copy of the dataset would pass them.
        print(f"graphtier: warning: {path}: written by an earlier graphtier that did not record its dataset's "
              f"content; resuming on {ds.path} by its name and counts only", file=sys.stderr, flush=True)
    for field in here if saved is not None else ():
        there = saved.get(field)
        if field in _NOT_COMPARED or (field == "content" and "content" not in saved):
            continue
        # Compared by type first: a value of another type (a tensor, a float count) is another record,
        # never an elementwise comparison. Fields this version does not check are ignored.
        if type(there) is not type(here[field]) or there != here[field]:
            raise ValueError(f"{path}: written for another dataset: {_described(saved)}; this is "
                             f"{_described(here)} ({field} {there!r} there, {here[field]!r} here)")
    # A position counts steps of P minibatches: the number of ranks must agree (the replication
    # changes where rows live, not what is trained).
    ranks = lambda d: d.get("ranks") if isinstance(d, dict) else None  # noqa: E731
    if ranks(state.get("distributed")) != ranks(distributed):
        grid = lambda d: f"{ranks(d)} ranks" if ranks(d) is not None else "one process"  # noqa: E731
        raise ValueError(f"{path}: written by a run on {grid(state.get('distributed'))}, this run is on "
                         f"{grid(distributed)} (its positions count other steps)")
    return state


def _described(identity: dict) -> str:
    """A dataset record as a message names it: name, path where known, counts and content hash."""
    where = f" at {identity['path']}" if isinstance(identity.get("path"), str) else ""
    content = f", content {identity['content']}" if isinstance(identity.get("content"), str) else ""
    return (f"{identity.get('name')!r}{where} ({identity.get('num_nodes')!r} nodes, {identity.get('num_edges')!r} "
            f"edges{content})")


def load_model_state(path: str, state: dict, model: torch.nn.Module, optimizer) -> None:
    """Loads the checkpoint's model and optimiser; one that does not fit (another --model, --hidden,
    ...) is a ValueError naming the file and the first tensor that differs."""
    saved, here = state["model"], model.state_dict()
    for name in sorted(set(saved) | set(here)):
        if name not in saved or name not in here or tuple(saved[name].shape) != tuple(here[name].shape):
            shape = lambda d: tuple(d[name].shape) if name in d else "absent"  # noqa: E731
            raise ValueError(f"{path}: does not fit this model (written with other --model, --hidden, --fanouts "
                             f"or --mlp-layers?): {name} is {shape(saved)} there, {shape(here)} here")
    try:
        model.load_state_dict(saved)
        optimizer.load_state_dict(state["optimizer"])
    except (RuntimeError, ValueError, KeyError, TypeError) as e:
        raise ValueError(f"{path}: does not fit this model: {one_line(e)}") from None
