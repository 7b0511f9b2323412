#!/usr/bin/env python3
"""Extract a Planetoid dataset (Cora, Citeseer, PubMed) into .npy arrays for `graphtier convert`.

The input is the Planetoid release (`ind.<name>.{x,y,tx,ty,allx,ally,graph,test.index}`: Python 2
pickles of scipy sparse matrices, numpy arrays and a dict of adjacency lists). The extraction
follows PyTorch Geometric's `read_planetoid_data`:

* features: the rows of `allx`, then row i of `tx` at node `test.index[i]`; test ids that
  `test.index` lacks (Citeseer's 15 isolated papers) get zero rows;
* labels: the argmax of the one-hot rows of `ally` / `ty` placed the same way;
* splits: train = ids [0, len(y)), valid = the next 500 ids, test = sorted `test.index`;
* edges: every (key, neighbour) pair of the graph dict, self-loops removed, duplicates removed,
  sorted by (source, target).

Two deliberate differences, both no-ops for the released Cora, Citeseer and PubMed files except
where noted: an all-zero one-hot row gets label -1 (unlabeled) where PyG's argmax gives 0 (only
Citeseer's 15 padded nodes, which lie in no split); and the edge set is made symmetric (the
released graphs already are, so nothing is added; meta.json reports the count).

Output directory (created): edge_index.npy int64 [2, E], features.npy float32 [N, D], labels.npy
int64 [N], train.npy / valid.npy / test.npy int64 ids, and meta.json with counts.

Pickles are loaded with an allow-list of the classes these files reference, so a crafted file
cannot run code. Exit status: 0 done, 2 bad input (message on stderr as "error: ..."), 3 numpy or
scipy missing.
"""

import argparse
import json
import os
import pickle
import sys
import warnings

BAD_INPUT = 2
MISSING_MODULES = 3
NUM_VALID = 500  # PyG: val_index = range(len(y), len(y) + 500)

try:
    import numpy as np
    import scipy.sparse as sp
except ImportError as exc:  # pragma: no cover - depends on the interpreter
    _IMPORT_ERROR = exc
else:
    _IMPORT_ERROR = None


def missing_modules():
    """The one-line error when numpy or scipy cannot be imported here, else None."""
    if _IMPORT_ERROR is None:
        return None
    return (f"Planetoid conversion needs numpy and scipy in {sys.executable} ({_IMPORT_ERROR}); "
            "install them with: pip install .[planetoid] (in the graphtier source directory)")


class InputError(Exception):
    """A Planetoid file is missing or does not hold what the format promises."""


# (module, name) pairs the released pickles reference, in their Python 2 and 3 spellings.
_ALLOWED_GLOBALS = {
    ("numpy", "ndarray"),
    ("numpy", "dtype"),
    ("numpy.core.multiarray", "_reconstruct"),
    ("numpy._core.multiarray", "_reconstruct"),
    ("scipy.sparse.csr", "csr_matrix"),
    ("scipy.sparse._csr", "csr_matrix"),
    ("scipy.sparse", "csr_matrix"),
    ("collections", "defaultdict"),
    ("__builtin__", "list"),
    ("builtins", "list"),
}


class _RestrictedUnpickler(pickle.Unpickler):
    def find_class(self, module, name):
        if (module, name) not in _ALLOWED_GLOBALS:
            raise pickle.UnpicklingError(f"refusing to load {module}.{name} (not a Planetoid object)")
        with warnings.catch_warnings():
            # numpy.core and scipy.sparse.csr are deprecated aliases that still resolve.
            warnings.simplefilter("ignore", DeprecationWarning)
            return super().find_class(module, name)


def _path(root, name, part):
    return os.path.join(root, f"ind.{name}.{part}")


def load_part(root, name, part):
    path = _path(root, name, part)
    if not os.path.isfile(path):
        raise InputError(f"{path} is missing")
    if part == "test.index":
        try:
            with open(path) as f:
                return np.array([int(line) for line in f if line.strip()], dtype=np.int64)
        except ValueError as exc:
            raise InputError(f"{path}: expected one integer node id per line ({exc})") from exc
    try:
        with open(path, "rb") as f:
            return _RestrictedUnpickler(f, encoding="latin1").load()
    except (pickle.UnpicklingError, EOFError, AttributeError, ImportError, ValueError, TypeError) as exc:
        raise InputError(f"{path}: cannot unpickle: {exc}") from exc


def dense(matrix, path):
    if sp.issparse(matrix):
        matrix = matrix.toarray()
    array = np.asarray(matrix)
    if array.ndim != 2:
        raise InputError(f"{path}: expected a 2-D matrix, got shape {array.shape}")
    return array


