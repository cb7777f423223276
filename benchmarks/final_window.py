"""Issue 63, part 2: what the goal "final return (last 100 training games) >= 1,000 at 100k" asks of a run. For each
arm's runs, the games each played within the budget, the step after which its last 100 of them ended (the measure
averages everything after it), and, for runs longer than the budget, the first step at which the mean of the last
100 games reached the threshold:

    python benchmarks/final_window.py benchmarks/results/mspacman-2026-11-29-finetune-ablation
    python benchmarks/final_window.py DIR --arms baseline scratch-q-body --threshold 1000 --budget 100000

DIR holds one folder per arm, each with ``seedK`` run folders (config.json, episodes.csv or episodes.csv.gz); a run's
own steps are its config's ``run.steps``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from voidrl.io.report import read_episodes, trailing_means

def window_opening(steps: np.ndarray, window: int) -> int:
    """The step after which the last ``window`` episodes (ending at ``steps [E]``, in order) ended: the end of the
    episode before them, 0 when there are no more than ``window``."""
    return int(steps[-window - 1]) if len(steps) > window else 0


def first_step_reaching(steps: np.ndarray, returns: np.ndarray, threshold: float, window: int) -> int | None:
    """The first episode end (``steps [E]``) at which the mean return of the last ``window`` episodes (``returns
    [E]``) is at least ``threshold``, counting only ends with ``window`` episodes behind them; None if none is."""
    full = np.arange(len(returns)) >= window - 1
    reached = np.flatnonzero(full & (trailing_means(returns, window) >= threshold))
    return int(steps[reached[0]]) if len(reached) else None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder", type=Path, help="a folder of arms, each of seedK runs")
    parser.add_argument("--arms", nargs="+", default=None, help="these arms alone (default: every arm with runs)")
    parser.add_argument("--budget", type=int, default=100_000, help="the goal's environment steps")
    parser.add_argument("--threshold", type=float, default=1000.0, help="the goal's mean return")
    parser.add_argument("--window", type=int, default=100, help="the goal's last games")
    args = parser.parse_args()
    for name, value in (("--budget", args.budget), ("--window", args.window)):
        if value < 1:
            parser.error(f"{name} must be a positive integer, got {value}")
    arms = sorted(path for path in args.folder.iterdir() if path.is_dir() and any(path.glob("seed*")))
    if args.arms is not None:
        missing = sorted(set(args.arms) - {arm.name for arm in arms})
        if missing:
            parser.error(f"{args.folder} has no arm {', '.join(missing)}; it has {', '.join(arm.name for arm in arms)}")
        arms = [arm for arm in arms if arm.name in args.arms]
    print(f"| arm | runs | games within {args.budget:,} steps | last {args.window} of them ended after step "
          f"| their mean | longer runs: first step at which the last {args.window} average {args.threshold:,.0f} |")
    print("|---|---:|---|---|---|---|")
    for arm in arms:
        games, openings, means, reaching = [], [], [], []
        for run in sorted(arm.glob("seed*")):
            steps, returns = read_episodes(run)
            within = steps <= args.budget
            games.append(int(within.sum()))
            openings.append(window_opening(steps[within], args.window))
            means.append(float(returns[within][-args.window:].mean()))
            if json.loads((run / "config.json").read_text())["run"]["steps"] > args.budget:
                reached = first_step_reaching(steps, returns, args.threshold, args.window)
                reaching.append("not reached" if reached is None else f"{reached:,}")
        print(f"| {arm.name} | {len(games)} | {min(games)}-{max(games)} | {min(openings):,}-{max(openings):,} "
              f"| {min(means):.0f}-{max(means):.0f} | {', '.join(reaching) or '-'} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
