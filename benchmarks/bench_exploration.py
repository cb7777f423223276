"""Hard exploration on MiniGrid: exploring agents against plain ones, several seeds each, same budget.

Trains every (agent, seed) through ``voidrl train`` (a finished run is reused, an interrupted one resumed),
``--parallel`` runs at a time with one torch thread each, then writes the learning curves and, for each
exploring agent, the compare table against the first (plain) agent: final return, AUC and early returns
with 95% intervals, the difference and the verdict (``voidrl plot --table``). Prints the tables, each run's
steps/s and the share of its episodes that reached the goal.

    python benchmarks/bench_exploration.py                                  # PPO vs PPO+RND, DoorKey-8x8, 1M x 3
    python benchmarks/bench_exploration.py --env MiniGrid-DoorKey-5x5-v0 --agents r2d2 ngu agent57 --steps 500000
    python benchmarks/bench_exploration.py --seeds 5 --first-seed 5         # a second batch: seeds 5-9
"""

from __future__ import annotations

import argparse
import csv
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

AGENTS = {
    # name: (algorithm, preset, further options)
    "ppo": ("ppo", "minigrid", []),
    "ppo-rnd": ("ppo", "minigrid-rnd", []),
    "r2d2": ("r2d2", "minigrid", []),
    "ngu": ("ngu", "minigrid", []),
    "agent57": ("agent57", "minigrid", []),
    # Agent57 whose intrinsic value goes on through a termination, as RND's does in ppo-rnd
    "agent57-nonepisodic": ("agent57", "minigrid", ["--no-intrinsic-terminates"]),
}
REPLAY_ALGORITHMS = ("r2d2", "ngu", "agent57")


def train(name: str, seed: int, args: argparse.Namespace) -> tuple[str, int, float]:
    """Train (or resume, or reuse) one run; returns its name, seed and wall seconds."""
    algo, preset, options = AGENTS[name]
    run_dir = Path(args.out) / f"{name}-s{seed}"
    command = [sys.executable, "-m", "voidrl", "train", algo, "--env", args.env, "--preset", preset, *options, "--steps", str(args.steps),
               "--seed", str(seed), "--run-dir", str(run_dir), "--torch-threads", "1", "--no-progress"]
    if args.save_replay and algo in REPLAY_ALGORITHMS:
        command.append("--save-replay")
    if (run_dir / "checkpoint.pt").exists():
        command.append("--resume")
    started = time.perf_counter()
    with open(f"{run_dir}.log", "a") as log:
        subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, check=True)
    return name, seed, time.perf_counter() - started


def summary(run_dir: Path) -> tuple[float, float]:
    """The run's mean steps/s (time/sps over its log rows) and the share of its episodes with a positive return."""
    with open(run_dir / "metrics.csv") as f:
        speeds = [float(row["time/sps"]) for row in csv.DictReader(f) if row.get("time/sps")]
    with open(run_dir / "episodes.csv") as f:
        returns = [float(row["return"]) for row in csv.DictReader(f)]
    return sum(speeds) / max(len(speeds), 1), sum(r > 0 for r in returns) / max(len(returns), 1)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--env", default="MiniGrid-DoorKey-8x8-v0")
    parser.add_argument("--agents", nargs="+", default=["ppo", "ppo-rnd"], choices=sorted(AGENTS),
                        help="the first is the plain agent every other one is compared with")
    parser.add_argument("--steps", type=int, default=1_000_000)
    parser.add_argument("--seeds", type=int, default=3, help="how many seeds per agent")
    parser.add_argument("--first-seed", type=int, default=0, help="the seeds are first-seed, first-seed + 1, ...")
    parser.add_argument("--parallel", type=int, default=2, help="runs at a time, one torch thread each")
    parser.add_argument("--save-replay", action="store_true",
                        help="R2D2-family runs also checkpoint their replay, so a run stopped and resumed goes on exactly")
    parser.add_argument("--out", default="runs/exploration")
    args = parser.parse_args()
    if len(args.agents) < 2 or args.steps < 1 or args.seeds < 1 or args.parallel < 1 or args.first_seed < 0:
        parser.error("need two agents or more, positive --steps, --seeds and --parallel, and --first-seed >= 0")
    Path(args.out).mkdir(parents=True, exist_ok=True)
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    jobs = [(name, seed) for seed in seeds for name in args.agents]
    with ThreadPoolExecutor(args.parallel) as pool:
        for name, seed, seconds in pool.map(lambda job: train(*job, args), jobs):
            print(f"{name} seed {seed}: {seconds:.0f} s", flush=True)

    from voidrl.io.report import compare_runs, plot_runs

    groups = {name: [Path(args.out) / f"{name}-s{seed}" for seed in seeds] for name in args.agents}
    prefix = Path(args.out) / args.env
    print(*plot_runs(groups, prefix), sep="\n")
    plain = args.agents[0]
    for name in args.agents[1:]:
        print(f"\n### {name} vs {plain}, {args.env}, {args.steps:,} steps, seeds {seeds.start}-{seeds.stop - 1}\n")
        print(compare_runs({name: groups[name], plain: groups[plain]}, args.steps, Path(f"{prefix}-{name}-vs-{plain}")))
    print("\n| agent | seed | steps/s | episodes reaching the goal |\n|---|---:|---:|---:|")
    for name, runs in groups.items():
        for seed, run_dir in zip(seeds, runs):
            speed, solved = summary(run_dir)
            print(f"| {name} | {seed} | {speed:.0f} | {100 * solved:.1f}% |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
