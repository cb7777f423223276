"""Shared command-line helpers for the tests."""

import subprocess
import sys

SMALL_PPG = ["--num-envs", "4", "--num-steps", "32", "--policy-iterations", "2", "--no-progress"]


def voidrl(*args, cwd, timeout=600):
    return subprocess.run([sys.executable, "-m", "voidrl", *args], cwd=cwd, capture_output=True, text=True, timeout=timeout)


def pretrain_small_minatar(cwd, steps: int, run_dir: str = "pre"):
    """A few-second reward-free PPG + APT run on MinAtar Breakout; asserts it succeeded."""
    result = voidrl("pretrain", "ppg", "--env", "MinAtar/Breakout-v1", "--steps", str(steps), "--contrastive-start", "64",
                    "--contrastive-batch-size", "16", "--run-dir", run_dir, *SMALL_PPG, cwd=cwd)
    assert result.returncode == 0, result.stderr
    return result
