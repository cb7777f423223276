"""An off-policy agent written here from the roles alone (actor core, adder, rate-limited replay and its dataset,
learner, builder) trains through the command line in one process and on two Ray actors, without a line of shared
code knowing it: a recurrent (GRU) one-step Q-learner. The agent the loop holds is the shared adapter
(``SequenceAgent``) with this builder; the learner is a ``step`` over the dataset and the loss."""

from __future__ import annotations

import csv
from dataclasses import dataclass

import pytest
import torch
from torch import nn

from voidrl.algos.learner import SequenceAgent
from voidrl.algos.roles import ActorCore, Learner, SequenceBuilder
from voidrl.cli import main
from voidrl.configs.base import AlgorithmConfig
from voidrl.io.checkpoint import load_checkpoint
from voidrl.registry import ALGORITHMS
from voidrl.replay import SequenceReplay
from voidrl.replay.adder import SequenceAdder, StepRecord
from voidrl.replay.rate_limiter import SamplesPerInsert


@dataclass
class RecurrentQConfig(AlgorithmConfig):
    """Options of the toy learner."""

    remote_actors = True

    num_steps: int = 8
    """Vector steps per chunk."""
    sequence_length: int = 8
    """Steps per replayed sequence (sequences do not overlap)."""
    batch_size: int = 16
    """Sequences per gradient step."""
    min_replay: int = 16
    """Sequences stored before learning starts."""
    replay_capacity: int = 1000
    """Sequences kept."""
    samples_per_insert: float = 2.0
    """Times each sequence is replayed."""
    gamma: float = 0.99
    """Discount of the one-step target."""
    epsilon: float = 0.1
    """Exploration rate of every environment."""
    save_replay: bool = False
    """Keep the replay beside the checkpoint."""

    def validate(self) -> None:
        if self.batch_size < 1:
            raise ValueError(f"batch_size must be a positive integer, got {self.batch_size}")


