"""`graphtier sample` on a typed dataset samples per relation, as the loaders do: the same engine
call (a fanout per relation), so its minibatch is the loader's for the same seeds, seed and stream."""

import json
import subprocess

import graphtier
from conftest import cli, run_cli

# p0 cites p1, p2, p3 and is written by a0, a1, a2 (each relation listed both ways); labels on p.
EDGES = "".join(f"{s} 0 p:cites:p\n0 {s} p:cited_by:p\n" for s in (1, 2, 3)) + \
    "".join(f"{a} 0 a-p\n0 {a} p-a\n" for a in (0, 1, 2))
LABELS = "p0 0\np1 1\np2 0\np3 1\n"


def typed_dataset(tmp_path) -> str:
    (tmp_path / "edges.txt").write_text(EDGES)
    (tmp_path / "labels.txt").write_text(LABELS)
    out = str(tmp_path / "g")
    run_cli("convert", "typed-edge-list", str(tmp_path / "edges.txt"), "--labels", str(tmp_path / "labels.txt"),
            "--split", "1,0", "--out", out)
    return out


def sample_cli(dataset: str, seeds, fanouts: str, seed: int, stream: int = 0) -> dict:
    out = subprocess.run([cli(), "-q", "--json", "sample", "-d", dataset, "--seeds", ",".join(map(str, seeds)),
                          "--fanouts", fanouts, "--seed", str(seed), "--stream", str(stream)],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def test_a_typed_fanout_is_per_relation(tmp_path):
    ds = typed_dataset(tmp_path)
    batch = sample_cli(ds, [0], "2", seed=5)
    block = batch["blocks"][0]
    # 2 of p0's 3 cited papers and 2 of its 3 authors: 4 neighbours, not 2 in all.
    assert block["indptr"] == [0, 4]
    assert sorted(block["edge_types"]) == [0, 0, 2, 2]  # p:cites:p, a:to:p


def test_sample_gives_the_loaders_minibatch(tmp_path):
    ds = typed_dataset(tmp_path)
    loader = graphtier.NeighborLoader(ds, [2, 1], split="train", batch_size=4, shuffle=False, seed=9,
                                      features=False)
    batch = next(iter(loader))  # epoch 0, batch 0: stream 0
    seeds = batch.seeds.tolist()
    assert sorted(seeds) == [0, 1, 2, 3]
    cli_batch = sample_cli(ds, seeds, "2,1", seed=9, stream=0)
    assert cli_batch["seeds"] == seeds
    assert len(cli_batch["blocks"]) == len(batch.blocks) == 2
    for mine, theirs in zip(cli_batch["blocks"], batch.blocks):
        assert mine["src_nodes"] == theirs.src_nodes.tolist()
        assert mine["indptr"] == theirs.indptr.tolist()
        assert mine["indices"] == theirs.indices.tolist()
        assert mine["edge_types"] == theirs.edge_types.tolist()
