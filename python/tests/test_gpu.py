"""The CUDA paths of the package, against the CPU paths on the same data. They need a GPU and a
package built with GRAPHTIER_CUDA=ON (scripts/gpu-check.sh python); elsewhere they skip visibly."""

import json
import warnings

import pytest
import torch

import graphtier
from graphtier import train

pytestmark = pytest.mark.skipif(not (torch.cuda.is_available() and graphtier.cuda_available()),
                                reason="needs a GPU and graphtier built with GRAPHTIER_CUDA=ON")

GPU_TIERS = dict(gpu_hot="10%", gpu_cache="10%", cpu_buffer="30%", host_cache="0")


@pytest.mark.parametrize("gpu_sampling", [False, True])
def test_cuda_loader_equals_the_cpu_loader(synthetic, gpu_sampling):
    ds = graphtier.Dataset(synthetic)
    common = dict(batch_size=256, split="train", seed=5)
    cpu = graphtier.NeighborLoader(ds, [10, 5], **common)
    gpu = graphtier.NeighborLoader(ds, [10, 5], device="cuda", gpu_sampling=gpu_sampling, **GPU_TIERS, **common)
    for epoch in range(2):  # the second epoch hits the GPU cache
        pairs = list(zip(cpu, gpu))
        assert len(pairs) == len(cpu) == len(gpu)
        for a, b in pairs:
            assert b.x.is_cuda and b.x.device.index == 0
            assert torch.equal(a.seeds, b.seeds.cpu()) and torch.equal(a.input_nodes, b.input_nodes.cpu())
            assert torch.equal(a.x, b.x.cpu()), (epoch, a.index)
            assert torch.equal(a.y, b.y.cpu())
            for block_a, block_b in zip(a.blocks, b.blocks):
                assert block_a.num_dst == block_b.num_dst
                for name in ("src_nodes", "indptr", "indices"):
                    assert torch.equal(getattr(block_a, name), getattr(block_b, name).cpu()), name
    features = gpu.stats()["features"]
    assert features["gpu_hot"]["rows"] > 0 and features["gpu_cache"]["rows"] > 0, features


def test_labels_reach_the_gpu_without_a_host_wait(synthetic):
    from graphtier.loader import _to_device

    y = torch.arange(-1, 999)
    assert torch.equal(_to_device(y, "cuda").cpu(), y)  # also warms PyTorch's pinned block cache
    # A pageable copy would synchronise with the stream; the pinned, non_blocking one does not.
    torch.cuda.set_sync_debug_mode("error")
    try:
        on_gpu = _to_device(y, "cuda")
    finally:
        torch.cuda.set_sync_debug_mode(0)
    assert on_gpu.is_cuda and torch.equal(on_gpu.cpu(), y)
    ds = graphtier.Dataset(synthetic)
    cpu = graphtier.NeighborLoader(ds, [5], batch_size=128, split="train", seed=3)
    gpu = graphtier.NeighborLoader(ds, [5], batch_size=128, split="train", seed=3, device="cuda", gpu_sampling=True,
                                   **GPU_TIERS)
    for a, b in zip(cpu, gpu):
        assert b.y.is_cuda and torch.equal(a.y, b.y.cpu()), a.index


def test_gather_to_the_gpu_equals_the_table(synthetic):
    ds = graphtier.Dataset(synthetic)
    ids = torch.randint(0, ds.num_nodes, (5000,), generator=torch.Generator().manual_seed(3)).numpy()
    expected = graphtier.FeatureStore(synthetic).gather(ids)
    store = graphtier.FeatureStore(synthetic, gpu_hot="10%", gpu_cache="10%", cpu_buffer="20%")
    for memory in ("device", "device", "pinned", "host"):  # the second gather hits the GPU cache
        out = None  # the previous output freed first: `before` counts none of it
        before = torch.cuda.memory_allocated()
        out = store.gather(ids, memory=memory)
        assert out.is_cuda == (memory == "device") and torch.equal(out.cpu(), expected), memory
        if memory == "device":  # PyTorch's caching allocator owns it (no cudaMalloc/cudaFree of ours)
            assert torch.cuda.memory_allocated() - before >= out.numel() * out.element_size()


