#!/usr/bin/env python3
"""Writes the seed corpus fuzz/corpus/<target>/ from the datasets in datasets/ (Cora, Citeseer,
ogbn-arxiv pieces, truncated) and from hand-made hostile cases: a flipped .npz byte, long lines,
wrong-type manifest fields, huge ids and counts, truncated files.

Run from anywhere: python3 fuzz/make_corpus.py. Deterministic (a fixed seed), so re-running it
rewrites the same files; cases that the fuzzers found are added by hand beside these (see
fuzz/README.md) and are not touched by this script. Needs numpy and scipy (scripts/setup.sh)."""

import gzip
import io
import json
import os
import pickle
import warnings
import zipfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "fuzz", "corpus")
DATASETS = os.path.join(ROOT, "datasets")


def put(target, name, data):
    d = os.path.join(CORPUS, target)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(d, "seed-" + name), "wb") as f:
        f.write(data)


def npy_bytes(a, version=None):
    buf = io.BytesIO()
    if version is None:
        np.save(buf, a)
    else:
        np.lib.format.write_array(buf, a, version=version)
    return buf.getvalue()


def npz_bytes(arrays, compressed):
    buf = io.BytesIO()
    (np.savez_compressed if compressed else np.savez)(buf, **arrays)
    return buf.getvalue()


def gz(data):
    return gzip.compress(data if isinstance(data, bytes) else data.encode(), mtime=0)


def records(files):
    """The multi-file input of the layout targets (fuzz_common.hpp split_files): the "\n" before
    each "%%%% " mark belongs to the mark, not to the file before it."""
    return b"\n".join(b"%%%% " + name.encode() + b"\n" + (body if isinstance(body, bytes) else body.encode())
                      for name, body in files)


def flip(data, pos=None):
    b = bytearray(data)
    pos = len(b) // 2 if pos is None else pos
    b[pos] ^= 0x5A
    return bytes(b)


def load_planetoid(name, part):
    with open(os.path.join(DATASETS, name, f"ind.{name}.{part}"), "rb") as f, warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # the pickles name scipy.sparse.csr
        return pickle.load(f, encoding="latin1")


# Real pieces, truncated: Cora's first edges and labels, Citeseer's first feature rows.
graph = load_planetoid("cora", "graph")
cora_edges = [(s, d) for s in sorted(graph)[:40] for d in graph[s]][:120]
cora_labels = np.argmax(load_planetoid("cora", "ally")[:64], axis=1).astype(np.int64)
citeseer_x = np.asarray(load_planetoid("citeseer", "x")[:8, :16].todense(), dtype=np.float32)
with gzip.open(os.path.join(DATASETS, "ogbn_arxiv_partial", "raw", "node-label.csv.gz"), "rt") as f:
    arxiv_labels = [next(f).strip() for _ in range(40)]
with gzip.open(os.path.join(DATASETS, "ogbn_arxiv_partial", "raw", "num-node-list.csv.gz"), "rt") as f:
    arxiv_num_nodes = f.read()
edge_text = "".join(f"{s} {d}\n" for s, d in cora_edges)
n_cora = max(max(s, d) for s, d in cora_edges) + 1

# --- manifest ---------------------------------------------------------------------------------
manifest = {
    "format": "graphtier-dataset", "version": 1, "name": "cora", "num_nodes": 2708, "num_edges": 10556,
    "indices_dtype": "int32",
    "features": {"dim": 1433, "dtype": "float32", "alignment": 512, "row_stride": 8192},
    "num_classes": 7, "hotness": "", "source": "graphtier convert planetoid: datasets/cora",
    "files": {
        "indptr": {"path": "indptr.bin", "bytes": 21672, "xxh3": "0123456789abcdef"},
        "indices": {"path": "indices.bin", "bytes": 42224, "xxh3": "fedcba9876543210"},
        "features": {"path": "features.bin", "bytes": 22183936, "xxh3": "00000000000000ff"},
        "labels": {"path": "labels.bin", "bytes": 10832, "xxh3": "1111111111111111"},
    },
}
put("manifest", "cora.json", json.dumps(manifest, indent=2))
put("manifest", "minimal.json", json.dumps({"format": "graphtier-dataset", "version": 1, "num_nodes": 0,
                                            "num_edges": 0, "indices_dtype": "int64", "files": {}}))
for i, (field, value) in enumerate([("source", None), ("name", 5), ("features", []), ("num_nodes", "2708"),
                                    ("num_nodes", 2 ** 63), ("num_nodes", -1), ("version", 1.0),
                                    ("indices_dtype", "float32"), ("files", [1]), ("num_classes", True)]):
    m = dict(manifest)
    m[field] = value
    put("manifest", f"wrong-{i}-{field}.json", json.dumps(m))
