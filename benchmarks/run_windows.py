"""A run's course in windows of environment steps: share of episodes that scored (a MiniGrid goal), mean
return, and the mean of chosen logged metrics, so a rise and a collapse can be read beside their causes.

    python benchmarks/run_windows.py runs/ngu-s1 --window 10000 --metrics ngu/intrinsic train/q_taken
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

import numpy as np

from voidrl.io.report import open_csv, read_episodes, run_csv_file


def read_metrics(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    """metrics.csv's header and rows (a column is empty in rows that did not log it); gzipped where it ends in .gz."""
    with open_csv(path) as handle:
        reader = csv.DictReader(handle)
        return list(reader.fieldnames or []), list(reader)


def finite_mean(values: np.ndarray) -> float:
    """Mean of the finite entries; NaN when there are none."""
    finite = values[np.isfinite(values)]
    return float(finite.mean()) if len(finite) else float("nan")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", nargs="+", help="run directories (episodes.csv and metrics.csv, or their gzipped copies)")
    parser.add_argument("--window", type=int, default=10_000, help="environment steps per row")
    parser.add_argument("--metrics", nargs="*", default=[], help="columns of metrics.csv to average per window")
    args = parser.parse_args()
    if args.window < 1:
        parser.error(f"--window must be a positive integer, got {args.window}")
    for run in map(Path, args.runs):
        if run_csv_file(run, "episodes.csv") is None or run_csv_file(run, "metrics.csv") is None:
            parser.error(f"{run} has no episodes.csv (is it a run directory?)")
        steps, returns = read_episodes(run)
        header, metrics = read_metrics(run_csv_file(run, "metrics.csv"))
        missing = [name for name in args.metrics if name not in header]
        if missing:
            parser.error(f"{run}/metrics.csv has no column {', '.join(missing)}; it has {', '.join(header)}")
        metric_steps = np.array([int(row["step"]) for row in metrics], dtype=np.int64)
        values = {name: np.array([float(row[name] or "nan") for row in metrics]) for name in args.metrics}
        print(f"\n{run}\n| steps | episodes | scored | mean return | " + " | ".join(args.metrics) + " |")
        print("|---:" * (4 + len(args.metrics)) + "|")
        last = int(max(steps.max(initial=0), metric_steps.max(initial=0)))
        for start in range(0, last + 1, args.window):
            inside = returns[(steps >= start) & (steps < start + args.window)]
            logged = (metric_steps >= start) & (metric_steps < start + args.window)
            cells = [f"{finite_mean(values[name][logged]):.4g}" for name in args.metrics]
            scored = f"{(inside > 0).mean():.2f}" if len(inside) else "-"
            mean_return = f"{inside.mean():.3f}" if len(inside) else "nan"
            print(f"| {start:,}-{start + args.window:,} | {len(inside)} | {scored} | {mean_return} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
