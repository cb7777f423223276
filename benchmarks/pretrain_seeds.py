"""Issue 63, part 5 (is it luck?): the 1M-step pre-trainings of the ``pretrain`` preset on Ms. Pac-Man, one per seed,
side by side, rebuilt from their committed results folders:

    python benchmarks/pretrain_seeds.py
    python benchmarks/pretrain_seeds.py FOLDER...      # others, e.g. with fewer contrastive updates
    python benchmarks/pretrain_seeds.py --at 491520 FOLDER...   # each run at one step (issue 88's equal learning)

Each folder (``mspacman_tables.py``'s layout) holds ``pretrain/`` (config.json, metrics.csv.gz, episodes.csv.gz) and
``explore/`` (``voidrl explore --seed 0`` games on the same starts: random.csv, step-N.csv of the networks at step N,
step-N-greedy.csv acting greedily). It prints what each seed's final networks do zero-shot, what the run measured of
its own objective at the end, and the sampled games of the networks along the way where a seed kept them, as ratios
to the uniform-random policy's games.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from mspacman_tables import read_exploration  # noqa: E402
from voidrl.io.report import run_csv_rows  # noqa: E402
from voidrl.math.intervals import ratio_interval  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
SEED_FOLDERS = [RESULTS / "mspacman-2026-11-28-knn-scope", RESULTS / "mspacman-2026-11-30-pretrain-seed1",
                *(RESULTS / "mspacman-2026-11-30-pretrain-seeds" / f"seed{seed}" for seed in (2, 3))]
"""The pre-trainings of seeds 0, 1, 2 and 3: the committed weights' run, then one folder per seed."""
SAMPLED_AGAIN = {RESULTS / "mspacman-2026-11-28-knn-scope": RESULTS / "mspacman-2026-11-29-finetune-ablation" / "zero-shot-sampled-seed0.csv"}
"""Seed 0's final sampled games as played again once ``voidrl explore`` seeded its sampled actions (issue 63, part 4):
its ``explore/`` files were played before, with unseeded actions, as were its games along the way."""
PRESET_UPDATES = 32
"""The ``pretrain`` preset's contrastive updates per rollout (0.125 per vector step, 256 vector steps)."""
LAST_UPDATES = 10
"""The final row of each run's own measures averages its last this many updates."""


def snapshots(explore: Path) -> dict[int, dict[str, np.ndarray]]:
    """Sampled games of the networks at step N (``step-N.csv``), by N."""
    return {int(m.group(1)): read_exploration(path) for path in explore.glob("step-*.csv") if (m := re.fullmatch(r"step-(\d+)", path.stem))}


def final_step(folder: Path) -> str:
    """``step-N`` of the last networks whose greedy games the folder holds: the run's final ones."""
    steps = [int(m.group(1)) for path in (folder / "explore").glob("step-*-greedy.csv") if (m := re.fullmatch(r"step-(\d+)-greedy", path.stem))]
    return f"step-{max(steps)}"


def label(folder: Path) -> str:
    """The run's seed, and its contrastive updates per rollout where they are not the preset's."""
    config = json.loads((folder / "pretrain" / "config.json").read_text())
    updates = config["intrinsic_config"]["contrastive_updates_per_step"] * config["algo_config"]["num_steps"]
    return f"{config['run']['seed']}" + ("" if updates == PRESET_UPDATES else f", {updates:g} contrastive updates a rollout")


def spread(values: np.ndarray) -> str:
    return f"{values.mean():.1f} +- {values.std(ddof=1) / np.sqrt(len(values)):.1f}"


def ratio(games: np.ndarray, random: np.ndarray) -> str:
    """mean(games) / mean(random) with its 95% bootstrap interval, both sides resampled (``ratio_interval``)."""
    interval = ratio_interval(games, random)
    return f"{interval.estimate:.2f}x [{interval.low:.2f}, {interval.high:.2f}]"


