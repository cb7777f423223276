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


def test_tensorboard_holds_every_logged_scalar_at_its_step(tmp_path):
    """Each step's scalars go as one event; TensorBoard reads back what the CSV files hold, two episodes ending at
    the same step included."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    logger = RunLogger(tmp_path, {})
    logger.log_episodes([5, 10, 10], [1.0, 2.5, -3.0], [5, 4, 7])
    logger.log_metrics(10, {"train/a": 0.25, "time/sps": 100})
    logger.log_metrics(20, {"train/a": -1.5, "time/sps": 200})
    logger.close()
    events = EventAccumulator(str(tmp_path / "tensorboard"), size_guidance={"scalars": 0})
    events.Reload()
    assert set(events.Tags()["scalars"]) == {"rollout/episode_return", "rollout/episode_length", "train/a", "time/sps"}
    read = {tag: [(scalar.step, scalar.value) for scalar in events.Scalars(tag)] for tag in events.Tags()["scalars"]}
    assert read == {"rollout/episode_return": [(5, 1.0), (10, 2.5), (10, -3.0)], "rollout/episode_length": [(5, 5), (10, 4), (10, 7)],
                    "train/a": [(10, 0.25), (20, -1.5)], "time/sps": [(10, 100), (20, 200)]}