def checksums(batch):
    """Exact integer sums of a batch's arrays (x by its bits), wherever they are."""
    return ([batch.x.view(torch.int32).long().sum(), batch.input_nodes.sum(), batch.y.sum()] +
            [k.indices.sum() + k.indptr.sum() + k.src_nodes.sum() for k in batch.blocks])


def test_gpu_sampled_blocks_stay_on_the_device_and_equal_the_cpu_samplers(synthetic):
    ds = graphtier.Dataset(synthetic)
    common = dict(batch_size=256, split="train", seed=5)
    cpu = graphtier.NeighborLoader(ds, [10, 5], **common)
    gpu = graphtier.NeighborLoader(ds, [10, 5], device="cuda", gpu_sampling=True, **GPU_TIERS, **common)
    consumer = torch.cuda.Stream()  # not the default stream
    for epoch in range(2):
        expected, pending = [], []
        with torch.cuda.stream(consumer):
            for a, b in zip(cpu, gpu):
                tensors = [b.seeds, b.input_nodes, b.x, b.y]
                tensors += [getattr(k, n) for k in b.blocks for n in ("src_nodes", "indptr", "indices")]
                assert all(t.is_cuda and t.device.index == 0 for t in tensors)
                # Read late on the consumer stream, after the batch is dropped: its memory must not
                # go back to the sampler or the gather before this work is done, or the batches
                # sampled meanwhile would overwrite it.
                torch.cuda._sleep(20_000_000)
                pending.append(checksums(b))
                expected.append(checksums(a))
                del b, tensors
        consumer.synchronize()
        assert len(pending) == len(expected) == len(gpu)
        for i, (got, want) in enumerate(zip(pending, expected)):
            assert [int(t) for t in got] == [int(t) for t in want], (epoch, i)
        assert gpu.stats()["blocks_to_host"] == 0, "the loader copied blocks to the host"
    # The same batches, element by element.
    for a, b in zip(cpu, gpu):
        assert torch.equal(a.seeds, b.seeds.cpu()) and torch.equal(a.input_nodes, b.input_nodes.cpu())
        for block_a, block_b in zip(a.blocks, b.blocks):
            assert block_a.num_dst == block_b.num_dst
            for name in ("src_nodes", "indptr", "indices"):
                assert torch.equal(getattr(block_a, name), getattr(block_b, name).cpu()), name


