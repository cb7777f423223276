#!/usr/bin/env python
"""Runs beside other work: how much longer a default ``voidrl`` command takes next to busy processes than alone.

Each scenario is a ``voidrl`` command with default settings (no ``--torch-threads``, normal priority), timed wall clock
from start to exit, as a user meets it, three ways:

alone
    the command on an otherwise idle machine;
beside busy
    the command while ``--busy`` (default 2) other normal-priority processes spin a CPU each (pure Python loops,
    started before it and stopped after it);
side by side
    two copies of the command started together; the slower one's time.

It prints each time and its ratio to the time alone (issue 88's bar: at most 3x). With ``--base COMMIT`` the same
commands also run from that commit's tree (a git worktree), so a change is measured against what came before on the
same machine in one run. Run it alone on the machine::

    python benchmarks/bench_beside_work.py
    python benchmarks/bench_beside_work.py --base 151d836 --scenarios pretrain-minatar
    python benchmarks/bench_beside_work.py --scenarios pretrain-minatar --set-env GOMP_SPINCOUNT=3000
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = {
    "pretrain-minatar": ["pretrain", "ppg", "--env", "MinAtar/Breakout-v1", "--steps", "12288"],
    "pretrain-atari": ["pretrain", "ppg", "--env", "ALE/MsPacman-v5", "--steps", "8192"],
    "train-atari": ["train", "ppo", "--env", "ALE/MsPacman-v5", "--preset", "atari", "--steps", "8192"],
    "train-cartpole": ["train", "ppo", "--env", "CartPole-v1", "--steps", "50000"],
}
"""Name -> ``voidrl`` arguments: a convolutional network on MinAtar (the README's main job's pre-training) and on
Atari (APT + PPG's pre-training, PPO's Nature CNN), and an MLP (CartPole)."""
BUSY_LOOP = "while True: pass"


EXTRA_ENVIRONMENT: dict[str, str] = {}
"""Variables every run gets (``--set-env``), e.g. another OpenMP spin count."""


def start(tree: Path, scenario: str, run_dir: Path) -> subprocess.Popen:
    command = [sys.executable, "-m", "voidrl", *SCENARIOS[scenario], "--no-progress", "--run-dir", str(run_dir)]
    return subprocess.Popen(command, cwd=tree, env={**os.environ, "PYTHONPATH": str(tree), **EXTRA_ENVIRONMENT},
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def wait_all(runs: list[subprocess.Popen], started: float, scenario: str) -> float:
    """Seconds from ``started`` until the last of ``runs`` exited; fails on a run that failed."""
    for run in runs:
        _, stderr = run.communicate()
        if run.returncode != 0:
            raise SystemExit(f"{scenario} failed:\n{stderr[-2000:]}")
    return time.perf_counter() - started


def timed(tree: Path, scenario: str, scratch: Path, copies: int = 1, busy: int = 0) -> float:
    """Wall seconds of ``copies`` runs of ``scenario`` started together beside ``busy`` spinning processes."""
    spinners = [subprocess.Popen([sys.executable, "-c", BUSY_LOOP]) for _ in range(busy)]
    try:
        time.sleep(0.5 if busy else 0.0)  # the spinners at full speed before the run starts
        started = time.perf_counter()
        runs = [start(tree, scenario, Path(tempfile.mkdtemp(dir=scratch))) for _ in range(copies)]
        return wait_all(runs, started, scenario)
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenarios", nargs="+", choices=sorted(SCENARIOS), default=list(SCENARIOS))
    parser.add_argument("--busy", type=int, default=2, help="spinning processes beside the run")
    parser.add_argument("--base", help="an earlier commit to measure the same way, from a git worktree")
    parser.add_argument("--set-env", nargs="+", default=[], metavar="VAR=VALUE",
                        help="environment variables for every run (GOMP_SPINCOUNT=300000: OpenMP's default spin)")
    args = parser.parse_args()
    EXTRA_ENVIRONMENT.update(item.split("=", 1) for item in args.set_env)
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "voidrl"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    trees = {f"{head}{' + changes' if dirty else ''}": ROOT}
    with tempfile.TemporaryDirectory() as scratch_name:
        scratch = Path(scratch_name)
        if args.base:
            base_tree = scratch / "base"
            subprocess.run(["git", "worktree", "add", "--detach", str(base_tree), args.base], cwd=ROOT, check=True, capture_output=True)
            trees = {args.base: base_tree, **trees}
        try:
            print(f"{os.cpu_count()} CPUs; beside {args.busy} busy processes; default settings; wall seconds (ratio to alone)\n")
            print("| scenario | tree | alone | beside busy | side by side |")
            print("|---|---|---:|---:|---:|")
            for scenario in args.scenarios:
                for name, tree in trees.items():
                    alone = timed(tree, scenario, scratch)
                    beside = timed(tree, scenario, scratch, busy=args.busy)
                    pair = timed(tree, scenario, scratch, copies=2)
                    print(f"| {scenario} | {name} | {alone:.1f} | {beside:.1f} ({beside / alone:.2f}x) | {pair:.1f} ({pair / alone:.2f}x) |",
                          flush=True)
        finally:
            if args.base:
                subprocess.run(["git", "worktree", "remove", "--force", str(scratch / "base")], cwd=ROOT, check=False)


if __name__ == "__main__":
    main()
