"""The model a training job's options describe (--model, --hidden, --fanouts or --mlp-layers,
--dropout)."""

from __future__ import annotations

import torch

from graphtier.models import MLP, GraphSAGE, LayerGCN

_MODELS = {"sage": GraphSAGE, "ladies": LayerGCN, "fastgcn": LayerGCN, "mlp": MLP}


def make_model(args, feature_dim: int, num_classes: int) -> torch.nn.Module:
    """args.model over `feature_dim` input features and `num_classes` outputs: one layer per fanout
    (args.fanout_list), args.mlp_layers for the MLP."""
    layers = args.mlp_layers if args.model == "mlp" else len(args.fanout_list)
    return _MODELS[args.model](feature_dim, args.hidden, num_classes, layers, args.dropout)
