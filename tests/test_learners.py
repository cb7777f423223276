"""Replay-based learners fit without touching the loop, the config or the CLI: a toy one written here,
registered, and trained, evaluated, resumed and refused through the command line."""

from __future__ import annotations

import csv
from collections import Counter
from dataclasses import dataclass

import pytest
import torch
from torch import nn

from voidrl.algos.learner import ReplayLearner
from voidrl.cli import main
from voidrl.configs.base import AlgorithmConfig
from voidrl.io.checkpoint import load_checkpoint
from voidrl.nets.actor_critic import LSTMState
from voidrl.registry import ALGORITHMS


@dataclass
class ToyQConfig(AlgorithmConfig):
    """Options of the toy learner."""

    num_steps: int = 16
    """Vector steps per chunk of experience."""
    batch_size: int = 64
    """Replayed transitions per gradient step."""
    gamma: float = 0.99
    """Discount of the one-step target."""

    def validate(self) -> None:
        if self.batch_size < 1:
            raise ValueError(f"batch_size must be a positive integer, got {self.batch_size}")


class GreedyQ(nn.Linear):
    """Greedy on its Q-values, remembering nothing: its state is empty, as a feed-forward actor-critic's."""

    def initial_state(self, batch: int) -> LSTMState:
        return LSTMState(torch.zeros(batch, 0, 0), torch.zeros(batch, 0, 0))

    def act(self, obs, state, episode_starts, previous_reward):
        return self(obs).argmax(-1), state


class ToyQ(ReplayLearner):
    """epsilon-greedy one-step Q-learning from a replay of every transition; the recurrent state
    counts each environment's steps into its episode."""

    config_class = ToyQConfig

    def __init__(self, config: ToyQConfig, obs_shape, action_space, device="cpu"):
        config.validate()
        self.config, self.num_steps = config, config.num_steps
        self.policy = self.make_policy(config, obs_shape, action_space, device)
        self.optimizer = torch.optim.Adam(self.policy.parameters(), lr=1e-2)
        self.replay, self.longest_episode = [], 0

    @staticmethod
    def make_policy(config, obs_shape, action_space, device):
        return GreedyQ(obs_shape[0], action_space.n).to(device)

    def initial_state(self, num_envs):
        return torch.zeros(num_envs, dtype=torch.long)

    def act(self, obs, state, episode_starts, previous_reward):
        state = torch.where(episode_starts, 0, state) + 1
        self.longest_episode = max(self.longest_episode, int(state.max()))
        explore = torch.rand(len(obs)) < 0.1
        return torch.where(explore, torch.randint(self.policy.out_features, (len(obs),)), self.policy(obs).argmax(-1)), state

    def observe(self, chunk):
        fields = (chunk.obs, chunk.actions, chunk.training_rewards(), chunk.next_obs(0, chunk.num_steps), chunk.terminated)
        self.replay += list(zip(*(field.flatten(0, 1).clone() for field in fields)))

    def train_steps(self, progress):
        obs, actions, rewards, next_obs, terminated = map(torch.stack, zip(*(
            self.replay[i] for i in torch.randint(len(self.replay), (self.config.batch_size,)))))
        with torch.no_grad():
            target = rewards + self.config.gamma * ~terminated * self.policy(next_obs).max(-1).values
        loss = (self.policy(obs).gather(1, actions[:, None]).squeeze(1) - target).pow(2).mean()
        self.optimizer.zero_grad(), loss.backward(), self.optimizer.step()
        return {"train/td_loss": loss.item(), "train/replay_size": float(len(self.replay))}

    def state_dict(self):
        return {"policy": self.policy.state_dict(), "optimizer": self.optimizer.state_dict(),
                "replay": [torch.stack(field) for field in zip(*self.replay)]}

    def load_state_dict(self, state):
        self.policy.load_state_dict(state["policy"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.replay = list(zip(*state["replay"]))


@pytest.fixture
def registered(monkeypatch):
    monkeypatch.setitem(ALGORITHMS, "toyq", ToyQ)


def train(run_dir, *extra):
    return main(["train", "toyq", "--env", "CartPole-v1", "--steps", "1024", "--num-envs", "4", "--torch-threads", "1",
                 "--no-progress", "--run-dir", str(run_dir), *extra])


def test_a_registered_replay_learner_trains_evaluates_checkpoints_and_resumes(registered, tmp_path):
    assert train(tmp_path / "run", "--batch-size", "32", "--eval-every", "512", "--eval-episodes", "2",
                 "--checkpoint-every", "1") == 0
    rows = list(csv.DictReader((tmp_path / "run" / "metrics.csv").open()))
    assert len(rows) == 1024 // (16 * 4) and float(rows[-1]["train/replay_size"]) == 1024
    assert all(float(row["train/td_loss"]) >= 0 for row in rows)
    assert (tmp_path / "run" / "evaluations.csv").exists()
    saved = load_checkpoint(tmp_path / "run" / "checkpoint.pt")
    assert saved["config"]["algo_config"] == {"num_steps": 16, "batch_size": 32, "gamma": 0.99}
    assert len(saved["algorithm"]["replay"][0]) == 1024
    assert train(tmp_path / "run", "--batch-size", "32", "--eval-every", "512", "--eval-episodes", "2",
                 "--steps", "2048", "--resume") == 0
    assert len(load_checkpoint(tmp_path / "run" / "checkpoint.pt")["algorithm"]["replay"][0]) == 2048


def test_the_recurrent_state_restarts_exactly_where_episodes_end(registered, tmp_path, monkeypatch):
    states, previous_rewards = [], []
    act = ToyQ.act
    monkeypatch.setattr(ToyQ, "act", lambda self, obs, state, start, reward: previous_rewards.append(reward) or states.append(
        act(self, obs, state, start, reward)[1]) or (torch.zeros(len(obs), dtype=torch.long), states[-1]))
    assert train(tmp_path / "run", "--steps", "2048") == 0
    counts = torch.stack(states)  # [vector steps, N]: each env's steps into its episode
    assert torch.equal(torch.stack(previous_rewards), (counts > 1).float())  # CartPole pays 1 a step; 0 at a start
    ended = counts[:-1][counts[1:] == 1]  # the count just before one restarts: a finished episode's length
    episodes = list(csv.DictReader((tmp_path / "run" / "episodes.csv").open()))
    restarts, logged = Counter(ended.tolist()), Counter(int(row["length"]) for row in episodes)
    assert not restarts - logged and len(episodes) > 100  # every restart follows a logged episode of that length
    ended_last = logged - restarts  # episodes that ended on the run's last step: no act came after them
    assert sum(ended_last.values()) <= 4 and all(length in counts[-1].tolist() for length in ended_last)


def test_a_registered_learners_options_are_checked_before_anything_is_written(registered, tmp_path, capsys):
    assert train(tmp_path / "a", "--batch-size", "0") == 2
    assert "batch_size must be a positive integer, got 0" in capsys.readouterr().err
    assert not (tmp_path / "a").exists()