m = json.loads(json.dumps(manifest))
m["features"]["dim"] = 2 ** 62
put("manifest", "huge-dim.json", json.dumps(m))
m = json.loads(json.dumps(manifest))
m["files"]["indptr"]["path"] = "../etc/passwd"
put("manifest", "path-escape.json", json.dumps(m))
put("manifest", "truncated.json", json.dumps(manifest)[:200])
put("manifest", "binary.json", b'{"format": "graphtier-dataset", "name": "\xff\xfe\x00"}')
# Typed (docs/format.md, Heterogeneous datasets): a valid section, and each part broken once.
hetero = {
    "format": "graphtier-dataset", "version": 1, "name": "acm", "num_nodes": 11246, "num_edges": 34852,
    "indices_dtype": "int32", "num_classes": 3,
    "files": {"indptr": {"path": "indptr.bin", "bytes": 89976, "xxh3": "0123456789abcdef"},
              "type_per_edge": {"path": "type_per_edge.bin", "bytes": 34852, "xxh3": "0123456789abcdef"},
              "features.p": {"path": "features.p.bin", "bytes": 64304, "xxh3": "0123456789abcdef"}},
    "hetero": {"node_types": [{"name": "p", "features": {"dim": 4, "dtype": "float32", "alignment": 0,
                                                         "row_stride": 16}}, {"name": "a"}, {"name": "s"}],
               "node_type_offset": [0, 4019, 11186, 11246],
               "relations": [{"name": "p:to:a", "reverse": "a:to:p"}, {"name": "a:to:p", "reverse": "p:to:a"},
                             {"name": "p:to:s", "reverse": "s:to:p"}, {"name": "s:to:p", "reverse": "p:to:s"}],
               "labelled_type": "p"},
}
put("manifest", "hetero.json", json.dumps(hetero, indent=2))
for i, (field, value) in enumerate([("node_types", [{"name": "../p"}, {"name": "a"}, {"name": "s"}]),
                                    ("node_type_offset", [0, 4019, 11187, 11186]),
                                    ("relations", [{"name": "p:to:a", "reverse": "s:to:p"}]),
                                    ("relations", [{"name": "p:to:x:a"}]),
                                    ("relations", [{"name": f"p:r{r}:p"} for r in range(257)]),
                                    ("labelled_type", "q")]):
    m = json.loads(json.dumps(hetero))
    m["hetero"][field] = value
    put("manifest", f"hetero-wrong-{i}-{field}.json", json.dumps(m))

# --- partition_manifest -----------------------------------------------------------------------
partition = {
    "format": "graphtier-partition", "version": 1, "ranks": 4, "replication": 2, "process_rows": 2,
    "graph": "partitioned", "balance": "bytes", "num_nodes": 8, "num_edges": 14, "hot_rows": 2,
    "feature_bounds": [0, 5, 8], "topology_bounds": [0, 5, 8], "edge_offsets": [0, 9],
    "local_ranges": [[[0, 2], [2, 5]], [[0, 2], [5, 8]]],
    "source": {"name": "golden", "path": "/data/golden", "manifest_xxh3": "0123456789abcdef",
               "files": {"indptr.bin": "fedcba9876543210", "indices.bin": "00000000000000ff"}},
    "rank_dirs": ["rank-0000", "rank-0001", "rank-0002", "rank-0003"],
}
put("partition_manifest", "partitioned.json", json.dumps(partition, indent=2))
m = json.loads(json.dumps(partition))
m.update({"graph": "replicated", "topology_bounds": [0, 8], "edge_offsets": [0], "rank": 3})
put("partition_manifest", "replicated-rank.json", json.dumps(m))
for i, (field, value) in enumerate([("ranks", 2 ** 63 - 1), ("replication", 2 ** 62), ("hot_rows", 9),
                                    ("feature_bounds", [0, 9, 8]), ("edge_offsets", [0, 15]),
                                    ("local_ranges", [[[0, 2], [2, 5]]]), ("rank_dirs", ["rank-0000"]),
                                    ("graph", "sharded"), ("version", 2), ("num_nodes", -1)]):
    m = json.loads(json.dumps(partition))
    m[field] = value
    put("partition_manifest", f"wrong-{i}-{field}.json", json.dumps(m))
put("partition_manifest", "truncated.json", json.dumps(partition)[:150])

