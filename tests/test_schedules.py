"""Schedules (``voidrl.schedule``): the learning rate, clip range and entropy coefficient take a number,
RL Zoo's ``lin_X`` or, from Python, a function of the remaining progress; every algorithm that has the option reads
its value at each update, a run stores it (a function by name) and resumes with the same values."""

from __future__ import annotations

import csv
import json

import pytest

import voidrl
from voidrl.cli import main
from voidrl.config import TrainConfig
from voidrl.configs.ppo import PPOConfig
from voidrl.schedule import Schedule, parse_schedule, schedule_problem, schedule_value, stored_schedule
from voidrl.training.presets import make_config


def test_values_by_hand():
    assert schedule_value(0.3, 0.0) == schedule_value(0.3, 0.9) == 0.3
    assert schedule_value("lin_0.2", 0.0) == pytest.approx(0.2)
    assert schedule_value("lin_0.2", 0.25) == pytest.approx(0.15)
    assert schedule_value("lin_1e-3", 1.0) == 0.0
    seen = []

    def remaining_squared(remaining):
        seen.append(remaining)
        return remaining**2

    assert schedule_value(remaining_squared, 0.25) == pytest.approx(0.5625)
    assert seen == [0.75]  # Stable-Baselines3's convention: the function takes the progress remaining


def test_the_command_line_takes_numbers_and_lin_and_refuses_the_rest(capsys):
    assert parse_schedule("0.001") == 0.001 and parse_schedule("lin_1e-3") == "lin_1e-3"
    for text in ("lin_", "lin_abc", "exp_0.1", "lin_inf", "linear"):
        with pytest.raises(Exception, match="expected a number or lin_X"):
            parse_schedule(text)
    assert main(["train", "ppo", "--clip", "lin_x", "--steps", "64"]) == 2
    assert "--clip: expected a number or lin_X" in capsys.readouterr().err


@pytest.mark.parametrize("options,message", [
    ({"learning_rate": "lin_-0.1"}, "learning_rate must be positive, got lin_-0.1"),
    ({"clip": "lin_1.5"}, r"clip must lie in \(0, 1\)"),
    ({"entropy_coef": "lin_-1"}, "entropy_coef must be >= 0"),
    ({"learning_rate": "cos_0.1"}, "learning_rate must be a number, 'lin_X'"),
    ({"learning_rate": True}, "learning_rate must be a number, 'lin_X'"),
    ({"learning_rate": lambda remaining: 1 / 0}, "learning_rate: the function given raised ZeroDivisionError"),
    ({"learning_rate": lambda remaining: float("nan")}, "learning_rate: the function given returned nan at remaining progress 1.0"),
    ({"learning_rate": "function:my_schedule"}, "giving learning_rate=<that function> again with resume=True"),
])
def test_bad_schedules_are_refused_by_name(options, message):
    with pytest.raises(ValueError, match=message):
        make_config("ppo", env="CartPole-v1", **options).validate()


def test_only_the_schedulable_options_are_schedules():
    assert PPOConfig.scheduled_fields() == ("learning_rate", "clip", "entropy_coef")
    for algo, fields in {"a2c": ("learning_rate", "entropy_coef"), "reinforce": ("learning_rate", "entropy_coef"),
                         "ppg": ("learning_rate", "clip", "entropy_coef"), "r2d2": ("learning_rate",), "ngu": ("learning_rate",)}.items():
        assert make_config(algo, env="CartPole-v1").algo_config.scheduled_fields() == fields
    with pytest.raises(ValueError, match="gamma must be a float"):
        make_config("ppo", env="CartPole-v1", gamma="lin_0.99").validate()
    with pytest.raises(TypeError):
        Schedule()


def test_a3c_refuses_an_entropy_schedule_its_actor_learners_could_not_follow():
    with pytest.raises(ValueError, match="entropy_coef must be a number for a3c"):
        make_config("a3c", env="CartPole-v1", entropy_coef="lin_0.01").validate()
    make_config("a3c", env="CartPole-v1", learning_rate="lin_7e-4").validate()


def metric_rows(run_dir) -> list[dict[str, str]]:
    with open(run_dir / "metrics.csv") as file:
        return list(csv.DictReader(file))


