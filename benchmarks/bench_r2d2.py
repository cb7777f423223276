"""The Ray engine's speed (R2D2, or A3C with --algo a3c): acting in the learner's process against 1 and 2
Ray actors, and learner updates/s.

Trains the same short run through the command line once per mode (``--actors 0``, then each
count given), alternating the order over ``--repeats``, and prints per mode the medians over repeats of:
- run steps/s: environment steps over wall-clock time of the training loop (metrics.csv rows after the
  first, so Ray's start-up is left out);
- actor steps/s: each actor's own collection speed (Ray modes; inline, the loop's collection speed);
- learner updates/s: gradient steps over the time spent training;
- wall seconds of the whole command, start-up included.
Run it alone on the machine.

    python benchmarks/bench_r2d2.py
    python benchmarks/bench_r2d2.py --env MinAtar/Breakout-v1 --preset none --steps 20000 --actors 1 2 4
    python benchmarks/bench_r2d2.py --algo a3c
"""

from __future__ import annotations

import argparse
import csv
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def measure(run_dir: Path) -> dict[str, float]:
    with open(run_dir / "metrics.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))[1:]
    steps = [int(b["step"]) - int(a["step"]) for a, b in zip(rows, rows[1:])]
    rows = rows[1:]
    loop_seconds = sum(n / float(row["time/sps"]) for n, row in zip(steps, rows))
    update_seconds = sum(float(row["time/update_seconds"]) for row in rows)
    updates = float(rows[-1]["train/updates"]) - float(rows[0]["train/updates"]) + 1e-9
    actor = [float(row["time/actor_sps"]) for row in rows if row.get("time/actor_sps")]
    inline_collect = sum(steps) / max(loop_seconds - update_seconds, 1e-9)
    return {"run_sps": sum(steps) / loop_seconds, "actor_sps": statistics.median(actor) if actor else inline_collect,
            "updates_per_s": updates / update_seconds}


def train(actors: int, args: argparse.Namespace, run_dir: Path) -> dict[str, float]:
    command = [sys.executable, "-m", "voidrl", "train", args.algo, "--env", args.env, "--steps", str(args.steps),
               "--actors", str(actors), "--torch-threads", "1", "--no-progress", "--run-dir", str(run_dir)]
    if args.preset != "none":
        command += ["--preset", args.preset]
    started = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"--actors {actors} failed:\n{done.stderr[-2000:]}")
    return {**measure(run_dir), "wall_s": time.perf_counter() - started}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--algo", default="r2d2", choices=("r2d2", "a3c"))
    parser.add_argument("--env", default="CartPole-v1")
    parser.add_argument("--preset", default="cartpole", help="the algorithm's preset, or none")
    parser.add_argument("--steps", type=int, default=20000)
    parser.add_argument("--actors", type=int, nargs="+", default=[1, 2], help="Ray actor counts to compare with inline")
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    modes = [0, *args.actors]
    results: dict[int, list[dict[str, float]]] = {mode: [] for mode in modes}
    with tempfile.TemporaryDirectory() as scratch:
        for repeat in range(args.repeats):
            for mode in modes if repeat % 2 == 0 else modes[::-1]:
                results[mode].append(train(mode, args, Path(scratch) / f"actors{mode}-{repeat}"))
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    print(f"{args.algo} on {args.env} (preset {args.preset}), {args.steps} steps, {args.repeats} repeats, commit {commit}; medians")
    print("| mode | run steps/s | actor steps/s | learner updates/s | wall s (with start-up) |")
    print("|---|---:|---:|---:|---:|")
    for mode in modes:
        median = {key: statistics.median(run[key] for run in results[mode]) for key in results[mode][0]}
        name = "inline (--actors 0)" if mode == 0 else f"{mode} Ray actor{'s' if mode > 1 else ''}"
        print(f"| {name} | {median['run_sps']:.0f} | {median['actor_sps']:.0f} | {median['updates_per_s']:.1f} | {median['wall_s']:.0f} |")


if __name__ == "__main__":
    main()
