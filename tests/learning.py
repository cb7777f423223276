"""Learning checks that hold on any CPU: several seeds, a majority criterion, margins.

Another CPU model takes other floating-point paths, so one seed's trajectory is not portable:
a seed that solves CartPole here may stall there. These helpers train several seeds side by side
(``voidrl compare``'s worker processes, one torch thread each) and judge the group.
"""

from __future__ import annotations

import csv
from pathlib import Path

from voidrl.training.agent import Agent
from voidrl.training.compare import run_side_by_side
from voidrl.training.presets import make_config

SEEDS = (0, 1, 2)


def mean_of_last(run_dir: Path, count: int = 20) -> float:
    with open(run_dir / "episodes.csv", newline="") as handle:
        returns = [float(row["return"]) for row in csv.DictReader(handle)][-count:]
    return sum(returns) / len(returns)


def train_seeds(tmp_path: Path, algo: str, steps: int, seeds=SEEDS, **options) -> list[Path]:
    """Train ``algo`` once per seed, all at once with one thread each (three runs on two cores leave no core
    idle while the last one finishes); returns the run directories in seed order."""
    options = {"env": "CartPole-v1", **options}
    run_dirs = [tmp_path / f"{algo}-seed{seed}" for seed in seeds]
    configs = [make_config(algo, steps=steps, seed=seed, run_dir=str(run_dir), progress=False, **options)
               for seed, run_dir in zip(seeds, run_dirs)]
    run_side_by_side(configs, parallel=len(configs))
    return run_dirs


def greedy_scores(run_dirs: list[Path], episodes: int = 20) -> list[float]:
    """Mean return of each run's final agent over ``episodes`` greedy episodes."""
    return [sum(Agent.load(run_dir / "checkpoint.pt").evaluate(episodes=episodes)) / episodes for run_dir in run_dirs]


def assert_majority(scores: list[float], threshold: float) -> None:
    """More than half of the seeds reach ``threshold``."""
    reached = sum(score >= threshold for score in scores)
    assert reached > len(scores) / 2, f"{reached} of {len(scores)} seeds reached {threshold}: {scores}"
