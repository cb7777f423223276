"""Exact resume: a run stopped by SIGTERM (during a collection or at its last step) or killed after a checkpoint, then
resumed with --resume, writes the episodes and learning metrics of the same run left alone, because the checkpoint
keeps each environment's episode in progress as plain data (``voidrl.envs.snapshot``). Environments whose state
cannot be saved start new episodes and the resumed run says so in one line; a crafted state is refused."""

from __future__ import annotations

import importlib
import io
import os
import signal
import subprocess
import time

import numpy as np
import pytest
import torch

from tests.cli_helpers import voidrl
from tests.test_cli import VOIDRL
from tests.test_reproducibility import SMALL_PPG, learning_rows
from voidrl.cli import main
from voidrl.config import EnvConfig
from voidrl.envs import make_env
from voidrl.envs.snapshot import NotSaveable, from_plain, to_plain
from voidrl.io.checkpoint import load_checkpoint, save_checkpoint

loop = importlib.import_module("voidrl.training.loop")


def through_a_checkpoint(value):
    """``value`` written and read back as a checkpoint is: ``torch.load(weights_only=True)``."""
    buffer = io.BytesIO()
    torch.save(value, buffer)
    buffer.seek(0)
    return torch.load(buffer, weights_only=True)


def test_plain_data_round_trips_through_a_weights_only_checkpoint():
    random = np.random.RandomState(5)
    random.rand(3)
    value = {"grid": np.arange(6, dtype=np.int16).reshape(2, 3), "flag": np.bool_(True), "x": np.float32(0.25),
             "pairs": [(1, [2, None]), ("a", 3.5)], "random": random, "bits": b"\x00\x01"}
    back = from_plain(through_a_checkpoint(to_plain(value, "env")), "env")
    assert back["grid"].dtype == np.int16 and np.array_equal(back["grid"], value["grid"])
    assert back["flag"].dtype == np.bool_ and back["flag"] and back["x"].dtype == np.float32 and back["x"] == 0.25
    assert back["pairs"] == [(1, [2, None]), ("a", 3.5)] and back["bits"] == b"\x00\x01"
    assert np.array_equal(back["random"].rand(4), random.rand(4))


def test_objects_are_not_saveable_and_crafted_arrays_are_refused():
    with pytest.raises(NotSaveable, match=r"env\.things\[1\]: a set"):
        to_plain({"things": [1, {2}]}, "env")
    with pytest.raises(NotSaveable, match="array of object"):
        to_plain(np.array([object()]), "env")
    saved = to_plain(np.zeros(3), "env")
    for crafted, message in [({**saved, "__ndarray__": "O"}, "not a numeric dtype"), ({**saved, "bytes": b"\x00" * 7}, "damaged array"),
                             ({**saved, "shape": [-3]}, "damaged array"), ({"__random_state__": ("MT19937", 5)}, "damaged random state")]:
        with pytest.raises(ValueError, match=message):
            from_plain(crafted, "env")


@pytest.mark.parametrize("env_id, frame_stack", [
    ("CartPole-v1", 1), ("Acrobot-v1", 1), ("Pendulum-v1", 1), ("MountainCarContinuous-v0", 1), ("MinAtar/Breakout-v1", 2),
    ("MinAtar/Seaquest-v1", 1), ("MinAtar/Asterix-v1", 1), ("MinAtar/SpaceInvaders-v1", 1), ("MinAtar/Freeway-v1", 1)])
def test_environments_built_alike_go_on_identically_from_saved_episodes(env_id, frame_stack):
    config = EnvConfig(num_envs=3, frame_stack=frame_stack)
    played, fresh = make_env(env_id, config), make_env(env_id, config)
    played.reset(1)
    fresh.reset(99)  # another seed: everything that matters comes from the saved state
    space = played.single_action_space
    generator = torch.Generator().manual_seed(0)

    def actions():
        if space.shape:
            return torch.rand((3, *space.shape), generator=generator) * 2 - 1
        return torch.randint(space.n, (3,), generator=generator)

    for _ in range(200):
        played.step(actions())
    fresh.load_episodes_state(through_a_checkpoint(played.episodes_state()))
    ended = 0
    for _ in range(400):
        same_actions = actions()
        first, second = played.step(same_actions), fresh.step(same_actions)
        for field in ("obs", "reward", "terminated", "truncated", "final_obs", "episode_returns", "episode_lengths"):
            assert torch.equal(getattr(first, field), getattr(second, field)), field
        ended += len(first.episode_returns)
    assert ended > 0 or env_id in ("MountainCarContinuous-v0", "MinAtar/Freeway-v1")  # their episodes outlast 600 steps
    played.close()
    fresh.close()


