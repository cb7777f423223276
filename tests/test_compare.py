"""voidrl compare: a table and a plot from pre-trained and scratch runs."""

import subprocess
import sys

import numpy as np

from voidrl.io.report import mean_and_interval


def test_interval_matches_the_t_formula():
    values = np.array([[1.0], [2.0], [4.0]])
    mean, std, half = mean_and_interval(values)
    assert mean[0] == 7 / 3
    assert np.isclose(std[0], np.std([1, 2, 4], ddof=1))
    assert np.isclose(half[0], 4.303 * std[0] / np.sqrt(3))


def test_compare_on_minatar_writes_table_and_plot(tmp_path):
    common = ["--num-envs", "4", "--num-steps", "32", "--policy-iterations", "2", "--no-progress"]
    pre = subprocess.run([sys.executable, "-m", "voidrl", "pretrain", "ppg", "--env", "MinAtar/Breakout-v1", "--steps", "256",
                          "--contrastive-start", "64", "--contrastive-batch-size", "16", "--run-dir", "pre", *common],
                         cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert pre.returncode == 0, pre.stderr
    args = [sys.executable, "-m", "voidrl", "compare", "ppg", "--from", "pre/checkpoint.pt", "--seeds", "2",
            "--steps", "1024", "--run-dir", "cmp", *common]
    result = subprocess.run(args, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    assert "| pre-trained | 2 |" in result.stdout and "| scratch | 2 |" in result.stdout
    assert (tmp_path / "cmp" / "comparison.png").stat().st_size > 1000
    assert (tmp_path / "cmp" / "scratch" / "seed1" / "episodes.csv").exists()
    again = subprocess.run(args, cwd=tmp_path, capture_output=True, text=True, timeout=600)  # finished runs are reused
    assert again.returncode == 0 and again.stdout == result.stdout
