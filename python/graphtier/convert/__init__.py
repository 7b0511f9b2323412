"""Converters from public graph formats to the graphtier dataset format.

The functions here are `graphtier convert <format>` called from Python: the same converters (the
C++ library's), the same options under their Python names, the same dataset files; each returns
the report the command prints with --json, as a dict (`num_nodes`, `num_edges`, `feature_dim`,
`splits`, `seconds`, ...). Errors: a malformed input is a ValueError naming the file, a bad option
a ValueError naming it, an I/O failure an OSError.

Options every format takes (keyword-only): `overwrite` (replace an existing dataset at `out`),
`name` (manifest name; default: the directory name), `dtype` (feature dtype: "float32", "float16"
or "bfloat16"), `align` (feature row alignment in bytes: 0, 512 or 4096), `symmetrize` (also store
the reverse of every edge), `keep_self_loops`, `num_nodes` and `num_classes` (an int or "10M";
default from the input), `memory_budget` (memory for building the CSC: bytes as an int or "8GiB",
or "25%" of RAM; 0: no limit) and `threads` (0: all cores).

planetoid.py extracts the Planetoid pickles into .npy arrays (it needs scipy:
`pip install .[planetoid]`); `graphtier convert planetoid` runs it (found beside the `graphtier`
executable, through $GRAPHTIER_PYTHON_DIR, or as `python -m graphtier.convert.planetoid`) and
converts the arrays; `planetoid()` here runs its extraction in this interpreter. It runs the same
way by hand: `python -m graphtier.convert.planetoid --root DIR --name cora --out ARRAYS`.
"""

import importlib
import json
import os
import shutil
import tempfile

from graphtier import _core

__all__ = ["edge_list", "igb", "npy", "ogb", "planetoid", "typed_edge_list"]


def _common(overwrite=False, name=None, dtype="float32", align=0, symmetrize=False, keep_self_loops=False,
            num_nodes=None, num_classes=None, memory_budget=0, threads=0):
    args = _core.ConvertArgs()
    args.overwrite = bool(overwrite)
    args.name = name or ""
    args.dtype = dtype
    args.align = int(align)
    args.symmetrize = bool(symmetrize)
    args.keep_self_loops = bool(keep_self_loops)
    args.num_nodes = "" if num_nodes is None else str(num_nodes)
    args.num_classes = "" if num_classes is None else str(num_classes)
    args.memory_budget = str(memory_budget)
    args.threads = int(threads)
    return args


def _path(value):
    return "" if value is None else os.fspath(value)


def edge_list(input, out, *, allow_extra_columns=False, edge_time=False, **options):
    """A text edge list, plain or gzip (told by its magic bytes): one `src dst` per line (whitespace
    or comma), '#' and '%' comments; duplicates are always removed. `allow_extra_columns` ignores
    columns after the two ids (weights, timestamps) instead of rejecting the line. `edge_time`
    reads the third column as the edge's integer time (edge_time.bin, for the loaders'
    time_attr="edge_time"); a repeated edge keeps its earliest time."""
    return json.loads(_core.convert_edge_list(_path(input), bool(allow_extra_columns), _path(out), _common(**options),
                                              edge_time=bool(edge_time)))


def typed_edge_list(input, out, *, labels=None, split="0.2,0.1", seed=0, reverses=True, **options):
    """A typed edge list, plain or gzip: one `src dst TYPE [weight]` per line, TYPE `A-B` (relation
    `A:to:B`) or `A:rel:B`, ids per node type from 0; a heterogeneous dataset (docs/format.md).
    `labels`: lines `<type><id> <class>` (as `p0 2`) or `<type> <id> <class>`, all of one type;
    its nodes are split at random (`seed`) into train and valid by the fractions "TRAIN,VAL" of
    `split`, the rest test. A relation the file gives no reverse gets `dst:rev_<rel>:src` (the
    report's "added_reverses"), as PyG's ToUndirected; `reverses=False` adds none. `symmetrize`,
    `num_nodes` and `memory_budget` do not apply."""
    return json.loads(_core.convert_typed_edge_list(_path(input), _path(labels), str(split), int(seed), _path(out),
                                                    _common(**options), add_reverses=bool(reverses)))