def test_environments_whose_state_cannot_be_saved_say_why():
    minigrid = make_env("MiniGrid-Empty-5x5-v0", EnvConfig(num_envs=2))
    minigrid.reset(0)
    with pytest.raises(NotSaveable, match="environment 0 .*MiniGrid"):
        minigrid.episodes_state()
    minigrid.close()
    atari = make_env("ALE/Pong-v5", EnvConfig(num_envs=2))
    with pytest.raises(NotSaveable, match="AtariVectorEnv.* can neither read nor set its games' states"):
        atari.episodes_state()
    atari.close()


def signal_at_vector_step(monkeypatch, count: int) -> None:
    """The next run sends itself a SIGTERM during its ``count``-th vector step (``GracefulStop`` takes it)."""
    build = loop.make_env

    def make_stopping_env(*args, **kwargs):
        env = build(*args, **kwargs)
        step, taken = env.step, [0]

        def step_and_signal(actions):
            taken[0] += 1
            if taken[0] == count:
                os.kill(os.getpid(), signal.SIGTERM)
            return step(actions)

        env.step = step_and_signal
        return env

    monkeypatch.setattr(loop, "make_env", make_stopping_env)


def assert_same_run(first, second) -> None:
    assert (first / "episodes.csv").read_text() == (second / "episodes.csv").read_text()
    rows = learning_rows(first / "metrics.csv")
    assert rows == learning_rows(second / "metrics.csv") and len(rows) >= 3


