"""Training speed of this working tree against an earlier commit: did a change cost speed?

Checks the earlier commit out into a temporary git worktree and trains the same short runs through
the command line from both trees, alternating which goes first, ``--repeats`` times each. Speed is
the steady steps/s of a run: its steps after the first update over their collection-plus-update
time (``time/sps`` in metrics.csv), so start-up is left out. Prints one row per scenario: the median
of each side, the ratio of the medians, and the range of the per-repeat ratios. Run it alone on the
machine (one torch thread per run by default, so the runs are not sensitive to the core count).

    python benchmarks/bench_commits.py --base d0b0c5f
    python benchmarks/bench_commits.py --base HEAD~3 --scenarios ppo-minatar ppg-minatar --repeats 5
"""

from __future__ import annotations

import argparse
import csv
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = {
    "ppo-cartpole": ["ppo", "--env", "CartPole-v1", "--preset", "cartpole", "--steps", "32768"],
    "ppo-minatar": ["ppo", "--env", "MinAtar/Breakout-v1", "--preset", "minatar", "--steps", "32768"],
    "ppo-atari": ["ppo", "--env", "ALE/MsPacman-v5", "--preset", "atari", "--steps", "8192"],
    "ppg-minatar": ["ppg", "--env", "MinAtar/Breakout-v1", "--preset", "minatar", "--steps", "36864"],
    "ppg-apt-minatar": ["ppg", "--env", "MinAtar/Breakout-v1", "--preset", "minatar", "--intrinsic", "apt", "--steps", "8192"],
    # the heart's pre-training as each commit ships it, an auxiliary phase every rollout (--policy-iterations 1) so that
    # each rollout pays its share of one, as in a long run
    "ppg-pretrain-atari": ["ppg", "--env", "ALE/MsPacman-v5", "--preset", "pretrain", "--policy-iterations", "1", "--steps", "20480"],
    "r2d2-cartpole": ["r2d2", "--env", "CartPole-v1", "--preset", "cartpole", "--steps", "20000"],
    # the replay ratio and target period that the minatar preset had before 2026-11-25, pinned so that a preset's
    # change does not read as the code's
    "r2d2-minatar": ["r2d2", "--env", "MinAtar/Breakout-v1", "--preset", "minatar", "--steps", "20000", "--samples-per-insert", "4",
                     "--target-update-period", "1000"],
    "ngu-minigrid": ["ngu", "--env", "MiniGrid-Empty-5x5-v0", "--preset", "minigrid", "--steps", "8000"],
    "r2d2-cartpole-ray": ["r2d2", "--env", "CartPole-v1", "--preset", "cartpole", "--steps", "20000", "--actors", "2"],
}
"""Name -> ``voidrl train`` arguments. PPG's minatar preset runs an auxiliary phase every 16,384 steps."""


def steady_steps_per_second(run_dir: Path) -> float:
    with open(run_dir / "metrics.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))[1:]
    steps = [int(b["step"]) - int(a["step"]) for a, b in zip(rows, rows[1:])]
    return sum(steps) / sum(n / float(row["time/sps"]) for n, row in zip(steps, rows[1:]))


def train(tree: Path, scenario: str, run_dir: Path, threads: int = 1) -> float:
    command = [sys.executable, "-m", "voidrl", "train", *SCENARIOS[scenario], "--torch-threads", str(threads), "--no-progress",
               "--run-dir", str(run_dir)]
    done = subprocess.run(command, cwd=tree, env={**os.environ, "PYTHONPATH": str(tree)}, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{scenario} failed in {tree}:\n{done.stderr[-2000:]}")
    return steady_steps_per_second(run_dir)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", required=True, help="the earlier commit to compare with")
    parser.add_argument("--scenarios", nargs="+", choices=sorted(SCENARIOS), default=["ppo-cartpole", "ppo-minatar", "ppg-minatar", "ppg-apt-minatar"])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--torch-threads", type=int, default=1, help="each run's (2: a user's default for frames on 2 CPUs)")
    args = parser.parse_args()
    base = subprocess.run(["git", "rev-parse", "--short", args.base], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "voidrl"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    with tempfile.TemporaryDirectory() as scratch:
        base_tree = Path(scratch) / "base"
        subprocess.run(["git", "worktree", "add", "--detach", str(base_tree), base], cwd=ROOT, check=True, capture_output=True)
        try:
            print(f"working tree ({head}{' + changes' if dirty else ''}) against {base}, {args.repeats} repeats, "
                  f"{args.torch_threads} torch thread{'s' * (args.torch_threads > 1)}\n")
            print(f"| scenario | {base} steps/s | this tree steps/s | ratio (medians) | per-repeat ratios |")
            print("|---|---:|---:|---:|---|")
            for scenario in args.scenarios:
                speeds: dict[str, list[float]] = {"base": [], "this": []}
                for repeat in range(args.repeats):
                    order = [("base", base_tree), ("this", ROOT)]
                    for side, tree in order if repeat % 2 == 0 else order[::-1]:
                        speeds[side].append(train(tree, scenario, Path(scratch) / f"{scenario}-{side}-{repeat}", args.torch_threads))
                ratios = [new / old for new, old in zip(speeds["this"], speeds["base"])]
                old, new = statistics.median(speeds["base"]), statistics.median(speeds["this"])
                print(f"| {scenario} | {old:,.0f} | {new:,.0f} | {new / old:.3f} | {min(ratios):.3f}-{max(ratios):.3f} |", flush=True)
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(base_tree)], cwd=ROOT, check=False)


if __name__ == "__main__":
    main()
