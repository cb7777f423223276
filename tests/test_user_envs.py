"""Environments voidrl did not write (tests/user_envs.py): any Gymnasium id, the ``module:`` forms, classes and functions
from Python, the spaces voidrl adapts for its networks, environments that break mid-run, exact resume through the
episode-state protocol, ``--vector async``, ``voidrl check-env``; and voidrl's variants as Gymnasium environments."""

from __future__ import annotations

import functools
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
import torch

import voidrl
from tests import user_envs
from tests.test_exact_resume import assert_same_run, signal_at_vector_step
from voidrl.cli import main
from voidrl.envs import EnvConfig, UnknownEnvironment, list_env_ids, make_env, suite_of
from voidrl.envs.failure import EnvironmentFailure
from voidrl.envs.gym_backend import UnsupportedSpace, UserSpaces
from voidrl.envs.variants import VARIANTS
from voidrl.io.checkpoint import load_checkpoint
from voidrl.nets.actor_critic import MASKED_LOGIT
from voidrl.nets.distributions import MultiCategorical, kl_divergence
from voidrl.training.signals import RunAborted

ROOT = Path(__file__).resolve().parents[1]
SMALL = {"num_envs": 4, "num_steps": 32, "progress": False, "torch_threads": 1}
"""A PPO run of a few updates."""