@pytest.mark.parametrize("algo,options,scheduled", [
    ("ppo", {"num_steps": 32, "epochs": 1}, {"learning_rate": 1e-3, "clip": 0.2, "entropy_coef": 0.01}),
    ("ppg", {"num_steps": 32, "epochs": 1, "policy_iterations": 2, "aux_epochs": 1}, {"learning_rate": 1e-3, "clip": 0.2, "entropy_coef": 0.01}),
    ("a2c", {"num_steps": 32}, {"learning_rate": 1e-3, "entropy_coef": 0.01}),
    ("reinforce", {"num_steps": 32}, {"learning_rate": 1e-3, "entropy_coef": 0.01}),
])
def test_each_update_reads_the_value_at_its_progress(tmp_path, algo, options, scheduled):
    steps = 1024
    voidrl.train(algo, "CartPole-v1", steps=steps, seed=0, num_envs=4, run_dir=str(tmp_path), progress=False,
                         torch_threads=1, **options, **{name: f"lin_{value}" for name, value in scheduled.items()})
    rows = metric_rows(tmp_path)
    assert len(rows) >= 3
    before = 0
    for row in rows:  # an update's progress is the share of the budget spent before its rollout
        for name, start in scheduled.items():
            assert float(row[f"train/{name}"]) == pytest.approx(start * (1 - before / steps), rel=1e-5), (name, row["step"])
        before = int(row["step"])


def test_r2d2_takes_its_learning_rate_schedule(tmp_path):
    steps = 1200
    voidrl.train("r2d2", "CartPole-v1", steps=steps, preset="cartpole", seed=0, run_dir=str(tmp_path), progress=False, torch_threads=1,
                 min_replay=16, lstm_size=16, head_size=16, batch_size=8, learning_rate="lin_1e-3")
    rows = [row for row in metric_rows(tmp_path) if row["train/learning_rate"]]
    assert len(rows) >= 3
    values = [float(row["train/learning_rate"]) for row in rows]
    assert values == sorted(values, reverse=True) and values[0] == 1e-3 and 0 < values[-1] < 1e-3


def constant_then_half(remaining: float) -> float:
    return 1e-3 if remaining > 0.5 else 5e-4


def test_a_function_is_stored_by_name_and_taken_again_on_resume(tmp_path):
    run_dir = str(tmp_path / "run")
    options = {"seed": 1, "num_envs": 2, "num_steps": 32, "epochs": 1, "run_dir": run_dir, "progress": False, "torch_threads": 1}
    voidrl.train("ppo", "CartPole-v1", steps=256, learning_rate=constant_then_half, **options)
    stored = json.loads((tmp_path / "run" / "config.json").read_text())["algo_config"]["learning_rate"]
    assert stored == stored_schedule(constant_then_half) == "function:constant_then_half"
    with pytest.raises(ValueError, match="giving learning_rate=<that function> again with resume=True"):
        voidrl.train("ppo", "CartPole-v1", steps=512, resume=True, **options)
    with pytest.raises(ValueError, match="learning_rate 'function:constant_then_half' -> "):
        voidrl.train("ppo", "CartPole-v1", steps=512, resume=True, learning_rate=lambda remaining: 1e-3, **options)
    voidrl.train("ppo", "CartPole-v1", steps=512, resume=True, learning_rate=constant_then_half, **options)
    values = [float(row["train/learning_rate"]) for row in metric_rows(tmp_path / "run")]
    # remaining progress 1, 0.75, then 0.5 and below, before and after the resume
    assert values == [1e-3, 1e-3] + [5e-4] * 6
    assert len(voidrl.load(tmp_path / "run" / "checkpoint.pt").evaluate(1)) == 1  # acting needs no schedule


def test_a_stored_anneal_lr_loads_as_the_linear_schedule_it_was():
    config = make_config("ppo", env="CartPole-v1")
    stored = config.to_dict()
    stored["algo_config"] |= {"anneal_lr": True, "learning_rate": 0.00025}
    assert TrainConfig.from_dict(stored).algo_config.learning_rate == "lin_0.00025"
    stored["algo_config"]["anneal_lr"] = False
    assert TrainConfig.from_dict(stored).algo_config.learning_rate == 0.00025


def test_the_cartpole_preset_takes_rl_zoos_settings_in_full():
    options = make_config("ppo", env="CartPole-v1").algo_config
    # RL Zoo's hyperparams/ppo.yml, CartPole-v1: n_envs 8, n_steps 32, batch_size 256, gae_lambda 0.8, gamma 0.98,
    # n_epochs 20, ent_coef 0.0, learning_rate lin_0.001, clip_range lin_0.2
    assert (options.num_steps, options.minibatch_size, options.gae_lambda, options.gamma, options.epochs) == (32, 256, 0.8, 0.98, 20)
    assert (options.learning_rate, options.clip, options.entropy_coef) == ("lin_1e-3", "lin_0.2", 0.0)
    assert schedule_problem("clip", options.clip) is None
