"""model.py's stage model fitted to the stage times scaling.py measured on this machine (P Gloo
processes sharing its cores), and checked against what the fit did not see: the epoch times.

Per rank and step, uncontended (one process, a core to itself):
  sample  = edges * t_edge[graph] + t_sample[graph] + sampling bytes received * t_byte
            + sampling exchanges * (P - 1) * t_message
  fetch   = local feature bytes * t_gather + t_fetch + fetched bytes received * t_byte
            + (P - 1) * t_message
  compute = SAGE flops * t_flop + t_step + all-reduce: 2 (P - 1) / P parameter bytes * t_byte
            + 2 log2(P) * t_message
A rank runs sampling and fetch on its prefetch thread beside compute, so it wants
(sample + fetch + compute) / max(sample + fetch, compute) cores; P ranks on C cores stretch every
stage by k = max(1, P x that / C). Epoch = steps x k max(sample + fetch, compute).
The rates are fitted by least squares on the relative error of the stage times (scipy's
least_squares, rates >= 0): the eight CPU rates on the one-process runs (no messages, a core each
for its two threads), then t_byte and t_message on the others with the CPU rates held. The epoch
times are the check: the fit never sees them.
"""

from __future__ import annotations

import math

from model import sage_flops, sage_parameters

RATES = ("t_edge_replicated", "t_edge_partitioned", "t_sample_replicated", "t_sample_partitioned", "t_gather",
         "t_fetch", "t_flop", "t_step", "t_byte", "t_message")
UNITS = {"t_edge_replicated": "ns per sampled edge", "t_edge_partitioned": "ns per sampled edge",
         "t_sample_replicated": "ms per step", "t_sample_partitioned": "ms per step",
         "t_gather": "ns per local feature byte", "t_fetch": "ms per step", "t_flop": "ns per flop",
         "t_step": "ms per step", "t_byte": "ns per byte received", "t_message": "ms per message"}
SCALE = {"ns": 1e9, "ms": 1e3}


def observations(result: dict) -> list:
    """Per run: what the model reads (sizes, bytes, messages) and what was measured."""
    out = []
    row_bytes = result["dim"] * 4
    for r in result["runs"]:
        mean = result["sizes"][str(r["batch_per_rank"])]["mean"]
        layers = mean["layers"]
        out.append({
            "run": r, "P": r["P"], "graph": r["graph"], "steps": r["steps"],
            "edges": sum(l["edges"] for l in layers),
            "flops": sage_flops(layers, result["dim"], result["hidden"], result["classes"]),
            "parameter_bytes": 4 * sage_parameters(len(layers), result["dim"], result["hidden"], result["classes"]),
            "local_bytes": r["fetch_local_rows"] * row_bytes, "fetch_bytes": r["fetch_bytes_received"],
            "sample_bytes": r["sample_bytes_received"], "exchanges": r["sample_exchanges"],
            "measured": (r["sample_s"], r["fetch_s"], r["compute_s"]), "epoch_s": r["epoch_s"]})
    return out


def predict(rates: dict, o: dict, cores: int) -> dict:
    p = o["P"]
    sample = (o["edges"] * rates[f"t_edge_{o['graph']}"] + rates[f"t_sample_{o['graph']}"]
              + o["sample_bytes"] * rates["t_byte"] + o["exchanges"] * (p - 1) * rates["t_message"])
    fetch = (o["local_bytes"] * rates["t_gather"] + rates["t_fetch"] + o["fetch_bytes"] * rates["t_byte"]
             + (p - 1) * rates["t_message"])
    allreduce = 2 * (p - 1) / p * o["parameter_bytes"] * rates["t_byte"] + 2 * math.log2(p) * rates["t_message"]
    compute = o["flops"] * rates["t_flop"] + rates["t_step"] + allreduce
    path = max(sample + fetch, compute)
    k = max(1.0, p * (sample + fetch + compute) / path / cores)
    return {"sample": k * sample, "fetch": k * fetch, "compute": k * compute, "contention": k,
            "epoch_s": o["steps"] * k * path}


def fit(result: dict) -> tuple:
    """(rates, per-run rows of measured and modelled figures)."""
    import numpy as np
    from scipy.optimize import least_squares

    obs = observations(result)
    cores = result["cores"]
    # Start from rates of the right order: a microsecond per edge, a nanosecond per byte or flop.
    x0 = np.array([1e-7, 1e-7, 1e-3, 1e-3, 1e-9, 1e-3, 1e-10, 1e-3, 1e-9, 1e-4])

    def residuals(x, runs):
        rates = dict(zip(RATES, x))
        res = []
        for o in runs:
            m = predict(rates, o, cores)
            for model, measured in zip((m["sample"], m["fetch"], m["compute"]), o["measured"]):
                res.append(math.log(max(model, 1e-12) / max(measured, 1e-12)))
        return res

    # The CPU rates from the one-process runs (no messages, no other process), then the two
    # communication rates from the others with the CPU rates held.
    one = [o for o in obs if o["P"] == 1]
    rest = [o for o in obs if o["P"] > 1]
    first = least_squares(lambda x: residuals(np.concatenate([x, x0[-2:]]), one), x0[:-2], bounds=(0, np.inf),
                          x_scale=x0[:-2])
    second = least_squares(lambda x: residuals(np.concatenate([first.x, x]), rest), x0[-2:], bounds=(0, np.inf),
                           x_scale=x0[-2:])
    solution_x = np.concatenate([first.x, second.x])
    rates = dict(zip(RATES, solution_x))
    rows = []
    for o in obs:
        m = predict(rates, o, cores)
        rows.append({"graph": o["graph"], "P": o["P"], "kind": o["run"]["kind"],
                     "batch_per_rank": o["run"]["batch_per_rank"], "measured": o["measured"],
                     "model": (m["sample"], m["fetch"], m["compute"]), "contention": m["contention"],
                     "epoch_s": o["epoch_s"], "model_epoch_s": m["epoch_s"]})
    return rates, rows


def describe(rates: dict, rows: list) -> str:
    lines = ["Fitted rates (this machine):"]
    for name in RATES:
        unit = UNITS[name]
        lines.append(f"  {name:22s} {rates[name] * SCALE[unit[:2]]:10.4g} {unit}")
    lines += ["", "| graph | P | scaling | batch per rank | sample ms (measured / model) | fetch ms | compute ms | "
              "contention k | epoch s: measured / model (not fitted) |",
              "| --- | ---: | --- | ---: | --- | --- | --- | ---: | --- |"]
    for r in rows:
        stages = " | ".join(f"{m * 1e3:.1f} / {p * 1e3:.1f}" for m, p in zip(r["measured"], r["model"]))
        lines.append(f"| {r['graph']} | {r['P']} | {r['kind']} | {r['batch_per_rank']} | {stages} | "
                     f"{r['contention']:.2f} | {r['epoch_s']:.2f} / {r['model_epoch_s']:.2f} "
                     f"({r['model_epoch_s'] / r['epoch_s']:.2f}) |")
    return "\n".join(lines)
