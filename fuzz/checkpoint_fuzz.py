#!/usr/bin/env python3
"""Checkpoints (python/graphtier/training/checkpoint.py load_checkpoint: the tensor archive reader of
graphtier/training/archive.py, and the check that the checkpoint belongs to the dataset): saved
checkpoints with mutated bytes either load exactly the state of one of the seeds in
fuzz/corpus/checkpoint (a dict holding every checkpoint key, written for this dataset or for none),
or are refused with ValueError naming the file, the documented error. Any other exception, or a
load of any other state, fails the run.

    checkpoint_fuzz.py CORPUS_DIR [libFuzzer flags]   # atheris (pip install atheris)
    checkpoint_fuzz.py --mutate CORPUS_DIR -runs=N [-seed=S] [-max_total_time=T] [-artifact_prefix=P]
                                                      # seeded mutation loop, same contract
    checkpoint_fuzz.py --make-corpus DIR             # the seed checkpoints (fuzz/corpus/checkpoint)

Without the built extension (graphtier._core), the package's pure-Python modules are loaded
without it: load_checkpoint uses only the dataset's identity (name and counts) and path, which a
stand-in provides."""

import io
import os
import random
import sys
import tempfile
import time
import types

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def import_checkpoint():
    try:
        from graphtier.training import checkpoint  # noqa: F401  (an installed package with its extension)
    except ImportError:
        for name in [m for m in sys.modules if m == "graphtier" or m.startswith("graphtier.")]:
            del sys.modules[name]
        pkg = types.ModuleType("graphtier")
        pkg.__path__ = [os.path.join(ROOT, "python", "graphtier")]
        sys.modules["graphtier"] = pkg
        sys.modules["graphtier._core"] = pkg._core = types.ModuleType("graphtier._core")
        from graphtier.training import checkpoint  # noqa: F811
    return checkpoint


DATASET = types.SimpleNamespace(name="cora", num_nodes=2708, num_edges=10556, feature_dim=1433, num_classes=7,
                                path="/datasets/cora", file_checksums={"indptr.bin": "0123456789abcdef"})


def make_corpus(out):
    import torch
    checkpoint = import_checkpoint()
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 3)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    model(torch.ones(2, 4)).sum().backward()
    optimizer.step()
    identity = {"name": DATASET.name, "num_nodes": DATASET.num_nodes, "num_edges": DATASET.num_edges,
                "feature_dim": DATASET.feature_dim, "num_classes": DATASET.num_classes}
    good = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "position": (1, 3),
            "history": {"epochs": [{"epoch": 0, "loss": 1.5, "valid_acc": 0.5}], "losses": [1.5]},
            "best": {"valid_acc": 0.5, "epoch": 0}, "partial": {"loss_sum": 0.25, "correct": 3, "seen": 8},
            "dataset": identity, "args": {"fanouts": [10, 5], "lr": 0.01, "json": None, "quiet": True}}
    variants = {
        "good": good,
        "no-dataset": {k: v for k, v in good.items() if k != "dataset"},
        "other-dataset": dict(good, dataset=dict(identity, num_nodes=3327, name="citeseer")),
        "dataset-list": dict(good, dataset=[1, 2]),
        "dataset-missing-field": dict(good, dataset={"name": "cora"}),
        # Since checkpoints record the dataset's content: this one's, and another's of the same name and counts.
        "good-content": dict(good, dataset=checkpoint.dataset_identity(DATASET)),
        "other-content": dict(good, dataset=dict(checkpoint.dataset_identity(DATASET), content="0000000000000000")),
        "missing-keys": {"model": good["model"]},
        "not-a-dict": [1, 2, 3],
    }
    for name, state in variants.items():
        checkpoint.save_checkpoint(os.path.join(out, f"seed-{name}.pt"), state)
    with open(os.path.join(out, "seed-good.pt"), "rb") as f:
        good_bytes = f.read()
    with open(os.path.join(out, "seed-truncated.pt"), "wb") as f:
        f.write(good_bytes[:300])
    buf = io.BytesIO()
    torch.save(good, buf)  # what earlier versions wrote: refused without unpickling
    with open(os.path.join(out, "seed-torch-save.pt"), "wb") as f:
        f.write(buf.getvalue())


class ContractBroken(AssertionError):
    pass


def same(a, b) -> bool:
    """Equal values of equal types (an OrderedDict reads back as a dict); tensors by dtype, shape and
    bytes."""
    import torch
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if type(a) is not type(b):
        return False
    if isinstance(a, torch.Tensor):
        return (a.dtype == b.dtype and a.shape == b.shape
                and torch.equal(a.reshape(-1).view(torch.uint8), b.reshape(-1).view(torch.uint8)))
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b or (a != a and b != b)  # NaN


def seed_states(checkpoint):
    """The states the committed seeds load: the only states a mutation may load."""
    seeds, states = os.path.join(ROOT, "fuzz", "corpus", "checkpoint"), []
    for name in sorted(os.listdir(seeds)):
        try:
            states.append(checkpoint.load_checkpoint(os.path.join(seeds, name), DATASET))
        except ValueError:
            pass
    if not states:
        sys.exit(f"{seeds}: no seed loads")
    return states


