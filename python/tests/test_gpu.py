"""The CUDA paths of the package, against the CPU paths on the same data. They need a GPU and a
package built with GRAPHTIER_CUDA=ON (scripts/gpu-check.sh python); elsewhere they skip visibly."""

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


def test_gather_to_the_gpu_equals_the_table(synthetic):
    ds = graphtier.Dataset(synthetic)
    ids = torch.randint(0, ds.num_nodes, (5000,), generator=torch.Generator().manual_seed(3)).numpy()
    expected = graphtier.FeatureStore(synthetic).gather(ids)
    store = graphtier.FeatureStore(synthetic, gpu_hot="10%", gpu_cache="10%", cpu="20%")
    for memory in ("device", "device", "pinned", "host"):  # the second gather hits the GPU cache
        out = store.gather(ids, memory=memory)
        assert out.is_cuda == (memory == "device") and torch.equal(out.cpu(), expected), memory


def test_same_loss_curve_on_the_gpu_from_every_tier(synthetic):
    short = [synthetic, "--epochs", "2", "--batch-size", "256", "--fanouts", "10,5", "--hidden", "32",
             "--quiet", "--device", "cuda", "--deterministic"]
    reference = train.run(train.parse_args([*short, "--gpu-hot", "10%", "--gpu-cache", "10%",
                                            "--cpu-buffer", "20%"]))["losses"]
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
        assert train.run(train.parse_args([*short, *extra]))["losses"] == reference, name


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
        for block_a, block_b in zip(a.blocks, b.blocks):
            for name in ("src_nodes", "indptr", "indices", "weights"):
                assert torch.equal(getattr(block_a, name), getattr(block_b, name).cpu()), name
