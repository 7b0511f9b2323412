"""One training step and the evaluation counts, on minibatches whose features are ready
(model_features): the single-process loop and every rank of the distributed one call these."""

from __future__ import annotations

from typing import Dict, Iterable, Optional, Sequence, Tuple

import torch
import torch.nn.functional as F

from graphtier.loader import Block, RelationBlock, TypedBlock


def batch_seed(seed: int, epoch: int, index: int) -> int:
    """Dropout's seed for one training step: a function of the position, so a resumed run draws
    what the uninterrupted one drew."""
    return (seed * 1_000_003 + epoch * 65_537 + index) % (2**63 - 1)


class StepResult:
    """What one step trained on, still on the model's device: `figures()` reads it back (and so
    waits for the step), apart from the step itself so that a caller can mark the step's end on
    the device first."""

    def __init__(self, loss: torch.Tensor, logits: torch.Tensor, labels: torch.Tensor):
        self.loss, self.logits, self.labels = loss, logits, labels

    def figures(self) -> Tuple[float, int, int]:
        """(loss, labelled seeds, correctly predicted ones): the loss a float, the counts ints."""
        # detach(): torch 2.x warns when a tensor that requires grad becomes a Python number.
        loss = float(self.loss.detach())
        return loss, int(self.labels.numel()), int((self.logits.detach().argmax(dim=1) == self.labels).sum())


def model_blocks(batch):
    """What a model takes beside its features: a typed batch's TypedBlocks (the relational models'),
    else its Blocks."""
    typed = getattr(batch, "typed_blocks", None)
    return batch.blocks if typed is None else typed


def train_step(model: torch.nn.Module, optimizer: torch.optim.Optimizer, x: torch.Tensor, batch,
               seed: int, weight: float = 1.0) -> StepResult:
    """One optimiser step on one minibatch: `model` (a module or its DDP wrapper) on features `x`
    (a typed batch's: {type: features}) and model_blocks(batch), dropout seeded with `seed`
    (batch_seed of the batch's position), cross-entropy over the seeds with a label (batch.y >= 0). `weight` multiplies the loss that is
    back-propagated, not the one returned: DDP averages the gradients of all P ranks, so at a step
    where only r of them hold a minibatch each weighs P / r to average those r."""
    torch.manual_seed(seed)
    out = model(x, model_blocks(batch))
    keep = batch.y >= 0
    labels = batch.y[keep]
    loss = F.cross_entropy(out[keep], labels)
    optimizer.zero_grad()
    (loss if weight == 1.0 else loss * weight).backward()
    optimizer.step()
    return StepResult(loss, out[keep], labels)


def idle_step(model: torch.nn.Module, optimizer: torch.optim.Optimizer, feature_dim: int, num_layers: int,
              device: torch.device, typed: Optional[Tuple[Sequence[str], Sequence[str], Dict[str, int]]] = None) -> None:
    """A distributed step on a rank without a minibatch (the uneven last step of an epoch):
    `model` (the DDP wrapper) runs on an empty minibatch of `num_layers` blocks, so every parameter
    gets a zero gradient and DDP's all-reduce takes place as on the other ranks; the optimiser then
    steps with the averaged gradients, as theirs do, so every rank keeps the same parameters and
    optimiser state. A relational model's empty minibatch is typed: `typed` = (node types,
    relations "src:rel:dst", {type: feature dim} of the types with a table)."""
    none = torch.zeros(0, dtype=torch.int64, device=device)
    start = torch.zeros(1, dtype=torch.int64, device=device)
    if typed is not None:
        node_types, relations, dims = typed
        rels = {r: RelationBlock(r.split(":")[0], r.split(":")[2], 0, 0, start, none, none) for r in relations}
        block = TypedBlock({t: 0 for t in node_types}, {t: none for t in node_types}, rels)
        out = model({t: torch.zeros(0, d, device=device) for t, d in dims.items()}, [block] * num_layers)
    else:
        block = Block(0, none, start, none, None, torch.zeros(0, dtype=torch.float32, device=device))
        out = model(torch.zeros(0, feature_dim, device=device), [block] * num_layers)
    optimizer.zero_grad()
    out.sum().backward()  # an empty sum: zero gradients
    optimizer.step()


@torch.no_grad()
def evaluate(model: torch.nn.Module, inputs: Iterable) -> Tuple[int, int]:
    """(correct, labelled) over the minibatches `inputs` yields as (x, batch) (x as the model takes
    it), with `model` in evaluation mode (no dropout)."""
    model.eval()
    correct = total = 0
    for x, batch in inputs:
        pred = model(x, model_blocks(batch)).argmax(dim=1)
        keep = batch.y >= 0
        correct += int((pred[keep] == batch.y[keep]).sum())
        total += int(keep.sum())
    return correct, total
