"""graphtier.training: what a training job is made of, shared by the single-process job
(graphtier.train, `python -m graphtier.train DATASET`) and the distributed one
(graphtier.distributed.train, the same command on a partition directory): the model built from the
options, one training step and the evaluation counts, the features as the model takes them, the
checkpoint (written atomically, checked before it is loaded) and the error line.

Neither job's loop lives here: each iterates its own minibatches (the loaders, or a rank's share
from graphtier.distributed) and calls these pieces, so both train the same model the same way.
"""

from graphtier.training.checkpoint import (CHECKPOINT_KEYS, content_hash, dataset_identity, load_checkpoint,
                                           load_model_state, save_checkpoint)
from graphtier.training.features import load_feature_table, mapped_type_tables, model_features
from graphtier.training.files import write_atomically, write_json
from graphtier.training.model import make_model
from graphtier.training.report import one_line
from graphtier.training.step import StepResult, batch_seed, evaluate, idle_step, train_step

__all__ = ["CHECKPOINT_KEYS", "StepResult", "batch_seed", "content_hash", "dataset_identity", "evaluate", "idle_step",
           "load_checkpoint", "load_feature_table", "load_model_state", "make_model", "mapped_type_tables",
           "model_features", "one_line",
           "save_checkpoint", "train_step", "write_atomically", "write_json"]