def extract(root, name):
    """Returns (arrays, meta) for the dataset `name` under `root`."""
    y = load_part(root, name, "y")
    allx = dense(load_part(root, name, "allx"), _path(root, name, "allx"))
    ally = dense(load_part(root, name, "ally"), _path(root, name, "ally"))
    tx = dense(load_part(root, name, "tx"), _path(root, name, "tx"))
    ty = dense(load_part(root, name, "ty"), _path(root, name, "ty"))
    graph = load_part(root, name, "graph")
    test_index = load_part(root, name, "test.index")

    num_all = allx.shape[0]
    if ally.shape[0] != num_all:
        raise InputError(f"{_path(root, name, 'ally')}: {ally.shape[0]} rows, allx has {num_all}")
    if tx.shape[0] != len(test_index) or ty.shape[0] != len(test_index):
        raise InputError(f"{_path(root, name, 'tx')}: tx has {tx.shape[0]} rows and ty {ty.shape[0]}, "
                         f"test.index lists {len(test_index)} ids")
    if tx.shape[1] != allx.shape[1] or ty.shape[1] != ally.shape[1]:
        raise InputError(f"{_path(root, name, 'tx')}: column counts of tx/ty differ from allx/ally")
    if len(test_index) and test_index.min() < num_all:
        raise InputError(f"{_path(root, name, 'test.index')}: test id {test_index.min()} lies among the "
                         f"{num_all} allx rows")
    if len(np.unique(test_index)) != len(test_index):
        raise InputError(f"{_path(root, name, 'test.index')}: repeated test ids")

    # PyG widens the test block to max - min + 1 rows (Citeseer) and places tx row i at test.index[i].
    num_nodes = max(num_all + tx.shape[0], int(test_index.max()) + 1 if len(test_index) else 0)
    features = np.zeros((num_nodes, allx.shape[1]), dtype=np.float32)
    features[:num_all] = allx
    features[test_index] = tx
    onehot = np.zeros((num_nodes, ally.shape[1]), dtype=np.float64)
    onehot[:num_all] = ally
    onehot[test_index] = ty
    labels = onehot.argmax(axis=1).astype(np.int64)
    labels[~onehot.any(axis=1)] = -1

    num_train = len(y)
    if num_train + NUM_VALID > num_nodes:
        raise InputError(f"{_path(root, name, 'y')}: {num_train} train + {NUM_VALID} valid ids exceed {num_nodes} nodes")
    train = np.arange(num_train, dtype=np.int64)
    valid = np.arange(num_train, num_train + NUM_VALID, dtype=np.int64)
    test = np.sort(test_index)

    graph_path = _path(root, name, "graph")
    if not isinstance(graph, dict):
        raise InputError(f"{graph_path}: expected a dict of adjacency lists, got {type(graph).__name__}")
    keys = list(graph.keys())
    lengths = [len(graph[k]) for k in keys]
    try:
        src = np.repeat(np.asarray(keys, dtype=np.int64), lengths)
        dst = np.fromiter((int(v) for k in keys for v in graph[k]), dtype=np.int64, count=sum(lengths))
    except (TypeError, ValueError) as exc:
        raise InputError(f"{graph_path}: adjacency lists must hold integer node ids ({exc})") from exc
    if len(src) and (min(src.min(), dst.min()) < 0 or max(src.max(), dst.max()) >= num_nodes):
        raise InputError(f"{graph_path}: node ids must lie in [0, {num_nodes})")
    loops = src == dst
    src, dst = src[~loops], dst[~loops]
    coalesced = np.unique(src * num_nodes + dst)  # sorted by (src, dst), as PyG's coalesce
    symmetric = np.union1d(coalesced, (coalesced % num_nodes) * num_nodes + coalesced // num_nodes)
    edge_index = np.stack([symmetric // num_nodes, symmetric % num_nodes]).astype(np.int64)

    meta = {
        "name": name,
        "num_nodes": int(num_nodes),
        "num_features": int(features.shape[1]),
        "num_classes": int(onehot.shape[1]),
        "num_edges": int(edge_index.shape[1]),
        "adjacency_entries": int(len(loops)),
        "self_loops_removed": int(loops.sum()),
        "duplicates_removed": int(len(src) - len(coalesced)),
        "reverse_edges_added": int(len(symmetric) - len(coalesced)),
        "zero_feature_rows_added": int(num_nodes - num_all - tx.shape[0]),
        "unlabeled_nodes": int((labels < 0).sum()),
        "num_train": int(len(train)),
        "num_valid": int(len(valid)),
        "num_test": int(len(test)),
    }
    arrays = {"edge_index": edge_index, "features": features, "labels": labels,
              "train": train, "valid": valid, "test": test}
    return arrays, meta


def write_arrays(root, name, out):
    """Extracts the dataset `name` under `root` into the directory `out` (created); returns meta."""
    arrays, meta = extract(root, name)
    os.makedirs(out, exist_ok=True)
    for key, array in arrays.items():
        np.save(os.path.join(out, f"{key}.npy"), np.ascontiguousarray(array))
    with open(os.path.join(out, "meta.json"), "w") as f:
        json.dump(meta, f, indent=2)
    return meta


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", required=True, help="directory holding ind.<name>.* files")
    parser.add_argument("--name", required=True, help="cora, citeseer or pubmed (the <name> in the file names)")
    parser.add_argument("--out", required=True, help="directory to create with the .npy arrays")
    args = parser.parse_args(argv)
    name = args.name.lower()
    missing = missing_modules()
    if missing:
        print(f"error: {missing}", file=sys.stderr)
        return MISSING_MODULES
    try:
        meta = write_arrays(args.root, name, args.out)
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return BAD_INPUT
    print(f"{name}: {meta['num_nodes']} nodes, {meta['num_edges']} directed edges "
          f"({meta['self_loops_removed']} self-loops, {meta['duplicates_removed']} duplicates removed, "
          f"{meta['reverse_edges_added']} reverse edges added), {meta['num_features']} features, "
          f"{meta['num_classes']} classes, split {meta['num_train']}/{meta['num_valid']}/{meta['num_test']}",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
