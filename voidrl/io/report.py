"""Learning-curve statistics across seeds: final-return tables and mean curves with 95% bands."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import numpy as np

# Two-sided 95% quantiles of Student's t for 1..30 degrees of freedom (1.96 beyond).
T_95 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
        2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042]


def t_quantile_95(dof: int) -> float:
    return T_95[dof - 1] if dof <= len(T_95) else 1.96


def mean_and_interval(values: np.ndarray, axis: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean, sample std and half-width of the 95% t-interval of the mean along ``axis``."""
    n = values.shape[axis]
    mean = values.mean(axis)
    if n < 2:
        return mean, np.zeros_like(mean), np.full_like(mean, np.nan)
    std = values.std(axis, ddof=1)
    return mean, std, t_quantile_95(n - 1) * std / math.sqrt(n)


def read_episodes(run_dir: str | Path) -> tuple[np.ndarray, np.ndarray]:
    """``(steps [E], returns [E])`` from a run's episodes.csv."""
    with open(Path(run_dir) / "episodes.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    return np.array([int(r["step"]) for r in rows]), np.array([float(r["return"]) for r in rows])


def final_return(run_dir: str | Path, window: int = 100) -> float:
    """Mean return of the run's last ``window`` episodes (NaN if it finished none)."""
    _, returns = read_episodes(run_dir)
    return float(returns[-window:].mean()) if len(returns) else float("nan")


def curve(run_dir: str | Path, grid: np.ndarray, window: int = 100) -> np.ndarray:
    """At each grid step, the mean return of the last ``window`` episodes finished by then (NaN before any)."""
    steps, returns = read_episodes(run_dir)
    out = np.full(len(grid), np.nan)
    for i, step in enumerate(grid):
        finished = returns[steps <= step]
        if len(finished):
            out[i] = finished[-window:].mean()
    return out


def compare_runs(groups: dict[str, list[Path]], total_steps: int, out_dir: Path, window: int = 100) -> str:
    """Write ``comparison.md`` and ``comparison.png`` for groups of runs; returns the markdown table."""
    lines = [f"| system | seeds | final return (last {window} episodes): mean | std | 95% interval |", "|---|---:|---:|---:|---|"]
    grid = np.linspace(0, total_steps, 60)[1:]
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(7, 4.5))
    for name, run_dirs in groups.items():
        finals = np.array([final_return(d, window) for d in run_dirs])
        mean, std, half = mean_and_interval(finals)
        lines.append(f"| {name} | {len(finals)} | {mean:.1f} | {std:.1f} | [{mean - half:.1f}, {mean + half:.1f}] |")
        curves = np.stack([curve(d, grid, window) for d in run_dirs])
        curve_mean, _, curve_half = mean_and_interval(curves)
        axes.plot(grid, curve_mean, label=name)
        axes.fill_between(grid, curve_mean - curve_half, curve_mean + curve_half, alpha=0.25)
    axes.set_xlabel("environment steps")
    axes.set_ylabel(f"mean return of the last {window} episodes")
    axes.legend()
    axes.grid(alpha=0.3)
    figure.tight_layout()
    out_dir.mkdir(parents=True, exist_ok=True)
    figure.savefig(out_dir / "comparison.png", dpi=120)
    plt.close(figure)
    table = "\n".join(lines)
    (out_dir / "comparison.md").write_text(table + "\n\nBands and intervals: 95% Student-t intervals of the mean over seeds.\n")
    return table
