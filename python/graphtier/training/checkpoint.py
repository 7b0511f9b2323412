"""Checkpoints of a training job: the model, optimiser, position in the sample stream and the
figures so far, in torch's zip format, written atomically and checked before anything of them is
used (a damaged file, a tensor larger than the file, another dataset, model or number of ranks is a
ValueError naming the file)."""

from __future__ import annotations

import io
import os
import pickle
import warnings
import zipfile
from typing import Optional

import torch

from graphtier.training.files import write_atomically
from graphtier.training.report import one_line


def dataset_identity(ds) -> dict:
    """What a checkpoint must agree with to resume on `ds` (its path may have moved)."""
    return {"name": ds.name, "num_nodes": ds.num_nodes, "num_edges": ds.num_edges, "feature_dim": ds.feature_dim,
            "num_classes": ds.num_classes}


CHECKPOINT_KEYS = ("model", "optimizer", "position", "history", "best", "partial")
# A checkpoint holds tensors and plain containers only: torch 2.x loads it without running pickled
# code (2.4 and 2.5 warn when weights_only is left out). Torch 1.13 has the argument, but its
# weights-only unpickler refuses floats ("Unsupported operand 71"), so it loads as before.
_WEIGHTS_ONLY = {"weights_only": True} if int(torch.__version__.split(".")[0]) >= 2 else {}


# Bytes per element of the storage types torch.save names (torch/storage.py); any other counts 1.
_STORAGE_ELEMENT_BYTES = {"DoubleStorage": 8, "FloatStorage": 4, "HalfStorage": 2, "BFloat16Storage": 2,
                          "LongStorage": 8, "IntStorage": 4, "ShortStorage": 2, "ComplexDoubleStorage": 16,
                          "ComplexFloatStorage": 8, "QInt32Storage": 4}


class _StorageSizes(pickle._Unpickler):
    """A dry run over a checkpoint's pickle that executes nothing: every global is a stand-in, and
    each tensor storage it names is recorded as (key, bytes). The pure-Python unpickler reads what a
    length field claims only as far as the data goes."""

    class _StandIn:
        def __init__(self, *args, **kwargs):
            pass

        def __call__(self, *args, **kwargs):
            return type(self)()

        def __setstate__(self, state):
            pass

        def __setitem__(self, key, value):  # an OrderedDict's items
            pass

        def append(self, value):
            pass

        def extend(self, values):
            pass

    def __init__(self, data: bytes):
        super().__init__(io.BytesIO(data), encoding="utf-8")
        self.storages = []

    def find_class(self, module, name):
        stand_in = type("StandIn", (self._StandIn,), {"storage_name": name})
        return stand_in()

    def persistent_load(self, pid):
        # torch's storage ids: ("storage", storage type, key, location, numel[, view metadata])
        if isinstance(pid, tuple) and len(pid) >= 5 and pid[0] == "storage":
            size = _STORAGE_ELEMENT_BYTES.get(getattr(pid[1], "storage_name", None), 1)
            if not isinstance(pid[4], int) or pid[4] < 0:
                raise pickle.UnpicklingError(f"a tensor storage of {pid[4]!r} elements")
            self.storages.append((str(pid[2]), pid[4] * size))
        return self._StandIn()


def _check_storage_sizes(f) -> None:
    """Refuses a checkpoint (torch's zip layout) whose pickle names a tensor storage larger than the
    bytes the archive holds for it: torch would allocate what the pickle claims, up to any size, and
    load the file into it with garbage after the real bytes."""
    with zipfile.ZipFile(f) as z:
        sizes = {i.filename: i.file_size for i in z.infolist()}
        pickles = [n for n in sizes if n.endswith("/data.pkl") or n == "data.pkl"]
        if len(pickles) != 1:
            raise ValueError("no data.pkl in the archive")
        prefix = pickles[0][: -len("data.pkl")]
        # torch.save stores every entry, never compressed, so none can hold more bytes than the file;
        # torch's reader allocates what an entry claims (its version record included) before reading.
        file_size = os.fstat(f.fileno()).st_size
        for name, size in sizes.items():
            if size > file_size:
                raise ValueError(f"{name} claims {size} bytes, more than the file's {file_size}")
        dry_run = _StorageSizes(z.read(pickles[0]))
        dry_run.load()
    for key, nbytes in dry_run.storages:
        held = sizes.get(f"{prefix}data/{key}")
        if held is None or nbytes > held:
            raise ValueError(f"tensor storage {key!r} of {nbytes} bytes, the archive holds {held or 0} for it")


def save_checkpoint(path: str, state: dict) -> None:
    """torch.save(state) into `path`, atomically: a crash while writing leaves the previous
    checkpoint."""
    write_atomically(path, lambda tmp: torch.save(state, tmp))


def load_checkpoint(path: str, ds, distributed: Optional[dict] = None) -> dict:
    """The state saved by a training run (its keys CHECKPOINT_KEYS), checked against `ds`, the
    dataset it trains (anything with dataset_identity's fields and a path): a file torch cannot
    read (truncated, not a checkpoint, a tensor larger than the file) or one written for another
    dataset, or by a run on another number of ranks (`distributed`: {"ranks": P, ...}, None for one
    process), is a ValueError naming the file."""
    with open(path, "rb") as f:  # an OSError opening it names the file; past that, the contents are at fault
        try:
            # run() writes torch's zip format; the legacy format would read its pickle from the file
            # itself, where a claimed length is allocated before it is read.
            if f.read(4) != b"PK\x03\x04":
                raise ValueError("not a zip archive, as torch.save writes")
            _check_storage_sizes(f)
            f.seek(0)
            # torch 2.x's weights-only unpickler warns on stderr about a pickle protocol it did not
            # expect (a damaged or foreign file) before it fails: the error line below says it all.
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                state = torch.load(f, **_WEIGHTS_ONLY)
        except Exception as e:  # a damaged file fails in any layer (zip, pickle, storage: EINVAL without a name)
            raise ValueError(f"{path}: not a readable checkpoint (truncated or damaged?): {one_line(e)}") from None
    if not isinstance(state, dict) or any(k not in state for k in CHECKPOINT_KEYS):
        raise ValueError(f"{path}: not a checkpoint of python -m graphtier.train (expected the keys "
                         f"{', '.join(CHECKPOINT_KEYS)})")
    saved, here = state.get("dataset"), dataset_identity(ds)
    if saved is not None and not isinstance(saved, dict):
        raise ValueError(f"{path}: its dataset record is a {type(saved).__name__}, not a dict (not a checkpoint of "
                         "python -m graphtier.train?)")
    for field in here if saved is not None else ():
        there = saved.get(field)
        # Compared by type first: a value of another type (a tensor, a float count) is another record,
        # never an elementwise comparison. Fields this version does not check are ignored.
        if type(there) is not type(here[field]) or there != here[field]:
            raise ValueError(f"{path}: written for another dataset ({field} {there!r} there, "
                             f"{here[field]!r} in {ds.path})")
    # A position counts steps of P minibatches: the number of ranks must agree (the replication
    # changes where rows live, not what is trained).
    ranks = lambda d: d.get("ranks") if isinstance(d, dict) else None  # noqa: E731
    if ranks(state.get("distributed")) != ranks(distributed):
        grid = lambda d: f"{ranks(d)} ranks" if ranks(d) is not None else "one process"  # noqa: E731
        raise ValueError(f"{path}: written by a run on {grid(state.get('distributed'))}, this run is on "
                         f"{grid(distributed)} (its positions count other steps)")
    return state


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
