#!/usr/bin/env python
"""Issue 86, part 2: would a reward-free choice among a pre-training's own checkpoints explore on more seeds?

Reads the committed ``voidrl explore`` games of every ``--keep-weights`` checkpoint of pre-trainings (each run folder's
``explore/step-*.csv``, sampled play, and ``explore/random.csv``) and, per run, compares three checkpoints: the last,
the one whose sampled games last longest (a choice that reads neither the score nor the RAM: the game's own end), and,
for reference only, the one that covers most (it reads the RAM, so no preset may choose by it). Coverage is the mean
of distinct positions per game over the random policy's on the same starts. Also prints Spearman's correlation of
game length and coverage over every checkpoint of every run.

    python benchmarks/checkpoint_choice.py benchmarks/results/mspacman-2026-12-01-fewer-contrastive-1m/seed*
"""

from __future__ import annotations

import argparse
import csv
import re
import statistics
from pathlib import Path

from scipy.stats import spearmanr


def games(path: Path) -> list[dict[str, float]]:
    with open(path, newline="") as handle:
        return [{name: float(value) for name, value in row.items()} for row in csv.DictReader(handle)]


def checkpoints(run: Path) -> list[tuple[int, float, float]]:
    """``(step, mean game length, coverage)`` of each checkpoint's sampled games, by step."""
    explore = run / "explore"
    random_positions = statistics.mean(game["positions"] for game in games(explore / "random.csv"))
    rows = []
    for path in explore.glob("step-*.csv"):
        match = re.fullmatch(r"step-(\d+)\.csv", path.name)
        if match is None:  # the greedy games
            continue
        played = games(path)
        rows.append((int(match.group(1)), statistics.mean(g["length"] for g in played),
                     statistics.mean(g["positions"] for g in played) / random_positions))
    return sorted(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=Path, help="pre-training folders, each with explore/step-*.csv")
    args = parser.parse_args()
    print("| run | checkpoints | last: step, coverage | longest games: step, length, coverage | most coverage (RAM) |")
    print("|---|---:|---|---|---|")
    lengths, coverages = [], []
    for run in args.runs:
        rows = checkpoints(run)
        last, longest, widest = rows[-1], max(rows, key=lambda row: row[1]), max(rows, key=lambda row: row[2])
        lengths += [row[1] for row in rows]
        coverages += [row[2] for row in rows]
        print(f"| {run} | {len(rows)} | {last[0]:,}, {last[2]:.2f}x | {longest[0]:,}, {longest[1]:.0f}, {longest[2]:.2f}x | "
              f"{widest[0]:,}, {widest[2]:.2f}x |")
    print(f"\nSpearman's correlation of mean game length and coverage over all {len(lengths)} checkpoints: "
          f"{spearmanr(lengths, coverages).statistic:.2f}")


if __name__ == "__main__":
    main()
