"""Run logs: metric columns that appear late, truncation on resume."""

import csv

from voidrl.io.logger import RunLogger


def rows(path):
    with open(path, newline="") as handle:
        return list(csv.reader(handle))


def test_a_metric_first_seen_later_gets_its_column(tmp_path):
    logger = RunLogger(tmp_path, {})
    logger.log_metrics(10, {"train/a": 1.0})
    logger.log_metrics(20, {"train/a": 2.0, "rollout/recent_return_mean": 5.0})
    logger.close()
    assert rows(tmp_path / "metrics.csv") == [
        ["step", "train/a", "rollout/recent_return_mean"], ["10", "1", ""], ["20", "2", "5"]]


def test_resume_drops_rows_after_the_checkpoint_step(tmp_path):
    logger = RunLogger(tmp_path, {})
    logger.log_episodes([5, 10, 15], [1.0, 2.0, 3.0], [5, 5, 5])
    for step in (8, 16):
        logger.log_metrics(step, {"train/a": float(step)})
    logger.close()
    logger = RunLogger(tmp_path, {}, resume_step=10)
    logger.log_episodes([12], [4.0], [2])
    logger.log_metrics(16, {"train/a": 99.0})
    logger.close()
    assert [r[0] for r in rows(tmp_path / "episodes.csv")] == ["step", "5", "10", "12"]
    assert rows(tmp_path / "metrics.csv") == [["step", "train/a"], ["8", "8"], ["16", "99"]]
