"""Callbacks (``voidrl.train(..., callbacks=[...])``) on CartPole at a few thousand steps: what they are called with and
when, a stop that leaves a checkpoint at its step which ``resume=True`` continues, the ready ones, and the refusals
made before a run writes anything."""

import csv

import pytest

import voidrl
from voidrl.callbacks import Callback, KeepBest, LogTo, StopOnReturn
from voidrl.io.checkpoint import load_checkpoint

SMALL = {"env": "CartPole-v1", "num_steps": 64, "torch_threads": 1, "progress": False}
"""The cartpole preset's 8 environments x 64 steps: 512 steps per update."""


def read_rows(path):
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


class Recorder(Callback):
    """Each call as ``(method, step, metric names)``."""

    def __init__(self):
        self.calls = []

    def on_rollout(self, step, metrics):
        self.calls.append(("on_rollout", step, set(metrics)))

    def on_update(self, step, metrics):
        self.calls.append(("on_update", step, set(metrics)))

    def on_evaluation(self, step, metrics):
        self.calls.append(("on_evaluation", step, set(metrics)))


class StopAt(Callback):
    """Asks to stop after the update that reaches ``step``."""

    def __init__(self, step):
        self.step = step

    def on_update(self, step, metrics):
        return False if step >= self.step else None


def test_callbacks_are_called_after_each_update_and_evaluation_with_the_logged_metrics(tmp_path):
    recorder, sunk = Recorder(), []
    voidrl.train("ppo", steps=2048, eval_every=1024, eval_episodes=2, run_dir=str(tmp_path / "run"),
                 callbacks=[recorder, LogTo(lambda step, metrics: sunk.append((step, set(metrics))))], **SMALL)
    expected = []
    for step in (512, 1024, 1536, 2048):
        expected += [("on_rollout", step), ("on_update", step)] + ([("on_evaluation", step)] if step % 1024 == 0 else [])
    assert [(method, step) for method, step, _ in recorder.calls] == expected
    names = {method: set().union(*(metrics for called, _, metrics in recorder.calls if called == method))
             for method in ("on_rollout", "on_update", "on_evaluation")}
    assert "rollout/recent_return_mean" in names["on_rollout"] and all(name.startswith("rollout/") for name in names["on_rollout"])
    assert {"train/policy_loss", "train/entropy", "time/sps"} <= names["on_update"]
    assert not any(name.startswith(("rollout/", "eval/")) for name in names["on_update"])
    assert names["on_evaluation"] == {"eval/return_mean", "eval/return_std"}
    logged = set(read_rows(tmp_path / "run" / "metrics.csv")[0]) - {"step"}
    assert set().union(*names.values()) == logged
    assert sunk == [(step, metrics) for _, step, metrics in recorder.calls]


def test_a_callback_stops_the_run_with_a_checkpoint_at_its_step_and_resume_continues(tmp_path, capsys):
    run_dir = tmp_path / "run"
    agent = voidrl.train("ppo", steps=3072, checkpoint_every=100, run_dir=str(run_dir), callbacks=[StopAt(1024)], **SMALL)
    assert agent.step == 1024
    assert load_checkpoint(run_dir / "checkpoint.pt")["step"] == 1024  # the stop's checkpoint: none was due before 3072
    said = capsys.readouterr().err
    assert "StopAt.on_update asked to stop at step 1024; checkpoint written" in said and "resume=True" in said
    resumed = voidrl.train("ppo", run_dir=str(run_dir), resume=True)  # the stored settings, the budget of 3072 included
    assert resumed.step == 3072
    assert [int(row["step"]) for row in read_rows(run_dir / "metrics.csv")] == [512, 1024, 1536, 2048, 2560, 3072]


def test_stop_on_return_watches_the_evaluations_or_the_training_episodes(tmp_path):
    by_evaluation = voidrl.train("ppo", steps=3072, eval_every=1024, eval_episodes=2, run_dir=str(tmp_path / "eval"),
                                 callbacks=[StopOnReturn(1.0)], **SMALL)
    assert by_evaluation.step == 1024  # every CartPole episode returns 1 or more
    by_training = voidrl.train("ppo", steps=3072, run_dir=str(tmp_path / "training"), callbacks=[StopOnReturn(1.0, training=True)],
                               **SMALL)
    assert by_training.step == 512


def test_keep_best_writes_the_agent_of_the_best_evaluation_as_a_loadable_file(tmp_path):
    keep = KeepBest(tmp_path / "kept" / "agent.pt")
    voidrl.train("ppo", steps=1536, eval_every=512, eval_episodes=2, run_dir=str(tmp_path / "run"), callbacks=[keep], **SMALL)
    evaluations = read_rows(tmp_path / "run" / "evaluations.csv")
    best = max(evaluations, key=lambda row: float(row["return_mean"]))  # the first of equal scores
    assert (keep.best_step, keep.best_return) == (int(best["step"]), float(best["return_mean"]))
    agent = voidrl.load(str(tmp_path / "kept" / "agent.pt"))
    assert agent.step == keep.best_step and len(agent.evaluate(episodes=2)) == 2


@pytest.mark.parametrize("callback,error,message", [
    (StopOnReturn(100.0), ValueError, "StopOnReturn watches the evaluations, and this run makes none: give eval_every"),
    (KeepBest("best.pt"), ValueError, "KeepBest watches the evaluations"),
    (print, TypeError, "callbacks must be voidrl.callbacks.Callback objects, got <built-in function print>"),
])
def test_a_callback_that_cannot_serve_the_run_is_refused_before_it_writes(tmp_path, callback, error, message):
    with pytest.raises(error, match=message):
        voidrl.train("ppo", steps=512, run_dir=str(tmp_path / "run"), callbacks=[callback], **SMALL)
    assert not (tmp_path / "run").exists()