# row_wire: byte 0 the reader (0 ids, 1 rows, 2 draws), byte 1 the count, then a message packed by
# hand as tests/sample/row_wire_test.cpp's golden cases are.
put("row_wire", "ids.bin", bytes([0, 0, 0x06, 0x0A, 0x02, 0xF8, 0x01]))
put("row_wire", "rows.bin", bytes([1, 3, 0x05, 0x04, 0x0A, 0x06, 0x02, 0x00, 0x00, 0x07, 0x04, 0x64, 0x01, 0x64]))
put("row_wire", "draws.bin", bytes([2, 3, 0x03, 0x04, 0x06, 0x0C, 0x14, 0x04, 0x00, 0x02, 0x0E, 0x0F]))
put("row_wire", "rows-wide.bin", bytes([1, 1, 0x01, 0x03, 0x00] + [0xFF] * 8 + [0x7F]))  # a plain id of 2^63 - 1
put("row_wire", "rows-overlong.bin", bytes([1, 1] + [0x80] * 11))

# --- npy headers and arrays -------------------------------------------------------------------
arrays = {
    "features-f4": citeseer_x, "labels-i8": cora_labels, "mask-b1": cora_labels > 3,
    "f2": citeseer_x[:2].astype(np.float16), "u2": np.arange(7, dtype=np.uint16),
    "i4-fortran": np.asfortranarray(np.arange(12, dtype=np.int32).reshape(3, 4)),
    "f8-3d": np.linspace(0, 1, 24).reshape(2, 3, 4), "scalar": np.array(3.5), "empty": np.zeros((0, 5), np.int8),
    "u8": np.array([0, 2 ** 64 - 1], dtype=np.uint64),
}
for name, a in arrays.items():
    put("npy_array", name + ".npy", npy_bytes(a))
    put("npy_header", name + ".npy", npy_bytes(a)[:128])
put("npy_array", "v2.npy", npy_bytes(cora_labels[:8], version=(2, 0)))
put("npy_array", "truncated.npy", npy_bytes(citeseer_x)[:200])
put("npy_header", "v3.npy", npy_bytes(np.arange(3), version=(3, 0)))
hdr = b"{'descr': '<i8', 'fortran_order': False, 'shape': (%d, %d), }"
for name, shape in [("huge-shape", (2 ** 62, 4)), ("overflow", (2 ** 40, 2 ** 40))]:
    h = hdr % shape
    h += b" " * (63 - (10 + len(h)) % 64) + b"\n"
    put("npy_header", name + ".npy", b"\x93NUMPY\x01\x00" + len(h).to_bytes(2, "little") + h)
    put("npy_array", name + ".npy", b"\x93NUMPY\x01\x00" + len(h).to_bytes(2, "little") + h + b"\0" * 64)
put("npy_header", "object.npy", npy_bytes(np.array(["a", "b"]))[:128])
put("npy_header", "big-endian.npy", npy_bytes(np.arange(3, dtype=">i4")))
put("npy_header", "long-header-len.npy", b"\x93NUMPY\x02\x00\xff\xff\xff\x7f{'descr': '<f4'}")

