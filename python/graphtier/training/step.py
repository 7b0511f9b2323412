"""One training step and the evaluation counts, on minibatches whose features are ready
(model_features): the single-process loop and every rank of the distributed one call these."""

from __future__ import annotations

from typing import Iterable, Tuple

import torch
import torch.nn.functional as F


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


def train_step(model: torch.nn.Module, optimizer: torch.optim.Optimizer, x: torch.Tensor, batch,
               seed: int) -> StepResult:
    """One optimiser step on one minibatch: `model` (a module or its DDP wrapper) on features `x`
    and batch.blocks, dropout seeded with `seed` (batch_seed of the batch's position),
    cross-entropy over the seeds with a label (batch.y >= 0)."""
    torch.manual_seed(seed)
    out = model(x, batch.blocks)
    keep = batch.y >= 0
    labels = batch.y[keep]
    loss = F.cross_entropy(out[keep], labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return StepResult(loss, out[keep], labels)


@torch.no_grad()
def evaluate(model: torch.nn.Module, inputs: Iterable) -> Tuple[int, int]:
    """(correct, labelled) over the minibatches `inputs` yields as (x, batch) (x as the model takes
    it), with `model` in evaluation mode (no dropout)."""
    model.eval()
    correct = total = 0
    for x, batch in inputs:
        pred = model(x, batch.blocks).argmax(dim=1)
        keep = batch.y >= 0
        correct += int((pred[keep] == batch.y[keep]).sum())
        total += int(keep.sum())
    return correct, total
