#!/usr/bin/env python
"""Fault injection: short runs killed at random moments, each resumed until it reaches its budget.

For every scenario it starts ``voidrl train ... --run-dir D``, kills it (SIGKILL or SIGTERM, chosen at random) after
a random delay, then runs the same command with ``--resume`` (killing that too, ``--kills`` times in all), and
finally lets it finish. Then it checks what a user would:

- every resume started (no traceback, exit status 0, 143 or -9 as caused);
- ``episodes.csv`` and ``metrics.csv``: no row duplicated (a metrics step twice, or episode steps going back, as
  rows logged again after a resume would), the last metrics row at the budget;
- nothing left behind: no temporary file in the run directory, no process of the run alive 90 s after it ended (Ray's
  included; the longest any lingered is reported), and with ``--save-replay`` the replay's files about its capacity.

    python benchmarks/bench_faults.py --kills 50
    python benchmarks/bench_faults.py --scenarios ppo-cartpole --kills 10 --seed 3
"""

from __future__ import annotations

import argparse
import csv
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SCENARIOS = {
    "ppo-cartpole": ["train", "ppo", "--env", "CartPole-v1", "--num-envs", "2", "--num-steps", "64", "--steps", "400000",
                     "--checkpoint-every", "3"],
    "r2d2-save-replay": ["train", "r2d2", "--env", "CartPole-v1", "--preset", "cartpole", "--lstm-size", "16", "--head-size",
                         "16", "--batch-size", "8", "--min-replay", "16", "--save-replay", "--checkpoint-every", "10",
                         "--steps", "40000"],
    "r2d2-ray-actors": ["train", "r2d2", "--env", "CartPole-v1", "--preset", "cartpole", "--lstm-size", "16", "--head-size",
                        "16", "--batch-size", "8", "--min-replay", "16", "--save-replay", "--checkpoint-every", "10",
                        "--actors", "2", "--steps", "40000"],
}
"""Name -> ``voidrl`` arguments: budgets of a few minutes of training, so the kills come before the end."""
STARTUP_SECONDS = {"r2d2-ray-actors": 12.0}
"""Added to a scenario's kill delays: Ray takes this long to start on a busy 2-core machine, and a run killed before it
acts tests nothing but the start (9 attempts with delays of 2-12 s never got past it)."""
COMMON = ["--torch-threads", "1", "--no-progress"]
LINGER_LIMIT = 90.0
"""Seconds a run's processes may outlive it. After a SIGKILL of the driver, Ray's two per-node agents try for 60 s to
tell the (dead) GCS that the raylet died (a fixed timeout in Ray's ``publish_error_to_driver``), then exit."""


def rows(path: Path) -> list[list[str]]:
    if not path.exists():
        return []
    with path.open(newline="") as handle:
        return list(csv.reader(handle))[1:]


def session_pids(session: int) -> list[int]:
    """Processes still in the process group (session) a run was started in: its Ray workers included."""
    found = subprocess.run(["pgrep", "-s", str(session)], capture_output=True, text=True).stdout.split()
    return [int(pid) for pid in found]


def run_until_killed(command: list[str], delay: float, signum: int) -> tuple[int, str, float, int]:
    """Run ``command``, send ``signum`` after ``delay`` seconds unless it ended; returns (exit status, stderr, seconds
    until none of its processes was alive, how many were still alive ``LINGER_LIMIT`` seconds after it ended, then killed)."""
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        _, stderr = process.communicate(timeout=delay)
    except subprocess.TimeoutExpired:
        process.send_signal(signum)
        _, stderr = process.communicate(timeout=180)
    ended = time.monotonic()
    while session_pids(process.pid) and time.monotonic() < ended + LINGER_LIMIT:
        time.sleep(0.5)
    lingered = time.monotonic() - ended
    left = session_pids(process.pid)
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    return process.returncode, stderr, lingered, len(left)


def replay_megabytes(run_dir: Path) -> float:
    return sum(path.stat().st_size for path in (run_dir / "replay").glob("*")) / 1e6


def check(run_dir: Path, budget: int) -> dict[str, int]:
    metrics = [int(float(row[0])) for row in rows(run_dir / "metrics.csv")]
    episodes = rows(run_dir / "episodes.csv")
    return {
        "metric rows duplicated": len(metrics) - len(set(metrics)),
        "metric steps out of order": sum(b <= a for a, b in zip(metrics, metrics[1:])),
        "episode steps out of order": sum(int(b[0]) < int(a[0]) for a, b in zip(episodes, episodes[1:])),
        "short of the budget": int(not metrics or metrics[-1] < budget),
        "temporary files left": len([p for p in run_dir.rglob("*.tmp")]),
        "replay MB at the end": round(replay_megabytes(run_dir), 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scenarios", nargs="+", choices=sorted(SCENARIOS), default=list(SCENARIOS))
    parser.add_argument("--kills", type=int, default=50, help="kills in all, spread over the scenarios")
    parser.add_argument("--max-delay", type=float, default=12.0, help="seconds after a start before its kill, drawn uniformly")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--run-dir", default=None)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    root = Path(args.run_dir or tempfile.mkdtemp(prefix="bench_faults_"))
    totals = {name: {"kills": 0, "failed resumes": 0, "processes left": 0, "longest linger (s)": 0.0} for name in args.scenarios}
    per_scenario = [args.kills // len(args.scenarios) + (i < args.kills % len(args.scenarios)) for i in range(len(args.scenarios))]
    for name, kills in zip(args.scenarios, per_scenario):
        run_dir = root / name
        command = [sys.executable, "-m", "voidrl", *SCENARIOS[name], *COMMON, "--run-dir", str(run_dir)]
        budget = int(SCENARIOS[name][SCENARIOS[name].index("--steps") + 1])
        for attempt in range(kills + 1):
            resume = ["--resume"] if attempt else []
            signum = rng.choice([signal.SIGKILL, signal.SIGTERM])
            delay = STARTUP_SECONDS.get(name, 0.0) + rng.uniform(2.0, args.max_delay) if attempt < kills else 3600.0
            code, stderr, lingered, left = run_until_killed(command + resume, delay, signum)
            totals[name]["processes left"] += left
            totals[name]["longest linger (s)"] = round(max(totals[name]["longest linger (s)"], lingered), 1)
            expected = {0, 128 + signal.SIGTERM, -signal.SIGKILL, -signal.SIGTERM}
            if code not in expected or "Traceback" in stderr:
                totals[name]["failed resumes"] += 1
                print(f"{name}: attempt {attempt} exited {code}:\n{stderr[-1500:]}", flush=True)
            totals[name]["kills"] += attempt < kills and code != 0
            if code == 0:
                break
        totals[name] |= check(run_dir, budget)
    print(f"\n{sum(t['kills'] for t in totals.values())} kills over {len(args.scenarios)} scenarios (seed {args.seed})\n")
    columns = list(next(iter(totals.values())))
    print("| scenario | " + " | ".join(columns) + " |")
    print("|---|" + "---:|" * len(columns))
    for name, counts in totals.items():
        print(f"| {name} | " + " | ".join(str(counts[column]) for column in columns) + " |")


if __name__ == "__main__":
    main()