def make_test(checkpoint):
    # One file per process, removed after each input: atheris ends the process without returning.
    base = os.environ.get("GRAPHTIER_FUZZ_SCRATCH") or ("/dev/shm" if os.path.isdir("/dev/shm") else tempfile.gettempdir())
    path = os.path.join(base, f"graphtier-fuzz-checkpoint-{os.getpid()}.pt")
    identity = checkpoint.dataset_identity(DATASET)
    known = seed_states(checkpoint)

    def test_one(data: bytes):
        # Half the inputs get their index checksum fixed, so that mutations of the index are read.
        resealed = bool(data) and data[-1] & 1 == 1
        if resealed:
            data = reseal(data)
        with open(path, "wb") as f:
            f.write(data)
        try:
            state = checkpoint.load_checkpoint(path, DATASET)
        except ValueError as e:
            if path not in str(e):
                raise ContractBroken(f"ValueError does not name the file: {e}")
            return
        finally:
            os.unlink(path)
        if not isinstance(state, dict) or any(k not in state for k in checkpoint.CHECKPOINT_KEYS):
            raise ContractBroken("load_checkpoint returned something that is not a checkpoint")
        saved = state.get("dataset")
        # The path is recorded for messages only (a dataset may move); a checkpoint from before the
        # content hash ("content") is accepted on the rest, with a warning.
        if saved is not None:
            compared = {k: v for k, v in identity.items() if k != "path" and (k != "content" or "content" in saved)}
            if any(type(saved.get(k)) is not type(v) or saved.get(k) != v for k, v in compared.items()):
                raise ContractBroken("load_checkpoint accepted a checkpoint of another dataset")
        if not resealed and not any(same(state, k) for k in known):
            raise ContractBroken("load_checkpoint loaded a state that no seed holds (damage read as data)")

    return test_one


def mutate(data: bytes, rng: random.Random, corpus) -> bytes:
    b = bytearray(data)
    for _ in range(rng.choice((1, 1, 2, 4, 8))):
        op = rng.randrange(6)
        if op == 0 and b:  # flip a bit
            i = rng.randrange(len(b))
            b[i] ^= 1 << rng.randrange(8)
        elif op == 1 and b:  # random byte
            b[rng.randrange(len(b))] = rng.randrange(256)
        elif op == 2:  # insert bytes
            i = rng.randrange(len(b) + 1)
            b[i:i] = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 9)))
        elif op == 3 and len(b) > 1:  # delete a range
            i = rng.randrange(len(b))
            del b[i:i + rng.randrange(1, 17)]
        elif op == 4 and b:  # truncate
            del b[rng.randrange(len(b)):]
        elif op == 5:  # splice another input
            other = rng.choice(corpus)
            i, j = rng.randrange(len(b) + 1), rng.randrange(len(other) + 1)
            b = b[:i] + other[j:j + rng.randrange(1, 65)] + b[i:]
        if rng.random() < 0.3 and b:  # interesting integers, as libFuzzer's mutators insert
            i = rng.randrange(len(b))
            b[i:i + 1] = rng.choice((b"\xff", b"\x00", b"\x7f", b"\x80", b"\xff\xff\xff\x7f", b"\x00\x00\x00\x80"))
    return bytes(b)


def reseal(data: bytes) -> bytes:
    """`data` with the index checksum of its header made to fit its index again, where the header
    and index length are whole: a mutated index then reaches the checks behind the checksum (what a
    hostile writer, who computes checksums, reaches)."""
    import struct
    import zlib
    if len(data) < 24 or not data.startswith(b"\x89GTARCH\n"):
        return data
    length = struct.unpack_from("<Q", data, 16)[0]
    if 24 + length > len(data):
        return data
    return data[:12] + struct.pack("<I", zlib.crc32(data[24:24 + length])) + data[16:]


def mutation_loop(test_one, corpus_dir, args):
    opts = {"runs": -1, "seed": 1, "max_total_time": 0, "artifact_prefix": "./"}
    for a in args:
        k, _, v = a.lstrip("-").partition("=")
        if k in opts:
            opts[k] = v if k == "artifact_prefix" else int(v)
    corpus = []
    for name in sorted(os.listdir(corpus_dir)):
        with open(os.path.join(corpus_dir, name), "rb") as f:
            corpus.append(f.read())
    if not corpus:
        sys.exit(f"{corpus_dir}: empty corpus")
    rng = random.Random(opts["seed"])
    start, execs = time.time(), 0
    for data in corpus:
        test_one(data)
        execs += 1
    while opts["runs"] < 0 or execs < opts["runs"]:
        if opts["max_total_time"] and time.time() - start >= opts["max_total_time"]:
            break
        data = mutate(rng.choice(corpus), rng, corpus)
        try:
            test_one(data)
        except BaseException as e:  # noqa: B902  (anything but the contract is a crash)
            crash = opts["artifact_prefix"] + "crash-mutation-" + str(execs)
            with open(crash, "wb") as f:
                f.write(data)
            print(f"==ERROR: {type(e).__name__}: {e}\nTest unit written to {crash}", file=sys.stderr)
            raise
        execs += 1
    seconds = max(time.time() - start, 1e-9)
    print(f"stat::number_of_executed_units: {execs}", file=sys.stderr)
    print(f"stat::average_exec_per_sec:     {int(execs / seconds)}", file=sys.stderr)
    print(f"Done {execs} runs in {int(seconds)} second(s)", file=sys.stderr)


def main():
    argv = sys.argv[1:]
    if argv[:1] == ["--make-corpus"]:
        make_corpus(argv[1])
        return
    if argv[:1] == ["--mutate"]:
        mutation_loop(make_test(import_checkpoint()), argv[1], argv[2:])
        return
    import atheris
    with atheris.instrument_imports(include=["graphtier"]):
        checkpoint = import_checkpoint()
    atheris.Setup([sys.argv[0]] + argv, make_test(checkpoint))
    atheris.Fuzz()


if __name__ == "__main__":
    main()