class GRUQ(nn.Module):
    def __init__(self, obs_size: int, num_actions: int):
        super().__init__()
        self.cell, self.q = nn.GRUCell(obs_size, 16), nn.Linear(16, num_actions)

    def initial_state(self, num_envs: int) -> torch.Tensor:
        return torch.zeros(num_envs, 16)

    def step(self, obs: torch.Tensor, hidden: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        hidden = self.cell(obs.float(), hidden)
        return self.q(hidden), hidden

    @torch.no_grad()
    def act(self, obs, state, episode_starts, previous_reward):
        q, state = self.step(obs, torch.where(episode_starts[:, None], 0.0, state))
        return q.argmax(-1), state


class EpsilonGreedyGRU(ActorCore):
    def __init__(self, policy: GRUQ, epsilon: float, first_env: int, total_envs: int | None):
        super().__init__(policy, first_env, total_envs)
        self.epsilon = epsilon

    @torch.no_grad()
    def act(self, obs, state, episode_starts, previous_reward):
        start = torch.where(episode_starts[:, None], 0.0, state)
        q, state = self.policy.step(obs, start)
        greedy, explore = q.argmax(-1), torch.rand(len(obs)) < self.epsilon
        action = torch.where(explore, torch.randint_like(greedy, q.shape[1]), greedy)
        self.records.append(StepRecord((start,), self.epsilon / q.shape[1] + (1 - self.epsilon) * (action == greedy)))
        return action, state


class RecurrentQBuilder(SequenceBuilder):
    def make_policy(self, device):
        return GRUQ(self.obs_shape[0], self.action_space.n).to(device)

    def make_core(self, policy, first_env, total_envs):
        return EpsilonGreedyGRU(policy, self.config.epsilon, first_env, total_envs)

    def make_adder(self):
        return SequenceAdder(self.config.sequence_length, self.config.sequence_length)

    def make_replay(self):
        cfg = self.config
        return SequenceReplay(cfg.replay_capacity, limiter=SamplesPerInsert(cfg.samples_per_insert, cfg.batch_size, cfg.min_replay))

    def make_learner(self, networks, dataset, replay):
        return RecurrentQLearner(self.config, networks, dataset, replay)


class RecurrentQLearner(Learner):
    """One-step Q-learning through a GRU, unrolled over each replayed sequence from its recorded start state."""

    def __init__(self, config, networks, dataset, replay):
        super().__init__(config, networks, dataset, replay)
        self.optimizer = torch.optim.Adam(self.policy.parameters(), lr=3e-3)

    def learn(self, batch):
        (hidden,) = batch.start_state
        q = []
        for obs in batch.obs:  # [L + 1, B, ...]
            values, hidden = self.policy.step(obs, hidden)
            q.append(values)
        q = torch.stack(q)
        taken = q[:-1].gather(-1, batch.actions.unsqueeze(-1)).squeeze(-1)
        target = batch.rewards + self.config.gamma * ~batch.terminated * q[1:].max(-1).values.detach()
        td = (target - taken) * batch.mask
        loss = td.pow(2).sum() / batch.mask.sum()
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        self.replay.update_priorities(batch.keys, td.detach().abs().amax(0))
        self.updates += 1
        return {"train/td_loss": loss.item()}

    def state_dict(self):
        return {"policy": self.policy.state_dict(), "optimizer": self.optimizer.state_dict(), "updates": self.updates}

    def load_state_dict(self, state):
        self.policy.load_state_dict(state["policy"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.updates = state["updates"]


class RecurrentQ(SequenceAgent):
    config_class = RecurrentQConfig
    builder_class = RecurrentQBuilder


@pytest.fixture
def registered(monkeypatch):
    monkeypatch.setitem(ALGORITHMS, "recurrentq", RecurrentQ)


def train(run_dir, *extra):
    return main(["train", "recurrentq", "--env", "CartPole-v1", "--num-envs", "4", "--torch-threads", "1", "--no-progress",
                 "--run-dir", str(run_dir), *extra])


def metric_rows(run_dir):
    return list(csv.DictReader((run_dir / "metrics.csv").open()))


def test_a_toy_agent_from_roles_trains_and_resumes_in_one_process(registered, tmp_path):
    assert train(tmp_path / "run", "--steps", "2048", "--eval-every", "1024", "--eval-episodes", "2") == 0
    rows = metric_rows(tmp_path / "run")
    assert float(rows[-1]["train/updates"]) > 0 and all(float(row["train/replay_size"]) <= 1000 for row in rows)
    # the rate limiter: each sequence stored once 16 are (one chunk brings fewer than 32) replayed twice, in batches of 16
    stored, updates = float(rows[-1]["train/replay_size"]), float(rows[-1]["train/updates"])
    assert (stored - 48) * 2 / 16 - 1 <= updates <= stored * 2 / 16
    assert (tmp_path / "run" / "evaluations.csv").exists()
    assert train(tmp_path / "run", "--steps", "3072", "--resume") == 0
    assert int(load_checkpoint(tmp_path / "run" / "checkpoint.pt")["step"]) == 3072


@pytest.mark.slow
@pytest.mark.xdist_group("ray")
def test_the_same_toy_agent_trains_on_two_ray_actors(registered, tmp_path):
    pytest.importorskip("ray")
    assert train(tmp_path / "run", "--steps", "3072", "--actors", "2", "--checkpoint-every", "4") == 0
    rows = metric_rows(tmp_path / "run")
    assert int(rows[-1]["step"]) >= 3072 and float(rows[-1]["train/updates"]) > 0
    assert float(rows[-1]["time/actor_sps"]) > 0 and float(rows[-1]["train/replay_ratio"]) > 0
    saved = load_checkpoint(tmp_path / "run" / "checkpoint.pt")["algorithm"]
    assert len(saved["actors"]) == 2 and saved["updates"] == float(rows[-1]["train/updates"])