def npy(edge_index, out, *, edge_layout="auto", features=None, labels=None, train=None, valid=None, test=None,
        **options):
    """NumPy .npy files: `edge_index` (integers, [2, E] or [E, 2]; `edge_layout` "auto", "2xE" or
    "Ex2"), optional `features` [N, D] of any numeric dtype, `labels` [N] or [N, 1] (-1 or NaN:
    unlabeled) and `train` / `valid` / `test` (node ids, or a bool mask [N])."""
    return json.loads(_core.convert_npy(_path(edge_index), edge_layout, _path(features), _path(labels), _path(train),
                                        _path(valid), _path(test), _path(out), _common(**options)))


def ogb(root, out, *, split=None, format="auto", **options):
    """An OGB node-property dataset in its raw layout: `root` holds raw/ (*.csv.gz, or data.npz) and
    split/<split>/ (`split` default: the only one); `format` "auto", "csv" or "npz". A heterogeneous
    one (ogbn-mag: raw/num-node-dict.csv.gz, raw/relations/<src>___<rel>___<dst>/) becomes a typed
    dataset, each relation with its reverse rev_<rel>."""
    return json.loads(_core.convert_ogb(_path(root), split or "", format, _path(out), _common(**options)))


def igb(root, out, *, size, label_classes=19, feature_dim=1024, train_fraction=0.6, valid_fraction=0.2,
        labeled_nodes=None, hetero=False, **options):
    """IGB260M / IGBH paper nodes and paper-cites-paper edges in the IGB dataloader's layout:
    `root` holds <size>/processed/; `size` "experimental", "small", "medium", "large" or "full";
    `label_classes` 19 or 2983; `feature_dim` of a raw (header-less) feature file; the first
    `train_fraction` of the labeled nodes train, the next `valid_fraction` valid, the rest test;
    nodes [0, `labeled_nodes`) carry labels (default: all; for full the dataloader's counts).
    `hetero=True`: all of IGBH as a typed dataset (every <type>/node_feat.npy a node type, every
    <src>__<rel>__<dst>/edge_index.npy a relation with its reverse rev_<rel>, labels on paper)."""
    return json.loads(_core.convert_igb(_path(root), size, int(label_classes), int(feature_dim), float(train_fraction),
                                        float(valid_fraction), None if labeled_nodes is None else str(labeled_nodes),
                                        bool(hetero), _path(out), _common(**options)))


def _extractor():
    # Importing the submodule binds its name in this package to the module; planetoid is the
    # function here.
    module = importlib.import_module(__name__ + ".planetoid")
    globals()["planetoid"] = _planetoid
    return module


def _planetoid(root, out, *, name, **options):
    """Planetoid pickles (Cora, Citeseer, PubMed: `root` holds ind.<name>.*) with PyG's semantics,
    as `graphtier convert planetoid`: `name` is "cora", "citeseer" or "pubmed" (also the manifest
    name); the edge cleaning is PyG's, so `symmetrize` and `keep_self_loops` are not options. Needs
    scipy (`pip install .[planetoid]`): without it an ImportError says so."""
    for fixed in ("symmetrize", "keep_self_loops"):
        if fixed in options:
            raise TypeError(f"planetoid() takes no '{fixed}' option (the edges are cleaned as PyG does)")
    script = _extractor()
    missing = script.missing_modules()
    if missing:
        raise ImportError(missing)
    root, out = _path(root), _path(out)
    if not name:
        raise ValueError("Planetoid dataset name is required (cora, citeseer, pubmed)")
    if not os.path.isdir(root):
        raise ValueError(f"Planetoid root {root} is not a directory")
    if not options.get("overwrite") and os.path.exists(out):
        raise ValueError(f"{out} already exists (pass overwrite=True to replace it)")
    parent = os.path.dirname(out.rstrip("/")) or "."
    if not os.path.isdir(parent):
        raise ValueError(f"parent directory {parent} of the output does not exist")
    # Scratch space beside `out`, named as the command's (and the dataset writer's) temporaries.
    base = os.path.basename(out.rstrip("/"))
    scratch = tempfile.mkdtemp(prefix=f".{base}.tmp-{os.getpid()}-planetoid-", dir=parent)
    try:
        arrays = os.path.join(scratch, "arrays")
        try:
            script.write_arrays(root, name.lower(), arrays)
        except script.InputError as exc:
            raise ValueError(str(exc)) from None
        return json.loads(_core.convert_planetoid_arrays(arrays, name, root, out, _common(**options)))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


planetoid = _planetoid
