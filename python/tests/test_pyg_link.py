"""graphtier.pyg.LinkNeighborLoader against real PyTorch Geometric: PyG's arguments (edge_label_index,
edge_label, neg_sampling binary/triplet with amount, a NegativeSampling), PyG's batch layout, and
PyG's own LinkNeighborLoader's subgraph where the draw is deterministic (all neighbours). Skipped,
with the reason shown, where torch_geometric is not installed (Debian's torch 1.13)."""

import pytest
import torch

from test_link import cora_links  # noqa: F401  (the split Cora fixture)
from test_pyg import needs_pyg

pytestmark = needs_pyg


def _check_layout(data, fanouts):
    n = data.num_nodes
    assert data.n_id.numel() == n and torch.unique(data.n_id).numel() == n
    assert len(data.num_sampled_nodes) == len(fanouts) + 1
    assert sum(int(c) for c in data.num_sampled_edges) == data.edge_index.size(1)
    assert int(data.edge_index.min()) >= 0 and int(data.edge_index.max()) < n
    assert data.x.shape[0] == n and data.y.shape[0] == n


def test_binary_batches_are_pygs_layout(cora_links):  # noqa: F811
    import graphtier
    from graphtier import link
    from graphtier.pyg import LinkNeighborLoader

    ds = graphtier.Dataset(cora_links)
    edges = link.link_edges(ds, "train")
    labels = torch.zeros(edges.shape[1], dtype=torch.int64)  # PyG shifts a 0-based label by 1
    loader = LinkNeighborLoader(cora_links, num_neighbors=[5, 5], edge_label_index=edges, edge_label=labels,
                                neg_sampling=dict(mode="binary", amount=2), batch_size=100, shuffle=True,
                                num_workers=4, ids_numbering="prepared")
    assert len(loader) == -(-edges.shape[1] // 100)
    for i, data in enumerate(loader):
        _check_layout(data, [5, 5])
        p = data.input_id.numel()
        assert data.edge_label_index.shape == (2, 3 * p)
        assert torch.equal(data.edge_label, torch.cat([torch.ones(p), torch.zeros(2 * p)]))
        assert torch.equal(data.n_id[data.edge_label_index[:, :p]], edges[:, data.input_id])
        # The seeds (every endpoint) come first, ascending, as PyG's unique.
        num_seeds = int(data.num_sampled_nodes[0])
        assert torch.equal(data.n_id[:num_seeds], torch.unique(data.n_id[data.edge_label_index]))
        assert not hasattr(data, "src_index")
        if i == 2:
            break


def test_triplet_batches_with_a_negative_sampling_object(cora_links):  # noqa: F811
    from torch_geometric.sampler import NegativeSampling

    from graphtier.pyg import LinkNeighborLoader

    loader = LinkNeighborLoader(cora_links, num_neighbors=[3], edge_label_index="train",
                                neg_sampling=NegativeSampling("triplet", amount=2), batch_size=64)
    data = next(iter(loader))
    _check_layout(data, [3])
    assert data.src_index.shape == (64,) and data.dst_pos_index.shape == (64,) and data.dst_neg_index.shape == (64, 2)
    assert "edge_label_index" not in data and "edge_label" not in data
    one = LinkNeighborLoader(cora_links, num_neighbors=[3], neg_sampling="triplet", batch_size=64)
    assert next(iter(one)).dst_neg_index.shape == (64,)  # amount 1: squeezed, as PyG does
    with pytest.raises(ValueError, match="triplet"):
        LinkNeighborLoader(cora_links, num_neighbors=[3], edge_label=torch.ones(10), neg_sampling="triplet",
                           edge_label_index=torch.zeros(2, 10, dtype=torch.int64), ids_numbering="prepared")
    with pytest.raises(ValueError, match="edge_label_time needs time_attr"):
        LinkNeighborLoader(cora_links, num_neighbors=[3], edge_label_time=torch.zeros(10))


def test_all_neighbours_give_pygs_link_subgraph(cora_links):  # noqa: F811
    """Every neighbour taken, no negatives, no exclusion: PyG's own LinkNeighborLoader over the same
    graph reaches the same nodes and the same edges."""
    from torch_geometric.data import Data
    from torch_geometric.loader import LinkNeighborLoader as PygLinkNeighborLoader

    import graphtier
    from graphtier import link
    from graphtier.pyg import LinkNeighborLoader

    ds = graphtier.Dataset(cora_links)
    graph = Data(edge_index=link.all_edges(ds), num_nodes=ds.num_nodes)
    edges = link.link_edges(ds, "test")[:, :40]
    try:
        pyg = list(PygLinkNeighborLoader(graph, num_neighbors=[-1, -1], edge_label_index=edges, batch_size=20))
    except ImportError as e:  # PyG's sampler needs pyg-lib or torch-sparse, which PyPI has no wheels of
        pytest.skip(f"PyG's LinkNeighborLoader cannot sample here: {e}")
    ours = list(LinkNeighborLoader(ds, num_neighbors=[-1, -1], edge_label_index=edges, batch_size=20,
                                   exclude_seed_edges=False, ids_numbering="prepared"))
    assert len(ours) == len(pyg) == 2
    for a, b in zip(ours, pyg):
        assert set(a.n_id.tolist()) == set(b.n_id.tolist())
        ea = set(zip(a.n_id[a.edge_index[0]].tolist(), a.n_id[a.edge_index[1]].tolist()))
        eb = set(zip(b.n_id[b.edge_index[0]].tolist(), b.n_id[b.edge_index[1]].tolist()))
        assert ea == eb
        assert torch.equal(a.n_id[a.edge_label_index], b.n_id[b.edge_label_index])


def test_a_pyg_link_loader_alive_at_exit_leaks_nothing(cora_links):  # noqa: F811
    from test_link import leaks_at_exit

    assert "leaked" not in leaks_at_exit(cora_links, "pyg")


def test_bad_negative_sampling_is_refused_when_the_loader_is_made(cora_links):  # noqa: F811
    from torch_geometric.sampler import NegativeSampling

    from graphtier.pyg import LinkNeighborLoader

    # A dict without a mode drew no negatives at all; an amount no batch can draw was refused only at
    # the first batch, in the prefetch thread. Both are refused by the constructor now.
    with pytest.raises(ValueError, match="neg_sampling: a dict needs a 'mode'"):
        LinkNeighborLoader(cora_links, [5], neg_sampling={"amount": 2}, batch_size=64)
    with pytest.raises(ValueError, match="triplet negative sampling: amount must be a whole number >= 1, got 1.5"):
        LinkNeighborLoader(cora_links, [5], neg_sampling={"mode": "triplet", "amount": 1.5}, batch_size=64)
    with pytest.raises(ValueError, match="binary negative sampling: amount"):
        LinkNeighborLoader(cora_links, [5], neg_sampling_ratio=float("nan"), batch_size=64)
    sampling = NegativeSampling("triplet", 3)
    sampling.amount = 2.5  # PyG checks the amount it is made with only
    with pytest.raises(ValueError, match="got 2.5"):
        LinkNeighborLoader(cora_links, [5], neg_sampling=sampling, batch_size=64)
