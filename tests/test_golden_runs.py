"""Short CLI runs against files recorded before a refactoring: the same seed must give the same episodes.

``python -m tests.test_golden_runs --record [NAME ...]`` rewrites ``tests/golden/`` (all runs, or those
named; only when behaviour is meant to change, saying why in the commit). The episodes (step, return, length) must match exactly; the logged
losses and statistics to a relative 1e-2, a margin against floating-point paths that `CPU_PATH_PINS` does not
reach, while a changed update, reward or schedule still fails. Every run uses one torch thread: the thread count
changes the order of floating-point sums.
"""

from __future__ import annotations

import csv
import math
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest


GOLDEN = Path(__file__).parent / "golden"
COMMON = ["--seed", "3", "--torch-threads", "1", "--no-progress"]
RUNS = {
    "ppo-cartpole": ["train", "ppo", "--env", "CartPole-v1", "--steps", "4096"],
    "reinforce-cartpole": ["train", "reinforce", "--env", "CartPole-v1", "--steps", "3000"],
    "a2c-pendulum": ["train", "a2c", "--env", "voidrl/InvertedPendulumFall-v5", "--steps", "4000", "--num-envs", "5"],
    "ppg-apt-minatar": ["train", "ppg", "--env", "MinAtar/Breakout-v1", "--preset", "minatar", "--intrinsic", "apt",
                        "--steps", "4096", "--num-steps", "64", "--policy-iterations", "2", "--contrastive-start", "64",
                        "--contrastive-batch-size", "32", "--eval-every", "2048", "--eval-episodes", "2"],
    "ppg-pretrain-mspacman": ["pretrain", "ppg", "--env", "ALE/MsPacman-v5", "--preset", "pretrain-published", "--steps", "1024", "--num-envs", "2",
                              "--num-steps", "256", "--policy-iterations", "2", "--minibatch-size", "64",
                              "--contrastive-start", "64", "--contrastive-batch-size", "16",
                              "--contrastive-updates-per-step", "0.25"],
    "ppo-lstm-cartpole": ["train", "ppo", "--env", "voidrl/CartPoleNoVelocity-v1", "--memory", "lstm", "--lstm-size", "16",
                          "--sequence-length", "8", "--num-envs", "4", "--num-steps", "128", "--minibatch-size", "128", "--steps", "4096"],
    "ppg-lstm-cartpole": ["train", "ppg", "--env", "voidrl/CartPoleNoVelocity-v1", "--memory", "lstm", "--lstm-size", "16",
                          "--sequence-length", "8", "--num-envs", "4", "--num-steps", "128", "--minibatch-size", "128",
                          "--policy-iterations", "2", "--steps", "4096"],
    "a2c-lstm-cartpole": ["train", "a2c", "--env", "voidrl/CartPoleNoVelocity-v1", "--memory", "lstm", "--lstm-size", "16",
                          "--steps", "4096"],
    "r2d2-cartpole": ["train", "r2d2", "--env", "CartPole-v1", "--preset", "cartpole", "--steps", "2400", "--min-replay", "16",
                      "--lstm-size", "16", "--head-size", "16", "--batch-size", "8"],
    "ngu-minigrid": ["train", "ngu", "--env", "MiniGrid-Empty-5x5-v0", "--preset", "minigrid", "--num-envs", "4",
                     "--min-replay", "16", "--steps", "960"],
    "agent57-minigrid": ["train", "agent57", "--env", "MiniGrid-Empty-5x5-v0", "--preset", "minigrid", "--num-envs", "4",
                         "--min-replay", "16", "--steps", "960"],
}
VOLATILE = ("time/", "sys/")
"""Metric columns that measure the machine, not the learning."""
CPU_PATH_PINS = {"ATEN_CPU_CAPABILITY": "default", "MKL_CBWR": "COMPATIBLE", "ONEDNN_MAX_CPU_ISA": "SSE41"}
"""Environment that makes recorded runs independent of the CPU model: without it, ATen picks AVX2 or AVX-512 kernels,
MKL and oneDNN their own instruction paths by CPU, and ppo-cartpole's clip fraction at step 3840 came out one sample
in 1,280 apart between an Intel Xeon (AVX-512) and the AMD EPYC that recorded it, whatever else ran. With these pins
both machines give ppo-cartpole's metrics to the last digit, and the run takes no longer."""


def run(name: str, run_dir: Path) -> None:
    """In a process of its own, as a user runs it, with the CPU's floating-point paths pinned (`CPU_PATH_PINS`)."""
    result = subprocess.run([sys.executable, "-m", "voidrl", *RUNS[name], *COMMON, "--run-dir", str(run_dir)],
                            capture_output=True, text=True, timeout=600, env={**os.environ, **CPU_PATH_PINS})
    assert result.returncode == 0, f"{name} exited {result.returncode}: {result.stderr[-2000:]}"


def rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


def learning_columns(row: dict[str, str]) -> dict[str, str]:
    return {key: value for key, value in row.items() if not key.startswith(VOLATILE)}


def close(recorded: str, now: str) -> bool:
    if recorded == now:
        return True
    if "" in (recorded, now):
        return False
    return math.isclose(float(recorded), float(now), rel_tol=1e-2, abs_tol=1e-6)


SLOW = {"agent57-minigrid", "ngu-minigrid", "ppg-apt-minatar", "ppg-pretrain-mspacman", "ppo-lstm-cartpole", "r2d2-cartpole"}
"""Runs of more than about ten seconds under ``pytest -n 2`` on 2 cores: opt-in with ``--run-slow``."""


@pytest.mark.parametrize("name", [pytest.param(name, marks=[pytest.mark.slow] if name in SLOW else []) for name in sorted(RUNS)])
def test_run_matches_recording(name, tmp_path):
    run(name, tmp_path / name)
    recorded_dir, now_dir = GOLDEN / name, tmp_path / name
    assert rows(now_dir / "episodes.csv") == rows(recorded_dir / "episodes.csv")
    recorded, now = rows(recorded_dir / "metrics.csv"), [learning_columns(r) for r in rows(now_dir / "metrics.csv")]
    assert len(now) == len(recorded)
    for before, after in zip(recorded, now):
        assert before.keys() == after.keys()
        differing = {key: (before[key], after[key]) for key in before if not close(before[key], after[key])}
        assert not differing, f"step {after['step']}: {differing}"


def record(names: list[str]) -> None:
    unknown = set(names) - set(RUNS)
    if unknown:
        sys.exit(f"unknown run(s) {', '.join(sorted(unknown))}; choose from {', '.join(RUNS)}")
    with tempfile.TemporaryDirectory() as scratch:
        for name in names or RUNS:
            run(name, Path(scratch) / name)
            target = GOLDEN / name
            target.mkdir(parents=True, exist_ok=True)
            shutil.copy(Path(scratch) / name / "episodes.csv", target / "episodes.csv")
            metrics = [learning_columns(r) for r in rows(Path(scratch) / name / "metrics.csv")]
            with (target / "metrics.csv").open("w", newline="") as handle:
                writer = csv.DictWriter(handle, fieldnames=list(metrics[0]))
                writer.writeheader()
                writer.writerows(metrics)
            print(f"recorded {target}")


if __name__ == "__main__":
    if sys.argv[1:2] != ["--record"]:
        sys.exit("usage: python -m tests.test_golden_runs --record [NAME ...]")
    record(sys.argv[2:])
