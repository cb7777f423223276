"""Periodic greedy evaluation during training: evaluations.csv, best.pt, resume."""

import csv

import pytest
import torch

import voidrl
from voidrl.config import TrainConfig
from voidrl.io.checkpoint import load_checkpoint, save_checkpoint
from voidrl.training import Agent, train_from_config
from voidrl.training.agent import build_policy_for
from voidrl.training.evaluation import PeriodicEvaluator, evaluation_seed
from voidrl.training.presets import make_config

# The cartpole preset: 8 environments x 32 steps = 256 environment steps per update.
SMALL = {"env": "CartPole-v1", "eval_episodes": 3, "progress": False}


def read_rows(path):
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


def test_evaluations_at_each_crossed_multiple_and_at_the_end_keep_the_best_agent(tmp_path):
    run_dir = tmp_path / "run"
    voidrl.train("ppo", steps=2000, eval_every=700, run_dir=str(run_dir), **SMALL)

    rows = read_rows(run_dir / "evaluations.csv")
    # Updates end at 256, 512, ...: 768 crosses 700, 1536 crosses 1400, 2048 ends training (2100 is never reached).
    assert [int(row["step"]) for row in rows] == [768, 1536, 2048]
    assert [int(row["episodes"]) for row in rows] == [3, 3, 3]
    means = [float(row["return_mean"]) for row in rows]
    metrics = {int(row["step"]): row for row in read_rows(run_dir / "metrics.csv")}
    assert [float(metrics[step]["eval/return_mean"]) for step in (768, 1536, 2048)] == pytest.approx(means, rel=1e-5)
    assert metrics[1024]["eval/return_mean"] == ""

    best_step = [768, 1536, 2048][means.index(max(means))]
    assert load_checkpoint(run_dir / "checkpoint.pt")["evaluation"]["best_return"] == max(means)
    best = Agent.load(run_dir / "best.pt")
    assert best.step == best_step
    # best.pt holds the weights that scored the best mean: the same evaluation again gives the same returns.
    assert sum(best.evaluate(3, seed=evaluation_seed(0, best_step))) / 3 == pytest.approx(max(means))


def test_evaluating_leaves_training_unchanged(tmp_path):
    voidrl.train("ppo", steps=1024, eval_every=256, run_dir=str(tmp_path / "evaluated"), **SMALL)
    voidrl.train("ppo", steps=1024, run_dir=str(tmp_path / "plain"), env="CartPole-v1", progress=False)  # eval_episodes needs eval_every
    assert (tmp_path / "evaluated" / "episodes.csv").read_text() == (tmp_path / "plain" / "episodes.csv").read_text()
    assert not (tmp_path / "plain" / "evaluations.csv").exists() and not (tmp_path / "plain" / "best.pt").exists()


def test_best_return_survives_a_state_dict_round_trip(tmp_path):
    config = make_config("ppo", eval_every=100, **SMALL)
    agent = Agent(config, build_policy_for(config, torch.device("cpu")), {}, step=300)
    evaluator = PeriodicEvaluator(config, tmp_path)
    metrics = evaluator.evaluate(agent)
    assert evaluator.best_return == metrics["eval/return_mean"] > 0
    state = evaluator.state_dict()
    (tmp_path / "best.pt").unlink()

    restored = PeriodicEvaluator(config, tmp_path)
    restored.load_state_dict(state)
    restored.resume_at(300)
    assert restored.best_return == evaluator.best_return
    rewritten = Agent.load(tmp_path / "best.pt")  # rewritten from the state's copy of the weights
    assert rewritten.step == 300
    obs = torch.randn(16, 4)
    assert torch.equal(rewritten.act(obs), agent.act(obs))

    without_weights = PeriodicEvaluator(config, tmp_path)
    without_weights.load_state_dict({"best_return": 7.0})
    without_weights.resume_at(300)
    assert without_weights.best_return == 7.0 and without_weights.best is None
    assert not (tmp_path / "best.pt").exists()  # no stale best agent beside a state that has none


def test_resume_drops_later_evaluations_and_restores_their_best_agent(tmp_path):
    run_dir = tmp_path / "run"
    voidrl.train("ppo", steps=1024, eval_every=512, run_dir=str(run_dir), **SMALL)
    payload = load_checkpoint(run_dir / "checkpoint.pt")
    config = TrainConfig.from_dict(payload["config"])
    # As if killed after an evaluation past the checkpoint that wrote a new best.pt.
    with open(run_dir / "evaluations.csv", "a", newline="") as handle:
        csv.writer(handle).writerow([1280, 999.0, 0.0, 3])
    Agent(config, build_policy_for(config, torch.device("cpu")), payload["env"], step=1280).save(run_dir / "best.pt")

    config.run.steps = 2048
    train_from_config(config, resume=True)
    rows = read_rows(run_dir / "evaluations.csv")
    assert [int(row["step"]) for row in rows] == [512, 1024, 1536, 2048]
    means = [float(row["return_mean"]) for row in rows]
    assert load_checkpoint(run_dir / "checkpoint.pt")["evaluation"]["best_return"] == max(means)
    assert Agent.load(run_dir / "best.pt").step == [512, 1024, 1536, 2048][means.index(max(means))]


def test_resume_from_a_checkpoint_without_evaluation_state(tmp_path):
    run_dir = tmp_path / "run"
    voidrl.train("ppo", steps=512, eval_every=512, run_dir=str(run_dir), **SMALL)
    payload = load_checkpoint(run_dir / "checkpoint.pt")
    del payload["evaluation"], payload["format"]
    save_checkpoint(run_dir / "checkpoint.pt", payload)

    config = TrainConfig.from_dict(payload["config"])
    config.run.steps = 1024
    train_from_config(config, resume=True)
    assert [int(row["step"]) for row in read_rows(run_dir / "evaluations.csv")] == [512, 1024]
    assert "best_return" in load_checkpoint(run_dir / "checkpoint.pt")["evaluation"]


@pytest.mark.parametrize("option,value", [("eval_every", 0), ("eval_episodes", 0)])
def test_non_positive_evaluation_options_are_refused_by_name(option, value):
    with pytest.raises(ValueError, match=f"{option} must be a positive integer"):
        make_config("ppo", **{option: value}).validate()