def test_same_loss_curve_on_the_gpu_from_every_tier(synthetic):
    short = [synthetic, "--epochs", "2", "--batch-size", "256", "--fanouts", "10,5", "--hidden", "32",
             "--quiet", "--device", "cuda", "--deterministic"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        reference = train.run(train.parse_args([*short, "--gpu-hot", "10%", "--gpu-cache", "10%",
                                                "--cpu-buffer", "20%"]))["losses"]
    fully_deterministic = not any("deterministic" in str(w.message) for w in caught)
    variants = {
        "all pinned": ["--cpu-buffer", "100%"],
        "disk only": ["--cpu-buffer", "0"],
        "GPU tiers and GPU sampling": ["--gpu-hot", "10%", "--gpu-cache", "10%", "--cpu-buffer", "20%",
                                       "--gpu-sampling"],
        "no window, no accumulator, prefetch 1": ["--gpu-hot", "10%", "--cpu-buffer", "0", "--window", "0",
                                                  "--no-accumulate", "--prefetch", "1"],
        "baseline: index_select + copy": ["--baseline"],
    }
    for name, extra in variants.items():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            losses = train.run(train.parse_args([*short, *extra]))["losses"]
        # --deterministic only warns where a kernel has no deterministic implementation (e.g.
        # index_add on CUDA): bit-equal curves only when no such warning came, close ones otherwise.
        nondeterministic = [w for w in caught if "deterministic" in str(w.message)]
        if nondeterministic or not fully_deterministic:
            assert len(losses) == len(reference), name
            torch.testing.assert_close(torch.tensor(losses), torch.tensor(reference), rtol=1e-3, atol=1e-4,
                                       msg=f"{name}: the loss curve differs beyond rtol 1e-3")
        else:
            assert losses == reference, name


@pytest.mark.parametrize("cls,sizes", [(graphtier.NeighborLoader, [10, 5]), (graphtier.LayerLoader, [128, 128])])
def test_gpu_bulk_sampling_equals_the_cpu_bulk_sampler(synthetic, cls, sizes):
    ds = graphtier.Dataset(synthetic)
    common = dict(batch_size=256, split="train", seed=5, bulk=3, batch_offset=1, batch_stride=2)
    cpu = list(cls(ds, sizes, **common))
    gpu = list(cls(ds, sizes, gpu_sampling=True, **common))
    assert [b.index for b in cpu] == [b.index for b in gpu] == list(range(1, 5, 2))
    for a, b in zip(cpu, gpu):
        assert torch.equal(a.seeds, b.seeds) and torch.equal(a.x, b.x)
        for block_a, block_b in zip(a.blocks, b.blocks):
            for name in ("src_nodes", "indptr", "indices", "edge_ids", "weights"):
                x, y = getattr(block_a, name), getattr(block_b, name)
                assert (x is None and y is None) or torch.equal(x, y), name


@pytest.mark.parametrize("cls,sizes", [(graphtier.NeighborLoader, [10, 5]), (graphtier.LayerLoader, [128, 128])])
def test_gpu_bulk_blocks_on_cuda_stay_on_the_device(synthetic, cls, sizes):
    ds = graphtier.Dataset(synthetic)
    common = dict(batch_size=256, split="train", seed=5, bulk=3)
    cpu = list(cls(ds, sizes, **common))
    gpu_loader = cls(ds, sizes, device="cuda", gpu_sampling=True, **common)
    gpu = list(gpu_loader)
    assert len(cpu) == len(gpu) > 3  # more than one bulk call
    for a, b in zip(cpu, gpu):
        assert b.seeds.is_cuda and b.input_nodes.is_cuda and b.x.is_cuda
        assert torch.equal(a.seeds, b.seeds.cpu()) and torch.equal(a.input_nodes, b.input_nodes.cpu())
        assert torch.equal(a.x, b.x.cpu())
        assert len(a.blocks) == len(b.blocks) == 2
        for block_a, block_b in zip(a.blocks, b.blocks):
            assert block_a.num_dst == block_b.num_dst
            for name in ("src_nodes", "indptr", "indices", "edge_ids", "weights"):
                x, y = getattr(block_a, name), getattr(block_b, name)
                if y is None:
                    assert x is None, name
                    continue
                assert y.is_cuda and y.device.index == 0, name
                # A block without edges has no host edge ids or weights but an empty device array.
                assert torch.equal(x, y.cpu()) if x is not None else y.numel() == 0, name
    assert gpu_loader.stats()["blocks_to_host"] == 0, "the loader copied bulk blocks to the host"


@pytest.mark.parametrize("method", ["ladies", "fastgcn"])
def test_layer_loader_on_cuda_samples_on_the_gpu_as_on_the_cpu(synthetic, method):
    ds = graphtier.Dataset(synthetic)
    common = dict(method=method, batch_size=256, split="train", seed=5)
    cpu = graphtier.LayerLoader(ds, [128, 64], **common)
    gpu = graphtier.LayerLoader(ds, [128, 64], device="cuda", **common)  # samples on the GPU by default
    pairs = list(zip(cpu, gpu))
    assert len(pairs) == len(cpu) == len(gpu)
    for a, b in pairs:
        assert b.x.is_cuda and torch.equal(a.x, b.x.cpu())
        # The blocks stay where the GPU sampler wrote them (device tensors, weights included).
        assert b.seeds.is_cuda and b.input_nodes.is_cuda
        assert torch.equal(a.seeds, b.seeds.cpu()) and torch.equal(a.input_nodes, b.input_nodes.cpu())
        assert len(a.blocks) == len(b.blocks) == 2
        for block_a, block_b in zip(a.blocks, b.blocks):
            assert block_a.num_dst == block_b.num_dst
            assert block_b.edge_ids is None and block_b.weights.dtype == torch.float32
            for name in ("src_nodes", "indptr", "indices", "weights"):
                t = getattr(block_b, name)
                assert t.is_cuda and t.device.index == 0, name
                assert torch.equal(getattr(block_a, name), t.cpu()), name
    assert gpu.stats()["blocks_to_host"] == 0, "the loader copied blocks to the host"


def test_typed_loader_on_cuda_equals_the_cpu_loader(tmp_path):
    """A typed dataset's per-type rows gathered into device memory (each type from its own GPU tiers,
    the window announcing to each type's store, merged gathers) are the CPU loader's, two epochs."""
    from conftest import run_cli
    path = str(tmp_path / "igbh")
    run_cli("generate", "--schema", "igbh", "--nodes", "2000", "--feature-dim", "8", "--classes", "4", "--seed", "1",
            "-o", path)
    ds = graphtier.Dataset(path)
    common = dict(batch_size=128, split="train", seed=5)
    cpu = graphtier.NeighborLoader(ds, [4, 3], **common)
    gpu = graphtier.NeighborLoader(ds, [4, 3], device="cuda", **GPU_TIERS, **common)
    for epoch in range(2):  # the second epoch hits the GPU caches
        pairs = list(zip(cpu, gpu))
        assert len(pairs) == len(cpu) == len(gpu)
        for a, b in pairs:
            assert sorted(a.x_dict) == sorted(b.x_dict) == sorted(ds.node_types)
            for t, x in b.x_dict.items():
                assert x.is_cuda and torch.equal(a.x_dict[t], x.cpu()), (epoch, a.index, t)
    features = gpu.stats()["features"]
    assert features["gpu_hot"]["rows"] > 0 and features["gpu_cache"]["rows"] > 0, features


def test_distributed_training_on_nccl_follows_the_gloo_run(synthetic, tmp_path):
    """The distributed job on the GPU (python -m graphtier.train PARTITION --device cuda): DDP, the
    sampling exchanges of the partitioned graph and the feature fetch all on NCCL, the fetched rows
    gathered into device memory and crossing on the GPU. One rank (NCCL takes one GPU per rank, and
    a lease has one), so every exchange is the rank's own; its minibatches are the Gloo run's on the
    CPU, and its losses equal theirs to the float sums' order (CPU against GPU kernels)."""
    from conftest import run_cli
    from dist_launch import describe, launch
    partition = str(tmp_path / "p1")
    run_cli("partition", "-d", synthetic, "-o", partition, "--ranks", "1", "--replication", "1", "--graph",
            "partitioned")
    # No dropout: its masks come from the CPU's generator in one run and the GPU's in the other.
    common = ["-m", "graphtier.train", partition, "--epochs", "2", "--batch-size", "64", "--fanouts", "5,5",
              "--hidden", "16", "--threads", "1", "--seed", "7", "--dropout", "0", "--no-eval"]
    runs = {}
    for device in ("cpu", "cuda"):
        out = tmp_path / f"{device}.json"
        ranks = launch(1, [*common, "--device", device, "--deterministic", "--json", str(out)], timeout=120)
        assert ranks[0].returncode == 0, describe(ranks)
        runs[device] = json.loads(out.read_text())
    gloo, nccl = runs["cpu"], runs["cuda"]
    assert [b for b, _ in nccl["batch_losses"]] == [b for b, _ in gloo["batch_losses"]]
    torch.testing.assert_close(torch.tensor([loss for _, loss in nccl["batch_losses"]]),
                               torch.tensor([loss for _, loss in gloo["batch_losses"]]), rtol=1e-3, atol=1e-4)
    for a, b in zip(gloo["epochs"], nccl["epochs"]):
        fetched = [{k: e["ranks"][0]["fetch"][k] for k in ("gathers", "rows", "local_rows")} for e in (a, b)]
        assert fetched[0] == fetched[1] and fetched[1]["rows"] > 0, fetched
        assert b["ranks"][0]["sample_exchange"]["exchanges"] == a["ranks"][0]["sample_exchange"]["exchanges"] > 0
