"""The training-curve PNG: win rate against random and heuristic over learner steps."""

from __future__ import annotations

import csv
from pathlib import Path


def plot_training_curve(eval_csv: str | Path, out: str | Path, title: str = "") -> None:
    """Win rates (with 95% Wilson bands) from ``eval.csv``; chance is drawn for reference."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with open(eval_csv, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        return
    steps = [int(r["step"]) for r in rows]
    fig, ax = plt.subplots(figsize=(7, 4))
    for opp, colour in (("random", "tab:blue"), ("heuristic", "tab:orange")):
        if f"{opp}_win_rate" not in rows[0]:
            continue
        rate = [float(r[f"{opp}_win_rate"]) for r in rows]
        lo = [float(r[f"{opp}_ci_low"]) for r in rows]
        hi = [float(r[f"{opp}_ci_high"]) for r in rows]
        ax.plot(steps, rate, marker="o", markersize=3, color=colour, label=f"vs {opp}")
        ax.fill_between(steps, lo, hi, color=colour, alpha=0.2)
    ax.axhline(float(rows[0]["chance"]), color="grey", linestyle="--", label="chance")
    ax.set_xlabel("learner steps")
    ax.set_ylabel("win rate (95% CI)")
    ax.set_ylim(0, 1)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    plt.close(fig)
