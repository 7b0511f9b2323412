#!/usr/bin/env python3
"""Draws the main comparisons of docs/benchmarks.md as PNG files in docs/img/, from the tables of
docs/benchmarks.md itself (one source for the figures: re-run this after editing a table).

    .venv/bin/python scripts/plots.py [--doc docs/benchmarks.md] [--out docs/img]

Needs matplotlib (scripts/setup.sh installs it into .venv). A table that is missing or changed shape
is an error naming its section, exit status 2.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path
from typing import Dict, List

ROOT = Path(__file__).resolve().parents[1]


def sections(markdown: str) -> Dict[str, List[List[List[str]]]]:
    """Heading text -> the tables under it (before the next heading), each a list of rows of cells,
    the header row first and the |---| row dropped."""
    result: Dict[str, List[List[List[str]]]] = {}
    heading, table = "", None
    for line in markdown.splitlines() + [""]:
        if line.startswith("#"):
            heading = line.lstrip("#").strip()
            result.setdefault(heading, [])
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if table is None:
                table = []
                result.setdefault(heading, []).append(table)
            if not all(re.fullmatch(r":?-+:?", c) for c in cells):
                table.append(cells)
        else:
            table = None
    return result


def number(cell: str) -> float:
    """The first number in a cell ("35.0K IOPS, 0.143 GB/s" -> 35.0; "43,914" -> 43914)."""
    match = re.search(r"-?\d[\d,]*(?:\.\d+)?", cell.replace("**", ""))
    if not match:
        raise ValueError(f"no number in table cell '{cell}'")
    return float(match.group(0).replace(",", ""))


def table(doc: dict, heading: str, index: int = 0, columns: int = 0) -> List[List[str]]:
    start = [h for h in doc if h.startswith(heading)]
    if not start or len(doc[start[0]]) <= index:
        raise ValueError(f"docs/benchmarks.md: no table {index + 1} under the heading '{heading}'")
    rows = doc[start[0]][index]
    if columns and any(len(r) != columns for r in rows):
        raise ValueError(f"docs/benchmarks.md: the table under '{heading}' no longer has {columns} columns")
    return rows


def io_figure(doc, Figure):
    engine = table(doc, "Read engine", 0, 6)[1:]
    gather = table(doc, "Feature store out of core", 0, 4)[1:]
    labels = [f"read_rows, run {r[0]}" for r in engine] + ["out-of-core gather"]
    raw = [number(r[3]) for r in engine] + [number(gather[0][1])]
    ours = [number(r[4]) for r in engine] + [number(gather[1][1])]
    fig = Figure(figsize=(7, 3.6), layout="constrained")
    ax = fig.subplots()
    xs = range(len(labels))
    ax.bar([x - 0.2 for x in xs], raw, 0.4, label="bare io_uring loop (the limit)", color="tab:gray")
    bars = ax.bar([x + 0.2 for x in xs], ours, 0.4, label="graphtier", color="tab:blue")
    for bar, r, o in zip(bars, raw, ours):
        ax.annotate(f"{o / r:.2f}x", (bar.get_x() + bar.get_width() / 2, bar.get_height()), ha="center",
                    va="bottom", fontsize=9)
    ax.set_xticks(list(xs), labels)
    ax.set(ylabel="K random 4 KiB reads / s", title="Storage reads: graphtier against raw io_uring (same run)")
    ax.legend(loc="lower right")
    return fig


def sampler_figure(doc, Figure):
    fig = Figure(figsize=(12, 4), layout="constrained")
    axes = fig.subplots(1, 2)
    for ax, index, title in zip(axes, (0, 1), ("GraphSAGE [15,10,5]", "LADIES")):
        rows = table(doc, "Bulk matrix-based sampling", index, 4)[1:]
        names, ratios = [r[0] for r in rows][::-1], [number(r[3]) for r in rows][::-1]
        colors = ["tab:gray" if n.startswith(("NeighborSampler", "LayerSampler")) else "tab:orange" for n in names]
        ax.barh(names, ratios, color=colors)
        ax.axvline(1.0, color="black", linewidth=0.8)
        ax.set(xlabel="speed / one-at-a-time with a pool of 2 (same batches)", title=f"Bulk sampling (CPU): {title}")
    return fig


def hotness_figure(doc, Figure):
    rows = table(doc, "Hotness", 0, 5)
    budgets = [number(c) for c in rows[0][1:]]
    fig = Figure(figsize=(6.5, 3.8), layout="constrained")
    ax = fig.subplots()
    for r in rows[1:]:
        style = {"color": "black", "linestyle": "--"} if r[0] == "optimal" else {"marker": "o", "markersize": 4}
        ax.plot(budgets, [number(c) for c in r[1:]], label=r[0], **style)
    ax.set(xlabel="static tier, % of the rows", ylabel="share of feature reads served",
           title="Hotness scores against the optimal placement")
    ax.legend(loc="lower right")
    ax.grid(alpha=0.3)
    return fig


def end_to_end_figure(doc, Figure):
    rows = table(doc, "End to end", 0, 8)[1:]
    names, rates = [r[0] for r in rows][::-1], [number(r[2]) for r in rows][::-1]
    fig = Figure(figsize=(10, 3.6), layout="constrained")
    ax = fig.subplots()
    colors = ["tab:gray" if n.startswith("baseline") else "tab:blue" for n in names]
    bars = ax.barh(names, rates, color=colors)
    for bar, r in zip(bars, rows[::-1]):
        ax.annotate(f" {r[7]}, storage rows {r[5]}", (bar.get_width(), bar.get_y() + bar.get_height() / 2),
                    va="center", fontsize=8)
    ax.set_xlim(0, max(rates) * 1.45)
    ax.set(xlabel="batches / s (2 cores; graphtier reads 80% of the rows from disk, the baseline none)",
           title="Training epoch: graphtier's loader against index_select from RAM")
    return fig


def prepare_figure(doc, Figure):
    fig = Figure(figsize=(9, 4), layout="constrained")
    ax = fig.subplots()
    runs = (("10M nodes", "10M nodes / 200M edges, 5.1 GB of features"),
            ("Feature table larger than RAM", "3.4M x 2048 fp32, 25.9 GiB > RAM"))
    for k, (heading, label) in enumerate(runs):
        rows = [r for r in table(doc, heading, 0, 4)[1:] if r[3]]
        names = [re.sub(r"\s*\([\d.]+ s\)|, \d+ buckets", "", r[0]) for r in rows][::-1]
        ax.barh([y + 0.2 - 0.4 * k for y in range(len(names))], [number(r[3]) for r in rows][::-1], 0.4, label=label)
        ax.set_yticks(range(len(names)), names)
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.set(xlabel="throughput / machine reference (same run)", title="generate and prepare against the machine's limits")
    ax.legend(loc="upper right", fontsize=8)
    return fig


FIGURES = {"io.png": io_figure, "samplers.png": sampler_figure, "hotness.png": hotness_figure,
           "end_to_end.png": end_to_end_figure, "prepare.png": prepare_figure}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--doc", default=str(ROOT / "docs" / "benchmarks.md"), help="the benchmarks page")
    p.add_argument("--out", default=str(ROOT / "docs" / "img"), help="directory of the PNG files")
    args = p.parse_args(argv)
    try:
        from matplotlib.figure import Figure
    except ImportError:
        print("plots.py: error: needs matplotlib (`pip install matplotlib`, or scripts/setup.sh)", file=sys.stderr)
        return 2
    try:
        doc = sections(Path(args.doc).read_text())
        os.makedirs(args.out, exist_ok=True)
        for name, draw in FIGURES.items():
            fig = draw(doc, Figure)
            path = os.path.join(args.out, name)
            tmp = f"{path}.tmp-{os.getpid()}"
            fig.savefig(tmp, format="png", dpi=100)
            os.replace(tmp, path)  # atomically: a reader never sees half a PNG
            print(path)
    except (OSError, ValueError) as e:
        print(f"plots.py: error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
