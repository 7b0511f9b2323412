"""What a training job prints: one-line errors, the validation figure of an epoch line and the
final line (none of them invents a figure for a run without evaluation)."""

from __future__ import annotations

from typing import Optional


def one_line(e: BaseException) -> str:
    """`e`'s message on one line (its type's name when it has none): error lines stay one line."""
    return " ".join(str(e).split()) or type(e).__name__


def not_evaluated() -> dict:
    """A run's best epoch before any evaluation (checkpoints hold this record as it is)."""
    return {"val_acc": -1.0, "test_acc": 0.0, "epoch": -1}


def best_figures(best: dict) -> dict:
    """The result's best_epoch, val_acc and test_acc from a run's best epoch record; None each
    when no epoch was evaluated (--no-eval), never a made-up figure."""
    if best["epoch"] < 0:
        return {"best_epoch": None, "val_acc": None, "test_acc": None}
    return {"best_epoch": best["epoch"], "val_acc": best["val_acc"], "test_acc": best["test_acc"]}


def validation_figure(val_acc: Optional[float]) -> str:
    """The epoch line's validation accuracy ("val 0.812  "), nothing when the run skips evaluation."""
    return "" if val_acc is None else f"val {val_acc:.3f}  "


def final_line(result: dict, ranks: Optional[int] = None) -> str:
    """The last line of a run (`result` as run() returns it): the test accuracy of the epoch with
    the best validation accuracy, or, without evaluation, how many epochs were trained. `ranks`:
    the distributed job's number of ranks (None for one process)."""
    if result["test_acc"] is None:
        on = f" on {ranks} ranks" if ranks else ""
        return f"trained {len(result['epochs'])} epochs of {result['model']}{on} (no evaluation)"
    on = f", {ranks} ranks" if ranks else ""
    return (f"test accuracy {result['test_acc']:.4f} (model {result['model']}{on}, best validation "
            f"{result['val_acc']:.4f} at epoch {result['best_epoch']})")
