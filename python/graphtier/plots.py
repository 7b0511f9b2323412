"""`python -m graphtier.train --plot run.png`: the run's curves as one PNG (matplotlib, imported only
here, so training needs it only when a plot is asked for)."""

from __future__ import annotations

import os

TIERS = ("gpu_hot", "gpu_cache", "host", "host_cache", "storage")


def require() -> None:
    """A ValueError (one line, the train command's exit status 2) when matplotlib is missing: checked
    before training, not after it."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise ValueError("--plot needs matplotlib: `pip install matplotlib`") from None


def training_figure(result: dict):
    """Three panels over the epochs: loss (per batch, faint, and per epoch), train and validation
    accuracy, and the rows per second each feature tier delivered."""
    from matplotlib.figure import Figure

    epochs = result["epochs"]
    xs = [e["epoch"] for e in epochs]
    fig = Figure(figsize=(13, 3.8), layout="constrained")
    loss, acc, tiers = fig.subplots(1, 3)

    losses = result.get("losses") or []
    if losses and epochs:
        # Batch i of the run sits at the fraction of the epochs done: the epochs' x range spread evenly.
        span = len(epochs) / len(losses)
        loss.plot([xs[0] - 0.5 + (i + 0.5) * span for i in range(len(losses))], losses, color="tab:blue",
                  alpha=0.25, linewidth=0.8, label="per batch")
    loss.plot(xs, [e["loss"] for e in epochs], color="tab:blue", marker="o", markersize=3, label="epoch mean")
    loss.set(title="training loss", xlabel="epoch", ylabel="cross entropy")
    loss.legend(loc="upper right")

    acc.plot(xs, [e["train_acc"] for e in epochs], marker="o", markersize=3, label="train")
    if any(e["val_acc"] is not None for e in epochs):
        val = [float("nan") if e["val_acc"] is None else e["val_acc"] for e in epochs]  # unevaluated: no point
        acc.plot(xs, val, marker="o", markersize=3, label="validation")
    if result.get("best_epoch") is not None:
        acc.axvline(result["best_epoch"], color="gray", linestyle=":", linewidth=1)
        acc.set_title(f"accuracy (test {result['test_acc']:.3f} at best validation)")
    else:
        acc.set_title("accuracy")
    acc.set(xlabel="epoch", ylabel="accuracy", ylim=(0, 1))
    acc.legend(loc="lower right")

    drawn = False
    for tier in TIERS:
        rates = [e["loader"]["features"][tier]["rows"] / max(e["seconds"], 1e-9) for e in epochs]
        if any(rates):
            tiers.plot(xs, rates, marker="o", markersize=3, label=tier)
            drawn = True
    tiers.set(title="feature rows per second, by tier", xlabel="epoch", ylabel="rows/s")
    if drawn:
        tiers.legend(loc="best")
    else:
        tiers.text(0.5, 0.5, "no feature rows gathered", ha="center", va="center", transform=tiers.transAxes)
    for ax in (loss, acc, tiers):
        ax.grid(alpha=0.3)
    fig.suptitle(f"{result['model']} on {os.path.basename(os.path.normpath(result['dataset']))}")
    return fig


def write_png(fig, path: str) -> None:
    """Writes `fig` as a PNG at `path` atomically (a temporary file beside it, renamed over it)."""
    tmp = f"{path}.tmp-{os.getpid()}"
    try:
        fig.savefig(tmp, format="png", dpi=100)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