def run_cli(*args, cwd):
    """``voidrl ARGS`` in a new process that can import ``tests.user_envs``."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "voidrl", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def test_voidrls_variants_are_gymnasium_environments():
    for variant_id in VARIANTS:
        assert variant_id in gym.registry
    hidden, full = gym.make("voidrl/CartPoleNoVelocity-v1"), gym.make("CartPole-v1")
    obs, _ = hidden.reset(seed=3)
    assert hidden.observation_space.shape == (2,) and np.array_equal(obs, full.reset(seed=3)[0][[0, 2]])
    assert gym.make("voidrl/HalfCheetah500-v5").spec.max_episode_steps == 500
    pendulum = gym.make("voidrl/InvertedPendulumFall-v5")
    pendulum.reset(seed=0)
    rewards = []
    while True:
        _, reward, terminated, truncated, info = pendulum.step(np.array([3.0], np.float32))
        rewards.append(reward)
        if terminated or truncated:
            break
    assert terminated and rewards[-1] == -1.0 and set(rewards[:-1]) == {0.0} and "task_reward" in info


def test_any_gymnasium_id_and_the_module_forms_name_an_environment():
    assert suite_of("FrozenLake-v1") == "gymnasium" and suite_of("Blackjack-v1") == "gymnasium"  # not Atari's Blackjack
    assert suite_of("tests.user_envs:UserCorridor-v0") == "gymnasium"  # gymnasium's module:Env-vN
    assert suite_of("tests.user_envs:Corridor") == "gymnasium"  # a class by module:qualname
    assert suite_of("CartPole-v1") == "classic" and suite_of("ALE/Pong-v5") == "atari" and suite_of("pong") == "atari"
    with pytest.raises(UnknownEnvironment, match="module 'no_such_module' cannot be imported"):
        suite_of("no_such_module:Thing-v0")
    with pytest.raises(UnknownEnvironment, match="no environment class or function of that name"):
        suite_of("tests.user_envs:Nothing-v0")
    with pytest.raises(UnknownEnvironment, match="unknown environment id 'Nothing-v0'"):
        suite_of("Nothing-v0")
    with pytest.raises(UnknownEnvironment, match=r"'Taxi-v3' \(gymnasium: .*Please use `Taxi-v4` instead"):
        suite_of("Taxi-v3")  # gymnasium's word on an id it retired, or one a letter off
    with pytest.raises(UnknownEnvironment, match=r"'FrozenLak-v1' \(gymnasium: .*Did you mean: `FrozenLake`"):
        suite_of("FrozenLak-v1")


def test_envs_groups_ids_by_where_they_come_from():
    ids = list_env_ids()
    assert "FrozenLake-v1" in ids["gymnasium/toy_text"] and "LunarLander-v3" in ids["gymnasium/box2d"]
    assert ids["voidrl"] == sorted(VARIANTS) and "CartPole-v1" in ids["classic"]
    assert "UserCorridor-v0" in ids["tests"] and "BrokenNan-v0" in ids["tests"]  # registered when tests.user_envs was imported
    assert not any(env_id.startswith(("phys2d/", "tabular/")) for group in ids.values() for env_id in group)  # JAX-only


def test_an_environment_class_a_function_and_an_id_train_and_the_class_is_found_again_by_a_new_process(tmp_path):
    for env, env_id in [(user_envs.Corridor, "tests.user_envs:Corridor"), (user_envs.make_corridor, "tests.user_envs:make_corridor"),
                        ("tests.user_envs:UserCorridor-v0", "tests.user_envs:UserCorridor-v0")]:
        agent = voidrl.train("ppo", env=env, steps=256, run_dir=str(tmp_path / env_id.replace(":", "-")), **SMALL)
        assert agent.config.run.env == env_id and agent.interface.observation_space.shape == (1,)
    result = run_cli("eval", "--checkpoint", str(tmp_path / "tests.user_envs-Corridor" / "checkpoint.pt"), "--episodes", "2",
                     cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("tests.user_envs:Corridor: mean return")


def test_an_unnamed_environment_is_given_again_to_load(tmp_path):
    agent = voidrl.train("ppo", env=lambda: user_envs.Corridor(), steps=256, run_dir=str(tmp_path / "run"), **SMALL)
    env_id = agent.config.run.env
    assert env_id.startswith("tests.test_user_envs:test_an_unnamed_environment_is_given_again_to_load.locals.lambda-unnamed")
    del gym.registry[env_id]  # as in a new process, which knows no such name
    with pytest.raises(UnknownEnvironment, match=r"give it again: voidrl\.load\(path, env=\.\.\.\)"):
        voidrl.load(str(tmp_path / "run" / "checkpoint.pt")).evaluate(episodes=1)
    assert len(voidrl.load(str(tmp_path / "run" / "checkpoint.pt"), env=user_envs.Corridor).evaluate(episodes=2)) == 2


def test_ray_actors_refuse_an_environment_their_processes_cannot_import_before_anything_is_written(tmp_path):
    class ScriptCorridor(user_envs.Corridor):
        """As a class defined in the script being run."""

    ScriptCorridor.__module__, ScriptCorridor.__qualname__ = "__main__", "ScriptCorridor"
    for env in (lambda: user_envs.Corridor(), ScriptCorridor):
        with pytest.raises(ValueError, match="needs actors 0: Ray actors make their environments in processes of their own"):
            voidrl.train("a3c", env=env, steps=256, actors=2, run_dir=str(tmp_path / "run"), progress=False)
        assert not (tmp_path / "run").exists()


def test_a_ready_vector_env_gives_its_id_size_and_mode_and_an_instance_its_id_where_a_copy_is_the_same(tmp_path):
    vector = gym.make_vec("tests.user_envs:UserCorridor-v0", num_envs=2, vectorization_mode="sync")
    agent = voidrl.train("ppo", env=vector, steps=128, run_dir=str(tmp_path / "run"), num_steps=64, progress=False)
    assert (agent.config.run.env, agent.config.env.num_envs, agent.config.env.vector) == ("tests.user_envs:UserCorridor-v0", 2, "sync")
    made = voidrl.train("ppo", env=gym.make("tests.user_envs:UserCorridor-v0"), steps=128, num_envs=2, num_steps=64,
                        run_dir=str(tmp_path / "made"), progress=False)
    assert made.config.run.env == "tests.user_envs:UserCorridor-v0"
    refusals = [
        (user_envs.Corridor(), "this Corridor instance was not made by gymnasium.make from a registered id"),
        (gym.wrappers.TimeLimit(user_envs.Corridor(), 40), "give the class Corridor, or a function"),  # the user's class
        (gym.make("CartPole-v1", max_episode_steps=100), "made with max_episode_steps 100, which a copy made from the id"),
        (gym.make("FrozenLake-v1", is_slippery=False), "made with arguments {'map_name': '4x4', 'is_slippery': False}"),
        (gym.wrappers.ClipReward(gym.make("CartPole-v1"), -1, 1), "made with wrappers ClipReward"),
    ]
    for env, message in refusals:
        with pytest.raises(ValueError, match=re.escape(message)):
            voidrl.train("ppo", env=env, steps=128, run_dir=str(tmp_path / "other"))
    assert not (tmp_path / "other").exists()
    with pytest.raises(ValueError, match="was made with arguments"):
        voidrl.train("ppo", env=gym.make_vec("FrozenLake-v1", num_envs=2, is_slippery=False), steps=128, run_dir=str(tmp_path / "x"))


def test_spaces_are_adapted_for_the_agent_and_predict_speaks_the_environments_own():
    lights = make_env("tests.user_envs:Lights", EnvConfig(num_envs=2))
    assert lights.single_observation_space.shape == (4 + 3,)  # MultiBinary(4) as it is, Discrete(3) one-hot
    assert lights.single_action_space == gym.spaces.MultiDiscrete([2, 2, 2, 2])
    picture = make_env("tests.user_envs:Picture", EnvConfig(num_envs=2))
    assert picture.single_observation_space.shape == (3, 8, 12) and picture.single_action_space == gym.spaces.Discrete(3)
    picture.reset(0)
    assert picture.step(torch.tensor([0, 2])).reward.tolist() == [-1.0, 1.0]  # the environment's own actions are -1 .. 1
    thermostat = UserSpaces("tests.user_envs:Thermostat")
    assert [thermostat.action(np.array([a], np.float32))[0] for a in (-1.0, 0.0, 1.0)] == [0.0, 25.0, 50.0]
    shifted = UserSpaces("tests.user_envs:" + "Lights")
    batch, single = shifted.observations({"target": np.array([1, 0, 1, 1], np.int8), "step": 2})
    assert single and batch.tolist() == [[0, 0, 1, 1, 0, 1, 1]]  # gymnasium's Dict keeps its keys sorted: step one-hot, then target
    batch, single = shifted.observations([{"target": np.zeros(4, np.int8), "step": 0}] * 3)
    assert not single and batch.shape == (3, 7)
    with pytest.raises(UnsupportedSpace, match=r"observation space Text\(.*\) is not supported; voidrl takes observations: Box"):
        make_env("tests.user_envs:Words", EnvConfig(num_envs=1))


def test_multi_categorical_is_the_product_of_independent_categoricals():
    generator = torch.Generator().manual_seed(0)
    choices = [3, 2, 4]
    missing = torch.arange(4) >= torch.tensor(choices).unsqueeze(1)
    old_logits, new_logits = (torch.randn(5, 3, 4, generator=generator) for _ in range(2))
    old, new = (MultiCategorical(logits.masked_fill(missing, MASKED_LOGIT)) for logits in (old_logits, new_logits))
    references = [[torch.distributions.Categorical(logits=logits[:, d, :n]) for d, n in enumerate(choices)]
                  for logits in (old_logits, new_logits)]
    actions = torch.stack([torch.randint(n, (5,), generator=generator) for n in choices], 1)
    expected_log_prob = sum(reference.log_prob(actions[:, d]) for d, reference in enumerate(references[1]))
    torch.testing.assert_close(new.log_prob(actions), expected_log_prob)
    torch.testing.assert_close(new.entropy(), sum(reference.entropy() for reference in references[1]))
    expected_kl = sum(torch.distributions.kl_divergence(o, n) for o, n in zip(*references))
    torch.testing.assert_close(kl_divergence(old, new), expected_kl)
    samples = torch.stack([new.sample(generator) for _ in range(200)])
    assert samples.shape == (200, 5, 3) and all(int(samples[..., d].max()) == n - 1 for d, n in enumerate(choices))
    assert new.mode().tolist() == torch.stack([r.probs.argmax(-1) for r in references[1]], 1).tolist()


@pytest.mark.slow
def test_ppo_learns_a_dict_observation_multibinary_task(tmp_path):
    """Random lights score 1.5 of 3 an episode; PPO reads the Dict observation and sets them right (3 seeds, each; all
    three at 3.0 here, and 1.4-1.6 with a learning rate of 1e-12)."""
    returns = []
    for seed in range(3):
        agent = voidrl.train("ppo", env=user_envs.Lights, steps=12_288, num_steps=128, seed=seed, progress=False, torch_threads=1,
                             run_dir=str(tmp_path / str(seed)))
        returns.append(float(np.mean(agent.evaluate(episodes=20))))
    assert min(returns) >= 2.6, returns


@pytest.mark.parametrize("fault", [fault for fault in user_envs.FAULTS if fault != "init"])
def test_an_environment_that_fails_mid_run_stops_it_in_one_line_and_the_last_checkpoint_stays(tmp_path, fault):
    env_id = f"tests.user_envs:Broken{fault.title()}-v0"
    with pytest.raises(RunAborted) as raised:
        voidrl.train("ppo", env=env_id, steps=4096, checkpoint_every=1, run_dir=str(tmp_path / "run"), **SMALL)
    message = str(raised.value)
    assert message.startswith(f"environment {env_id} failed in ") and "at run step" in message and "--resume" in message
    checkpoint = load_checkpoint(tmp_path / "run" / "checkpoint.pt")
    assert 0 < checkpoint["step"] < 4 * 40  # the last update's, before the fault at each environment's 40th step
    if fault in ("raise", "reset"):
        assert isinstance(raised.value.__cause__, (ZeroDivisionError, OSError))


def test_the_command_line_shows_the_environments_own_traceback_not_voidrls(tmp_path):
    result = run_cli("train", "ppo", "--env", "tests.user_envs:BrokenRaise-v0", "--steps", "4096", "--num-envs", "4",
                     "--num-steps", "32", "--no-progress", "--run-dir", "run", cwd=tmp_path)
    assert result.returncode == 1
    lines = result.stderr.splitlines()
    assert lines[0] == "Traceback (the environment's own frames):" and "user_envs.py" in lines[1]
    assert lines[-2] == "ZeroDivisionError: division by zero in my physics" and "voidrl/" not in result.stderr.replace("--run-dir", "")
    assert lines[-1].startswith("voidrl: environment tests.user_envs:BrokenRaise-v0 failed in step() at run step 156: ")
    made = run_cli("train", "ppo", "--env", "tests.user_envs:BrokenInit-v0", "--steps", "20000", "--run-dir", "never", cwd=tmp_path)
    assert made.returncode == 1 and made.stderr.splitlines()[-1] == (
        "voidrl: environment tests.user_envs:BrokenInit-v0 failed in its constructor: RuntimeError: cannot open the simulator")
    assert not (tmp_path / "never").exists()


def test_a_python_caller_gets_the_failure_with_its_cause():
    env = make_env("tests.user_envs:BrokenRaise-v0", EnvConfig(num_envs=1))
    env.reset(0)
    with pytest.raises(EnvironmentFailure) as raised:
        for _ in range(40):
            env.step(torch.zeros(1, dtype=torch.long))
    assert isinstance(raised.value.__cause__, ZeroDivisionError) and raised.value.env_id == "tests.user_envs:BrokenRaise-v0"


def test_an_environment_with_the_episode_state_protocol_resumes_exactly(tmp_path, monkeypatch, capsys):
    command = ["train", "ppo", "--env", "tests.user_envs:UserCorridor-v0", "--num-envs", "4", "--num-steps", "32", "--steps", "768",
               "--seed", "3", "--no-progress", "--torch-threads", "1"]
    assert main([*command, "--run-dir", str(tmp_path / "alone")]) == 0
    with monkeypatch.context() as patched:
        signal_at_vector_step(patched, 70)
        assert main([*command, "--run-dir", str(tmp_path / "stopped")]) == 128 + signal.SIGTERM
    assert load_checkpoint(tmp_path / "stopped" / "checkpoint.pt")["episodes"]["env"]["envs"][0]["core"]["episode"]["position"] >= 0
    capsys.readouterr()
    assert main([*command, "--run-dir", str(tmp_path / "stopped"), "--resume"]) == 0
    assert "new episodes" not in capsys.readouterr().err
    assert_same_run(tmp_path / "alone", tmp_path / "stopped")


def test_async_vector_envs_give_the_same_run_as_sync(tmp_path):
    for vector in ("sync", "async"):
        voidrl.train("ppo", env="tests.user_envs:UserCorridor-v0", steps=512, vector=vector, seed=5,
                     run_dir=str(tmp_path / vector), **SMALL)
    assert_same_run(tmp_path / "sync", tmp_path / "async")


def test_check_env_reports_what_voidrl_builds_and_fails_on_a_broken_environment(tmp_path):
    result = run_cli("check-env", "tests.user_envs:Thermostat", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "gymnasium's checker: passed" in result.stdout and "voidrl's checks: passed" in result.stdout
    assert "actions Box(-1.0, 1.0, (1,), float32)" in result.stdout and "--network auto: mlp" in result.stdout
    assert "can train here: a2c, a3c, npg, ppo, reinforce, trpo, --intrinsic rnd" in result.stdout
    assert "not here: r2d2 (r2d2 needs a discrete action space" in result.stdout
    broken = run_cli("check-env", "tests.user_envs:BrokenNan-v0", "--steps", "100", cwd=tmp_path)
    assert broken.returncode == 1 and "FAILED: stepping: environment tests.user_envs:BrokenNan-v0 failed in step(): ValueError: " \
                                       "step returned the reward nan, not a finite number" in broken.stdout


def test_an_algorithm_that_cannot_act_in_a_space_is_refused_before_anything_is_written(tmp_path):
    for algo, options, message in [("r2d2", {}, r"r2d2 needs a discrete action space, got Box\(-1.0, 1.0"),
                                   ("ppo", {"intrinsic": "apt"}, r"apt needs pixel observations \[C, H, W\], got shape \(1,\)")]:
        with pytest.raises(ValueError, match=message):
            voidrl.train(algo, env=functools.partial(user_envs.Thermostat), steps=20000, run_dir=str(tmp_path / algo), **options)
        assert not (tmp_path / algo).exists()


@pytest.mark.slow
def test_eval_with_video_and_export_work_on_a_class_given_from_python(tmp_path):
    """gymnasium's TaxiEnv class as a user passes it: its own rgb_array screens in the video, its one-hot flattened
    observation in the exported file."""
    from gymnasium.envs.toy_text.taxi import TaxiEnv

    voidrl.train("ppo", env=TaxiEnv, steps=256, max_episode_steps=20, run_dir=str(tmp_path / "run"), **SMALL)
    checkpoint = str(tmp_path / "run" / "checkpoint.pt")
    evaluated = run_cli("eval", "--checkpoint", checkpoint, "--episodes", "1", "--video", "video", cwd=tmp_path)
    assert evaluated.returncode == 0, evaluated.stderr
    videos = list((tmp_path / "video").iterdir())
    assert len(videos) == 1 and videos[0].name.startswith("episode-000-return-") and videos[0].stat().st_size > 1000
    exported = run_cli("export", "--checkpoint", checkpoint, "--format", "onnx", "--out", "policy.onnx", cwd=tmp_path)
    assert exported.returncode == 0, exported.stderr
    assert "obs [B, 500] float32 -> action [B] int64" in exported.stdout


@pytest.mark.parametrize("env,message", [
    (":Corridor", "environment ':Corridor': give MODULE:NAME"),
    ("tests.user_envs:", "environment 'tests.user_envs:': give MODULE:NAME"),
    ("failing_env:Env", "importing module 'failing_env' raised RuntimeError: no licence server ({dir}/failing_env.py:2)"),
    ("syntax_env:Env", "importing module 'syntax_env' raised SyntaxError: "),
])
def test_a_module_id_that_cannot_give_an_environment_is_refused_in_one_line(tmp_path, env, message):
    (tmp_path / "failing_env.py").write_text("import os\nraise RuntimeError('no licence server')\n")
    (tmp_path / "syntax_env.py").write_text("def broken(:\n    pass\n")
    for command in (("train", "ppo", "--env", env, "--steps", "1000"), ("check-env", env)):
        result = run_cli(*command, cwd=tmp_path)
        assert result.returncode == 2, result.stderr
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and message.format(dir=tmp_path) in lines[0], result.stderr


def test_a_refused_action_space_is_named_as_the_environment_declared_it(tmp_path):
    result = run_cli("train", "r2d2", "--env", "tests.user_envs:Lights", "--steps", "5000", cwd=tmp_path)
    assert result.returncode == 2
    assert "r2d2 needs a discrete action space, got MultiBinary(4) (drawn as MultiDiscrete([2 2 2 2]))" in result.stderr


def test_a_run_that_fails_before_its_first_checkpoint_says_so_and_the_same_command_takes_its_directory_over(tmp_path, capsys):
    run_dir = str(tmp_path / "run")
    with pytest.raises(RunAborted, match="the run stopped before its first checkpoint; once the environment is mended, run "
                                         r"the same command again \(it takes the directory over\)"):
        voidrl.train("ppo", env="tests.user_envs:BrokenRaise-v0", steps=4096, checkpoint_every=1000, run_dir=run_dir, **SMALL)
    assert (tmp_path / "run" / "config.json").exists() and not (tmp_path / "run" / "checkpoint.pt").exists()
    capsys.readouterr()
    voidrl.train("ppo", env="tests.user_envs:Corridor", steps=256, run_dir=run_dir, **SMALL)  # the mended environment
    assert "(its run stopped before the first one); starting the run over" in capsys.readouterr().err
    assert load_checkpoint(tmp_path / "run" / "checkpoint.pt")["step"] == 256
    rows = (tmp_path / "run" / "metrics.csv").read_text().splitlines()
    assert rows[0].startswith("step,") and [row.split(",")[0] for row in rows[1:]] == ["128", "256"]
    with pytest.raises(ValueError, match="already holds a run"):  # a checkpointed run is never taken over
        voidrl.train("ppo", env="tests.user_envs:Corridor", steps=256, run_dir=run_dir, **SMALL)


def test_a_run_of_a_class_defined_in_a_script_says_how_to_give_it_again_when_resumed_elsewhere(tmp_path):
    (tmp_path / "script.py").write_text(
        "import voidrl\nfrom tests.user_envs import Corridor\n\n\nclass MyCorridor(Corridor):\n    pass\n\n\n"
        "if __name__ == '__main__':\n"
        "    voidrl.train('ppo', env=MyCorridor, steps=256, num_envs=2, num_steps=64, run_dir='run', progress=False)\n")
    made = subprocess.run([sys.executable, "script.py"], cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)},
                          capture_output=True, text=True, timeout=300)
    assert made.returncode == 0, made.stderr
    resumed = run_cli("train", "ppo", "--resume", "--run-dir", "run", "--steps", "512", cwd=tmp_path)
    assert resumed.returncode == 2
    assert resumed.stderr.strip() == (
        "voidrl: error: environment '__main__:MyCorridor' was defined in the script that started the run, which this process "
        "is not; give it again from Python: voidrl.train(..., env=<the class or function>, resume=True), voidrl.load(path, "
        "env=...), or move it into a module and give MODULE:NAME")


def test_an_environment_failing_in_an_async_worker_is_told_in_one_line_with_how_to_see_its_traceback(tmp_path):
    result = run_cli("train", "ppo", "--env", "tests.user_envs:BrokenRaise-v0", "--vector", "async", "--num-envs", "2",
                     "--num-steps", "32", "--steps", "4096", "--no-progress", "--run-dir", "run", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        "voidrl: environment tests.user_envs:BrokenRaise-v0 failed in step() (in a --vector async worker; --vector sync shows "
        "its traceback) at run step 78: ZeroDivisionError: division by zero in my physics; the run stopped before its first "
        "checkpoint; once the environment is mended, run the same command again (it takes the directory over)"]


def test_stable_baselines3s_evaluate_policy_takes_the_agents_environment_and_gives_the_mean_and_std(tmp_path):
    agent = voidrl.train("ppo", env="CartPole-v1", steps=512, num_envs=2, num_steps=128, run_dir=str(tmp_path / "run"),
                         progress=False)
    returns = agent.evaluate(4)
    mean, std = voidrl.evaluate_policy(agent, gym.make("CartPole-v1"), n_eval_episodes=4)
    assert (mean, std) == pytest.approx((np.mean(returns), np.std(returns)))
    with pytest.raises(ValueError, match="got the environment .*voidrl.evaluate_policy\\(agent, env, episodes\\)"):
        agent.evaluate(gym.make("CartPole-v1"))
    with pytest.raises(ValueError, match="this agent was trained on CartPole-v1; evaluate it there, not on Acrobot-v1"):
        voidrl.evaluate_policy(agent, "Acrobot-v1")
