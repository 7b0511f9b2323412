"""The model a training job's options describe (--model, --hidden, --fanouts or --mlp-layers,
--dropout, --embedding-dim)."""

from __future__ import annotations

import torch

from graphtier.models import MLP, GraphSAGE, LayerGCN, RelationalGNN, TypedInput

_MODELS = {"sage": GraphSAGE, "ladies": LayerGCN, "fastgcn": LayerGCN, "mlp": MLP}
# The models of typed datasets (graphtier.models.RelationalGNN's kinds).
RELATIONAL_MODELS = ("rsage", "rgcn", "rgat")


def make_model(args, feature_dim: int, num_classes: int, dataset=None) -> torch.nn.Module:
    """args.model over `feature_dim` input features and `num_classes` outputs: one layer per fanout
    (args.fanout_list), args.mlp_layers for the MLP. A relational model (RELATIONAL_MODELS) is
    built for the typed `dataset` (a graphtier.Dataset): the labelled type's logits, each type's
    features where it has a table and args.embedding_dim learned embeddings where it has none; a
    labelled type that no relation enters is a ValueError naming args.dataset and the type (its
    logits would depend on its own embedding alone: a crash in backward or chance accuracy)."""
    layers = args.mlp_layers if args.model == "mlp" else len(args.fanout_list)
    if args.model in RELATIONAL_MODELS:
        if not any(r.rsplit(":", 1)[1] == dataset.labelled_type for r in dataset.relations):
            raise ValueError(f"{args.dataset}: no relation ends at the labelled type {dataset.labelled_type}, so "
                             f"--model {args.model} would learn nothing from its neighbours: convert it with each "
                             "relation's reverse (graphtier convert typed-edge-list adds them unless --no-reverses)")
        dims = dict(zip(dataset.node_types, dataset.node_type_feature_dims))
        typed_input = TypedInput(dataset.node_types, dataset.node_type_ranges, dims, args.embedding_dim)
        return RelationalGNN(args.model, typed_input, dataset.relations, dataset.labelled_type, args.hidden,
                             num_classes, layers, args.dropout)
    return _MODELS[args.model](feature_dim, args.hidden, num_classes, layers, args.dropout)