# --- zip / npz --------------------------------------------------------------------------------
ei = np.array(cora_edges, dtype=np.int64).T.copy()
stored = npz_bytes({"edge_index": ei, "labels": cora_labels}, compressed=False)
deflated = npz_bytes({"edge_index": ei, "labels": cora_labels}, compressed=True)
put("zip", "stored.npz", stored)
put("zip", "deflated.npz", deflated)
# The case: one flipped byte inside an array member must fail the CRC-32 check.
put("zip", "flipped-stored.npz", flip(stored, 200))
put("zip", "flipped-deflated.npz", flip(deflated, 120))
put("zip", "truncated.npz", deflated[: len(deflated) // 2])
buf = io.BytesIO()
with zipfile.ZipFile(buf, "w", allowZip64=True) as z:
    z.writestr(zipfile.ZipInfo("x.npy"), npy_bytes(np.arange(4)), compress_type=zipfile.ZIP_DEFLATED)
    z.writestr("comment.txt", "hello")
    z.comment = b"a comment"
put("zip", "zip64-comment.zip", buf.getvalue())

# --- gzip ------------------------------------------------------------------------------------
put("gzip", "cora-edges.gz", gz(edge_text))
put("gzip", "concatenated.gz", gz("1 2\n") + gz("3 4\n"))
put("gzip", "truncated.gz", gz(edge_text)[:60])
put("gzip", "flipped.gz", flip(gz(edge_text)))
put("gzip", "arxiv-num-nodes.gz", gz(arxiv_num_nodes))
put("gzip", "trailing-garbage.gz", gz("5 6\n") + b"garbage")
put("gzip", "plain.txt", "not gzip\n")

# --- edge-list text ---------------------------------------------------------------------------
put("edge_list", "cora.txt", "# cora, first edges\n" + edge_text)
put("edge_list", "cora-commas.txt", "".join(f"{s},{d}\r\n" for s, d in cora_edges[:30]))
put("edge_list", "cora.txt.gz", gz(edge_text))
put("edge_list", "extra-columns.txt", "% weighted\n0 1 0.5\n1\t2\t7 extra\n")
put("edge_list", "huge-ids.txt", "0 9223372036854775807\n9223372036854775808 1\n")
put("edge_list", "negative.txt", "0 -1\n")
put("edge_list", "long-line.txt", "1 " + "2" * 3000 + "\n3 4\n")
put("edge_list", "no-newline.txt", "1 2\n3 4")
put("edge_list", "binary.txt", bytes(range(256)))
put("edge_list", "float.txt", "0.5 1.7\n")

# --- OGB layouts ------------------------------------------------------------------------------
n_ogb = 40
ogb_edges = [(s % n_ogb, d % n_ogb) for s, d in cora_edges[:60]]
edge_csv = "".join(f"{s},{d}\n" for s, d in ogb_edges)
splits = [("split/s/train.csv", "0\n1\n2\n"), ("split/s/valid.csv", "3\n"), ("split/s/test.csv", "4\n5\n")]
feat_csv = "".join(",".join(f"{v:.3f}" for v in row) + "\n" for row in np.resize(citeseer_x, (n_ogb, 4)))
ogb_csv = [("raw/edge.csv.gz", gz(edge_csv)), ("raw/num-node-list.csv.gz", gz(f"{n_ogb}\n")),
           ("raw/num-edge-list.csv.gz", gz(f"{len(ogb_edges)}\n")), ("raw/node-feat.csv", feat_csv),
           ("raw/node-label.csv.gz", gz("\n".join(arxiv_labels) + "\n"))] + splits
put("ogb", "csv-arxiv-labels.txt", records(ogb_csv))
put("ogb", "csv-plain.txt", records([("raw/edge.csv", edge_csv), ("raw/num-node-list.csv", f"{n_ogb}\n"),
                                     ("raw/num-edge-list.csv", f"{len(ogb_edges)}\n")]))
put("ogb", "csv-huge-count.txt", records([("raw/edge.csv", "0,1\n"), ("raw/num-node-list.csv", "9223372036854775807\n"),
                                          ("raw/num-edge-list.csv", "1\n")]))
ogb_ei = np.array(ogb_edges, dtype=np.int64).T.copy()
data_npz = npz_bytes({"edge_index": ogb_ei, "node_feat": np.resize(citeseer_x, (n_ogb, 4)),
                      "num_nodes_list": np.array([n_ogb]), "num_edges_list": np.array([len(ogb_edges)])}, True)
label_npz = npz_bytes({"node_label": np.array([[int(v)] for v in arxiv_labels], dtype=np.int64)}, True)
put("ogb", "npz.txt", records([("raw/data.npz", data_npz), ("raw/node-label.npz", label_npz)] + splits))
put("ogb", "npz-stored.txt", records([("raw/data.npz", npz_bytes({"edge_index": ogb_ei, "num_nodes_list": np.array([n_ogb]),
                                                                    "num_edges_list": np.array([len(ogb_edges)])}, False))]))
put("ogb", "npz-flipped.txt", records([("raw/data.npz", flip(data_npz, 300))]))

# --- IGB layouts ------------------------------------------------------------------------------
P = "experimental/processed/"
igb_ei = np.array(ogb_edges, dtype=np.int64)  # [E, 2]
igb_feat = np.resize(citeseer_x, (n_ogb, 4)).astype(np.float32)
igb_labels = np.resize(cora_labels, n_ogb).astype(np.float32)
put("igb", "npy.txt", records([(P + "paper/node_feat.npy", npy_bytes(igb_feat)),
                               (P + "paper/node_label_19.npy", npy_bytes(igb_labels)),
                               (P + "paper__cites__paper/edge_index.npy", npy_bytes(igb_ei))]))
put("igb", "raw-features.txt", records([(P + "paper/node_feat.npy", igb_feat.tobytes()),
                                        (P + "paper__cites__paper/edge_index.npy", npy_bytes(igb_ei[:5]))]))
put("igb", "edges-only.txt", records([(P + "paper__cites__paper/edge_index.npy", npy_bytes(igb_ei[:8]))]))
put("igb", "wrong-shape.txt", records([(P + "paper/node_feat.npy", npy_bytes(igb_feat)),
                                       (P + "paper__cites__paper/edge_index.npy", npy_bytes(igb_ei.T.copy()))]))

total = sum(os.path.getsize(os.path.join(dp, f)) for dp, _, fs in os.walk(CORPUS) for f in fs)
print(f"fuzz/corpus: {total} bytes")
