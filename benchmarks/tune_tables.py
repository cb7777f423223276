"""Rebuild the README's tuning table ("Tuning") from the committed runs (benchmarks/results/tune-cartpole/): PPO on
CartPole-v1 for 15,000 steps, the default cartpole preset against the best preset of a 30-trial study (tuned on seed
0), on seeds 1-3. Per run: the study's objective (the mean greedy return of the last 3 evaluations) and the mean
return of the last 20 training episodes (sampled actions).

    python benchmarks/tune_tables.py
    R=benchmarks/results/tune-cartpole; voidrl plot $R/default-seed[123] $R/tuned-seed* --label tuned='*tuned*' \
        --label default='*default*' --table 15000 --out /tmp/tune   # the training-return table with intervals
"""

from __future__ import annotations

import csv
from pathlib import Path

from voidrl.io.report import read_episodes, read_evaluations
from voidrl.training.tune import OBJECTIVE_EVALUATIONS

RESULTS = Path(__file__).resolve().parent / "results" / "tune-cartpole"
GROUPS = {"default": "default preset (cartpole)", "tuned": "best trial's preset"}
SEEDS = (1, 2, 3)


def objective(run: str) -> float:
    """The study's value of a run: the mean greedy return of its last evaluations."""
    return read_evaluations(RESULTS / run)[1][-OBJECTIVE_EVALUATIONS:].mean()


def main() -> None:
    with open(RESULTS / "study" / "trials.csv", newline="") as handle:
        trials = list(csv.DictReader(handle))
    best = max((trial for trial in trials if trial["state"] == "COMPLETE"), key=lambda trial: float(trial["value"]))
    states = [trial["state"] for trial in trials]
    print(f"study: {len(trials)} trials ({states.count('COMPLETE')} complete, {states.count('PRUNED')} pruned); "
          f"best: trial {best['number']}, {float(best['value']):.1f} on seed 0, where the default preset has "
          f"{objective('default-seed0'):.1f}\n")
    print("| preset | " + " | ".join(f"seed {seed}" for seed in SEEDS) + " | mean |")
    print("|---|" + "---:|" * (len(SEEDS) + 1))
    for group, label in GROUPS.items():
        cells = []
        for seed in SEEDS:
            _, returns = read_episodes(RESULTS / f"{group}-seed{seed}")
            cells.append((objective(f"{group}-seed{seed}"), returns[-20:].mean()))
        means = [sum(cell[k] for cell in cells) / len(cells) for k in (0, 1)]
        print(f"| {label} | " + " | ".join(f"{greedy:.1f} ({training:.1f})" for greedy, training in [*cells, means]) + " |")
    print("\nEach cell: greedy evaluation return, mean of the last 3 evaluations (the last 20 training episodes' mean return).")


if __name__ == "__main__":
    main()
