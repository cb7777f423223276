"""Two runs on one machine: how much of its solo speed each run keeps when another runs beside it.

Trains PPO on CartPole-v1 through the command line, once alone and then twice at the same time,
for each thread setting (``auto``: voidrl's default, one intra-op thread for an MLP; and a fixed
count, e.g. torch's own default of one thread per core), and prints a table of steps/s. Speed is
the mean of the per-update ``time/sps`` in metrics.csv after the first update, so start-up is left out.
Run it alone on the machine.

    python benchmarks/bench_parallel.py                 # auto and 2 threads, 60k steps
    python benchmarks/bench_parallel.py --threads auto 1 2 --steps 100000
"""

from __future__ import annotations

import argparse
import csv
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def command(run_dir: Path, steps: int, threads: str, seed: int) -> list[str]:
    args = [sys.executable, "-m", "voidrl", "train", "ppo", "--env", "CartPole-v1", "--steps", str(steps),
            "--seed", str(seed), "--run-dir", str(run_dir), "--no-progress"]
    return args + ([] if threads == "auto" else ["--torch-threads", threads])


def steps_per_second(run_dir: Path) -> float:
    with open(run_dir / "metrics.csv", newline="") as handle:
        speeds = [float(row["time/sps"]) for row in csv.DictReader(handle)][1:]
    return sum(speeds) / len(speeds)


def run_together(commands: list[list[str]]) -> None:
    processes = [subprocess.Popen(c, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True) for c in commands]
    for process in processes:
        _, err = process.communicate()
        if process.returncode != 0:
            raise SystemExit(f"a run failed:\n{err}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=60_000, help="steps per run (default: 60000)")
    parser.add_argument("--threads", nargs="+", default=["auto", "2"], help="thread settings to compare (auto or N)")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        for threads in args.threads:
            solo = Path(scratch) / f"solo-{threads}"
            run_together([command(solo, args.steps, threads, 0)])
            pair = [Path(scratch) / f"pair-{threads}-{k}" for k in range(2)]
            run_together([command(run_dir, args.steps, threads, k) for k, run_dir in enumerate(pair)])
            alone = steps_per_second(solo)
            beside = [steps_per_second(run_dir) for run_dir in pair]
            rows.append((threads, alone, beside))
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    print(f"PPO on CartPole-v1, {args.steps} steps per run; {os.cpu_count()} CPUs; commit {commit}")
    print("| torch threads | alone: steps/s | two at once: steps/s each | kept of solo speed |")
    print("|---|---:|---:|---:|")
    for threads, alone, beside in rows:
        kept = ", ".join(f"{speed / alone:.0%}" for speed in beside)
        print(f"| {threads} | {alone:.0f} | {', '.join(f'{speed:.0f}' for speed in beside)} | {kept} |")


if __name__ == "__main__":
    main()
