#!/usr/bin/env python
"""Learning benchmark: PPO and TRPO on HalfCheetah-v5 through the CLI, several seeds.

Each run is ``voidrl train ALGO --env HalfCheetah-v5`` with the algorithm's ``mujoco``
preset, one torch thread, and a greedy evaluation every ``--eval-every`` steps; runs go to
``<run-dir>/<algo>/seed<k>`` and ``--jobs`` of them run at once (one core each). A run
already finished is reused and an interrupted one resumed, so the script can be stopped
and started again. At the end it prints a markdown table (final training return over the
last 100 episodes, last and best greedy evaluation; mean, std and 95% t-interval over
seeds) and writes ``<run-dir>/halfcheetah-curves.png`` and ``-best.png`` with ``voidrl plot``.

Published figures to set beside it (other versions of the task, other code):
CleanRL PPO, HalfCheetah-v4, 1M steps: 2905.9 +- 1129.4; RL Zoo TRPO, HalfCheetah-v3,
1M steps: 1785.5. Not a test: it takes about 10 core-minutes per run::

    python benchmarks/bench_mujoco.py --run-dir runs/bench-halfcheetah
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from voidrl.io.checkpoint import load_checkpoint
from voidrl.io.report import final_return, group_runs, mean_and_interval, plot_runs, read_evaluations
from voidrl.training.loop import CHECKPOINT_NAME

VOIDRL = [sys.executable, "-m", "voidrl"]


def train_command(algo: str, env: str, seed: int, run_dir: Path, args: argparse.Namespace) -> list[str] | None:
    """The CLI call that brings ``run_dir`` to ``args.steps``: a new run, a resume, or None if finished."""
    checkpoint = run_dir / CHECKPOINT_NAME
    if checkpoint.exists():
        if load_checkpoint(checkpoint)["step"] >= args.steps:
            return None
        return VOIDRL + ["train", algo, "--resume", "--run-dir", str(run_dir), "--steps", str(args.steps),
                         "--no-progress"]
    return VOIDRL + ["train", algo, "--env", env, "--steps", str(args.steps), "--seed", str(seed),
                     "--torch-threads", "1", "--eval-every", str(args.eval_every),
                     "--eval-episodes", str(args.eval_episodes), "--run-dir", str(run_dir), "--no-progress"]


def run(command: list[str] | None, log: Path) -> float:
    """Run ``command`` with its output in ``log``; returns its wall seconds (0 if there was nothing to run)."""
    if command is None:
        return 0.0
    started = time.perf_counter()
    with open(log, "a") as handle:
        handle.write(f"$ {' '.join(command)}\n")
        handle.flush()
        result = subprocess.run(command, stdout=handle, stderr=subprocess.STDOUT)
    if result.returncode != 0:
        raise RuntimeError(f"`{' '.join(command)}` failed with exit code {result.returncode}; see {log}")
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--algos", nargs="+", default=["ppo", "trpo"])
    parser.add_argument("--env", default="HalfCheetah-v5")
    parser.add_argument("--steps", type=int, default=1_000_000)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--eval-every", type=int, default=50_000)
    parser.add_argument("--eval-episodes", type=int, default=10)
    parser.add_argument("--jobs", type=int, default=2, help="runs at once, one torch thread each")
    parser.add_argument("--run-dir", default="runs/bench-halfcheetah")
    args = parser.parse_args()

    root = Path(args.run_dir)
    runs = [(algo, seed, root / algo / f"seed{seed}") for algo in args.algos for seed in range(args.seeds)]
    for _, _, run_dir in runs:
        run_dir.parent.mkdir(parents=True, exist_ok=True)
    with ThreadPoolExecutor(args.jobs) as pool:
        walls = list(pool.map(lambda r: run(train_command(r[0], args.env, r[1], r[2], args),
                                            r[2].parent / f"seed{r[1]}.log"), runs))

    lines = [
        f"## {', '.join(a.upper() for a in args.algos)} on {args.env}, {args.steps:,} steps, {args.seeds} seeds "
        f"(`python benchmarks/bench_mujoco.py --run-dir {args.run_dir}`)",
        "",
        "| algorithm | seeds | training return, last 100 episodes | last greedy evaluation | best greedy evaluation |",
        "|---|---:|---:|---:|---:|",
    ]
    for algo in args.algos:
        dirs = [run_dir for a, _, run_dir in runs if a == algo]
        cells = []
        for values in ([final_return(d, 100) for d in dirs],
                       [read_evaluations(d)[1][-1] for d in dirs],
                       [read_evaluations(d)[1].max() for d in dirs]):
            mean, std, half = mean_and_interval(np.array(values))
            cells.append(f"{mean:.1f} +- {std:.1f} [{mean - half:.1f}, {mean + half:.1f}]")
        lines.append(f"| {algo.upper()} | {len(dirs)} | " + " | ".join(cells) + " |")
    timed = [(run_dir, wall) for (_, _, run_dir), wall in zip(runs, walls) if wall > 0]
    lines += ["", "Cells: mean +- std over seeds [95% t-interval]; evaluations are the mean of "
              f"{args.eval_episodes} deterministic episodes."]
    if timed:
        lines.append("Wall time of the runs trained in this call (one torch thread each, "
                     f"{args.jobs} at once): " + ", ".join(f"{d.parent.name}/{d.name} {w / 60:.1f} min" for d, w in timed))
    paths = plot_runs(group_runs([d for _, _, d in runs], [(a.upper(), f"*/{a}/seed*") for a in args.algos]),
                      root / "halfcheetah")
    lines += ["", "Plots: " + ", ".join(str(p) for p in paths)]
    print("\n".join(lines))


if __name__ == "__main__":
    main()