CASES = {
    # name: (command, vector step of the signal, step of the checkpoint it writes)
    "ppo-cartpole": (["train", "ppo", "--env", "CartPole-v1", "--num-steps", "64", "--steps", "2048"], 150, 1024),
    "ppo-cartpole-last-step": (["train", "ppo", "--env", "CartPole-v1", "--num-steps", "64", "--steps", "2048"], 128, 512),
    # the schedules' values follow the checkpointed step count
    "ppo-cartpole-schedules": (["train", "ppo", "--env", "CartPole-v1", "--num-steps", "64", "--steps", "2048", "--learning-rate",
                                "lin_1e-3", "--clip", "lin_0.2", "--entropy-coef", "lin_0.01"], 150, 1024),
    "ppo-acrobot": (["train", "ppo", "--env", "Acrobot-v1", "--num-envs", "4", "--num-steps", "32", "--steps", "768"], 70, 256),
    "recurrent-ppo": (["train", "ppo", "--env", "CartPole-v1", "--memory", "lstm", "--lstm-size", "16", "--num-envs", "4",
                       "--num-steps", "32", "--steps", "768"], 70, 256),
    "ppg-minatar": (["train", "ppg", "--env", "MinAtar/Breakout-v1", "--preset", "minatar", "--steps", "1024", *SMALL_PPG], 70, 256),
    "ppg-minatar-critic-warmup": (["train", "ppg", "--env", "MinAtar/Breakout-v1", "--preset", "minatar", "--steps", "1024",
                                   "--critic-warmup-rollouts", "3", *SMALL_PPG], 70, 256),
    "apt-pretrain-minatar": (["pretrain", "ppg", "--env", "MinAtar/Breakout-v1", "--steps", "640", "--contrastive-start", "64",
                              "--contrastive-batch-size", "16", *SMALL_PPG], 70, 256),
    # the buffer's arrivals are checkpointed, and the first step after the resume pairs with the last one stored
    "apt-inverse-dynamics-minatar": (["pretrain", "ppg", "--env", "MinAtar/Breakout-v1", "--steps", "640", "--contrastive-start", "64",
                                      "--contrastive-batch-size", "16", "--inverse-dynamics-coef", "1", *SMALL_PPG], 70, 256),
    "r2d2-save-replay": (["train", "r2d2", "--env", "CartPole-v1", "--preset", "cartpole", "--steps", "1200", "--min-replay", "16",
                          "--lstm-size", "16", "--head-size", "16", "--batch-size", "8", "--save-replay"], 100, 320),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_run_stopped_by_sigterm_and_resumed_is_the_run_left_alone(tmp_path, monkeypatch, capsys, name):
    command, signal_step, checkpoint_step = CASES[name]
    command = [*command, "--seed", "3", "--no-progress", "--torch-threads", "1"]
    assert main([*command, "--run-dir", str(tmp_path / "alone")]) == 0
    with monkeypatch.context() as patched:
        signal_at_vector_step(patched, signal_step)
        assert main([*command, "--run-dir", str(tmp_path / "stopped")]) == 128 + signal.SIGTERM
    assert load_checkpoint(tmp_path / "stopped" / "checkpoint.pt")["step"] == checkpoint_step
    capsys.readouterr()
    assert main([*command, "--run-dir", str(tmp_path / "stopped"), "--resume"]) == 0
    assert "new episodes" not in capsys.readouterr().err
    assert_same_run(tmp_path / "alone", tmp_path / "stopped")


@pytest.mark.slow
def test_a_run_killed_after_a_checkpoint_and_resumed_is_the_run_left_alone(tmp_path):
    command = ["train", "ppo", "--env", "Acrobot-v1", "--num-envs", "4", "--num-steps", "64", "--steps", "2048", "--seed", "3",
               "--no-progress", "--torch-threads", "1", "--checkpoint-every", "2"]
    assert voidrl(*command, "--run-dir", "alone", cwd=tmp_path).returncode == 0
    killed = subprocess.Popen([*VOIDRL, *command, "--run-dir", "killed"], cwd=tmp_path,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    metrics = tmp_path / "killed" / "metrics.csv"
    deadline = time.time() + 120
    while time.time() < deadline and not (metrics.exists() and len(metrics.read_text().splitlines()) >= 4):
        time.sleep(0.02)
    killed.kill()
    killed.wait()
    step = load_checkpoint(tmp_path / "killed" / "checkpoint.pt")["step"]
    assert 0 < step < 2048  # killed between two checkpoints, rows after the last one logged
    assert voidrl(*command, "--run-dir", "killed", "--resume", cwd=tmp_path).returncode == 0
    assert_same_run(tmp_path / "alone", tmp_path / "killed")


def test_episodes_that_cannot_be_saved_start_anew_and_the_resumed_run_says_so(tmp_path, monkeypatch, capsys):
    command = ["train", "ngu", "--env", "MiniGrid-Empty-5x5-v0", "--preset", "minigrid", "--num-envs", "4", "--min-replay", "16",
               "--steps", "640", "--seed", "3", "--no-progress", "--run-dir", str(tmp_path / "run")]
    with monkeypatch.context() as patched:
        signal_at_vector_step(patched, 50)
        assert main(command) == 128 + signal.SIGTERM
    assert load_checkpoint(tmp_path / "run" / "checkpoint.pt")["episodes"] is None
    capsys.readouterr()
    assert main([*command, "--resume"]) == 0
    lines = [line for line in capsys.readouterr().err.splitlines() if "new episodes" in line]
    assert lines == ["voidrl: resuming at step 160: the environments start new episodes (their state could not be saved: "
                     "FamilyCore: what it keeps of the episodes in progress)"]


def test_a_crafted_environment_state_in_a_checkpoint_is_refused(tmp_path, capsys):
    command = ["train", "ppo", "--env", "MinAtar/Breakout-v1", "--preset", "minatar", "--num-envs", "2", "--num-steps", "16",
               "--steps", "32", "--seed", "3", "--no-progress", "--run-dir", str(tmp_path / "run")]
    assert main(command) == 0
    path = tmp_path / "run" / "checkpoint.pt"
    payload = load_checkpoint(path)
    brick_map = payload["episodes"]["env"]["envs"][0]["core"]["game"]["brick_map"]
    brick_map["bytes"] = brick_map["bytes"][:-8]
    save_checkpoint(path, payload)
    capsys.readouterr()
    assert main([*command, "--steps", "64", "--resume"]) == 2
    error = capsys.readouterr().err
    assert "its episodes in progress are damaged (environment 0.game.brick_map: a damaged array" in error, error
    assert load_checkpoint(path)["step"] == 32  # nothing written
