"""voidrl compare: a table and a plot from pre-trained and scratch runs."""

import numpy as np
import pytest

from tests.cli_helpers import SMALL_PPG, pretrain_small_minatar, voidrl
from voidrl.io.report import mean_and_interval


def test_interval_matches_the_t_formula():
    values = np.array([[1.0], [2.0], [4.0]])
    mean, std, half = mean_and_interval(values)
    assert mean[0] == 7 / 3
    assert np.isclose(std[0], np.std([1, 2, 4], ddof=1))
    assert np.isclose(half[0], 4.303 * std[0] / np.sqrt(3), rtol=1e-4)  # t(0.975, 2 dof) = 4.3027


@pytest.mark.slow
def test_compare_on_minatar_writes_table_and_plot(tmp_path):
    pretrain_small_minatar(tmp_path, 256)
    args = ["compare", "ppg", "--from", "pre/checkpoint.pt", "--seeds", "2", "--steps", "1024", "--run-dir", "cmp", *SMALL_PPG]
    result = voidrl(*args, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "| measure | pre-trained (n=2) | scratch (n=2) | pre-trained - scratch | verdict |" in result.stdout
    assert "| AUC (mean return over the budget) |" in result.stdout
    assert (tmp_path / "cmp" / "comparison.png").stat().st_size > 1000
    assert (tmp_path / "cmp" / "scratch" / "seed1" / "episodes.csv").exists()
    again = voidrl(*args, cwd=tmp_path)  # finished runs are reused
    assert again.returncode == 0 and again.stdout == result.stdout


@pytest.mark.slow
def test_runs_side_by_side_match_the_runs_one_after_the_other(tmp_path):
    """--parallel changes where the runs train, not what they learn: every episode is the same."""
    pre = voidrl("train", "ppo", "--steps", "256", "--num-envs", "2", "--num-steps", "128", "--run-dir", "pre",
                 "--no-progress", cwd=tmp_path)
    assert pre.returncode == 0, pre.stderr
    args = ["compare", "ppo", "--from", "pre/checkpoint.pt", "--seeds", "1", "--steps", "768", "--num-envs", "2",
            "--num-steps", "128", "--torch-threads", "1", "--no-progress"]
    for run_dir, parallel in (("one", "1"), ("two", "2")):
        result = voidrl(*args, "--run-dir", run_dir, "--parallel", parallel, cwd=tmp_path)
        assert result.returncode == 0, result.stderr
    for group in ("pretrained", "scratch"):
        one, two = (tmp_path / run_dir / group / "seed0" / "episodes.csv" for run_dir in ("one", "two"))
        assert one.read_text() == two.read_text()
    assert (tmp_path / "one" / "comparison.md").read_text() == (tmp_path / "two" / "comparison.md").read_text()