def final_table(folders: list[Path]) -> list[str]:
    lines = ["## Each seed's final networks, zero-shot (30 games each on the same starts; mean +- standard error; ratios with "
             "95% bootstrap intervals, the random policy's games resampled too)", "",
             "| seed | sampled score | sampled positions | positions / random | greedy score | greedy positions "
             "| particle reward | top-1 | entropy | training games' score (last 100) |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for folder in folders:
        final = final_step(folder)
        random = read_exploration(folder / "explore" / "random.csv")
        sampled = read_exploration(SAMPLED_AGAIN.get(folder, folder / "explore" / f"{final}.csv"))
        greedy = read_exploration(folder / "explore" / f"{final}-greedy.csv")
        rows = run_csv_rows(folder / "pretrain", "metrics.csv")[-LAST_UPDATES:]
        own = {name: np.mean([float(row[name]) for row in rows]) for name in ("apt/particle_reward", "apt/contrastive_accuracy", "train/entropy")}
        games = np.array([float(row["return"]) for row in run_csv_rows(folder / "pretrain", "episodes.csv")][-100:])
        lines.append(f"| {label(folder)} ({int(final.removeprefix('step-')):,} steps) | {spread(sampled['score'])} | {spread(sampled['positions'])} | "
                     f"{ratio(sampled['positions'], random['positions'])} | {spread(greedy['score'])} | "
                     f"{spread(greedy['positions'])} | {own['apt/particle_reward']:.3f} | {own['apt/contrastive_accuracy']:.3f} | "
                     f"{own['train/entropy']:.2f} | {games.mean():.0f} |")
    random = read_exploration(folders[0] / "explore" / "random.csv")
    return lines + ["", f"Uniform-random policy on the same starts: score {spread(random['score'])}, positions "
                    f"{spread(random['positions'])}. The run's own measures: the mean of its last {LAST_UPDATES} updates.", ""]


def trace_table(folders: list[Path]) -> list[str]:
    """Distinct positions / random's, at each step where at least two seeds kept their networks."""
    traced = {}
    for folder in folders:
        games = snapshots(folder / "explore")
        if len(games) > 1:
            random = read_exploration(folder / "explore" / "random.csv")
            traced[label(folder)] = {step: (values["positions"].mean() / random["positions"].mean(), values["score"].mean() / random["score"].mean())
                            for step, values in games.items()}
    steps = sorted(step for step in set().union(*traced.values()) if sum(step in games for games in traced.values()) > 1)
    if not steps:
        return []
    lines = ["## Along the way: sampled games of each seed's networks (30 each; positions / random, score / random)", "",
             "| step | " + " | ".join(f"seed {name}" for name in traced) + " |", "|---:|" + "---:|" * len(traced)]
    for step in steps:
        cells = [f"{games[step][0]:.2f}x, {games[step][1]:.2f}x" if step in games else "" for games in traced.values()]
        lines.append(f"| {step:,} | {' | '.join(cells)} |")
    return lines + [""]


def at_step_table(folders: list[Path], step: int) -> list[str]:
    """Each run at ``step`` (issue 88's measure of equal learning): its networks' sampled games there against the
    random policy's, and the particle reward of its last updates up to that step."""
    lines = [f"## Each run at step {step:,} (30 sampled games; positions and score / random's, with 95% bootstrap intervals "
             f"that resample the random policy's games too; the run's own measures: the mean of its last {LAST_UPDATES} "
             "updates up to that step)", "",
             "| run | positions / random | score / random | particle reward | top-1 | entropy |", "|---|---:|---:|---:|---:|---:|"]
    for folder in folders:
        random = read_exploration(folder / "explore" / "random.csv")
        games = snapshots(folder / "explore").get(step)
        rows = [row for row in run_csv_rows(folder / "pretrain", "metrics.csv") if int(row["step"]) <= step][-LAST_UPDATES:]
        own = {name: np.mean([float(row[name]) for row in rows]) for name in ("apt/particle_reward", "apt/contrastive_accuracy", "train/entropy")}
        played = "no games | no games" if games is None else \
            f"{ratio(games['positions'], random['positions'])} | {ratio(games['score'], random['score'])}"
        lines.append(f"| {folder.relative_to(RESULTS) if folder.is_relative_to(RESULTS) else folder} | {played} | "
                     f"{own['apt/particle_reward']:.3f} | {own['apt/contrastive_accuracy']:.3f} | {own['train/entropy']:.2f} |")
    return lines + [""]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", type=Path, nargs="*", help="results folders, one per seed (default: seeds 0-3's, those present)")
    parser.add_argument("--at", type=int, help="instead: each run at this step (its networks' games there, its own measures)")
    args = parser.parse_args()
    given = [folder.resolve() for folder in args.folders]  # resolved, so SAMPLED_AGAIN finds seed 0's
    folders = given or [folder for folder in SEED_FOLDERS if any((folder / "explore").glob("step-*-greedy.csv"))]
    print("\n".join(at_step_table(folders, args.at) if args.at else final_table(folders) + trace_table(folders)))


if __name__ == "__main__":
    main()
