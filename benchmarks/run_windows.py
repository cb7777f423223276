"""A run's course in windows of environment steps: share of episodes that scored (a MiniGrid goal), mean
return, and the mean of chosen logged metrics, so a rise and a collapse can be read beside their causes.

    python benchmarks/run_windows.py runs/ngu-s1 --window 10000 --metrics ngu/intrinsic train/q_taken
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
from pathlib import Path


def read_rows(path: Path) -> list[dict[str, str]]:
    with open(path) as handle:
        return list(csv.DictReader(handle))


def mean(values: list[float]) -> float:
    values = [v for v in values if not math.isnan(v)]
    return sum(values) / len(values) if values else float("nan")


def number(text: str | None) -> float:
    return float(text) if text not in (None, "") else float("nan")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", nargs="+", help="run directories (episodes.csv and metrics.csv)")
    parser.add_argument("--window", type=int, default=10_000, help="environment steps per row")
    parser.add_argument("--metrics", nargs="*", default=[], help="columns of metrics.csv to average per window")
    args = parser.parse_args()
    if args.window < 1:
        parser.error(f"--window must be a positive integer, got {args.window}")
    for run in map(Path, args.runs):
        if not (run / "episodes.csv").is_file():
            parser.error(f"{run} has no episodes.csv (is it a run directory?)")
        episodes, metrics = read_rows(run / "episodes.csv"), read_rows(run / "metrics.csv")
        missing = [name for name in args.metrics if metrics and name not in metrics[0]]
        if missing:
            parser.error(f"{run}/metrics.csv has no column {', '.join(missing)}; it has {', '.join(metrics[0])}")
        print(f"\n{run}\n| steps | episodes | scored | mean return | " + " | ".join(args.metrics) + " |")
        print("|---:" * (4 + len(args.metrics)) + "|")
        last = max(int(row["step"]) for row in episodes + metrics) if episodes or metrics else 0
        for start in range(0, last + 1, args.window):
            inside = [row for row in episodes if start <= int(row["step"]) < start + args.window]
            returns = [float(row["return"]) for row in inside]
            rows = [row for row in metrics if start <= int(row["step"]) < start + args.window]
            cells = [f"{mean([number(row.get(name)) for row in rows]):.4g}" for name in args.metrics]
            scored = f"{sum(r > 0 for r in returns) / len(returns):.2f}" if returns else "-"
            print(f"| {start:,}-{start + args.window:,} | {len(returns)} | {scored} | {mean(returns):.3f} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
