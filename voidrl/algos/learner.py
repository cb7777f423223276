"""Learners that own their data: replay-based agents (R2D2 and its family) beside the on-policy ones.

The loop is the same for both: it steps the environments for ``num_steps`` vector steps, lets
the reward plug-in add its rewards, and calls ``update``. An on-policy algorithm learns from
that rollout and forgets it; a ``ReplayLearner`` acts through ``act`` with a recurrent state of
its own, keeps what it wants of each chunk in ``observe`` (a replay memory) and takes the
gradient steps the experience so far allows in ``train_steps``.
"""

from __future__ import annotations

from abc import abstractmethod
from typing import Any, Callable

import gymnasium as gym
import torch
from torch import nn

from voidrl.algos.algorithm import Algorithm
from voidrl.nets.persistence import PersistentUniforms
from voidrl.envs.base import Step
from voidrl.rollout.storage import RolloutStorage


class ReplayLearner(Algorithm):
    """A learner that decides what to remember and when to train.

    ``policy`` is what a saved agent acts with (evaluation, ``voidrl eval``): a module with
    ``act(obs, deterministic) -> actions``, or, if it has a memory, ``initial_state(N)`` and greedy
    ``act(obs, state, episode_start, previous_reward) -> (actions, state)``; rebuilt by
    ``make_policy`` and restored from ``state_dict()["policy"]``.
    """


    @staticmethod
    @abstractmethod
    def make_policy(config: Any, obs_shape: tuple[int, ...], action_space: gym.Space, device: torch.device | str) -> nn.Module:
        """The untrained acting network (also used to load saved agents)."""

    def initial_state(self, num_envs: int) -> Any:
        """The recurrent state of ``num_envs`` fresh episodes (None: a feed-forward learner)."""
        return None

    @abstractmethod
    def act(self, obs: torch.Tensor, state: Any, episode_start: torch.Tensor, previous_reward: torch.Tensor) -> tuple[torch.Tensor, Any]:
        """Actions ``[N, ...]`` for ``obs [N, ...]`` and the next recurrent state; ``episode_start [N]``
        (bool) marks the environments whose episode begins at ``obs`` (their state must be reset);
        ``previous_reward [N]`` is each environment's last reward (0 where an episode begins)."""

    def after_step(self, step: Step) -> None:
        """Each vector step's outcome as the acting side sees it (NGU's bandits read finished episodes'
        returns here); nothing by default."""

    @abstractmethod
    def observe(self, chunk: RolloutStorage) -> None:
        """Take in one chunk of experience: ``obs``, ``actions``, ``training_rewards()``, ``terminated``,
        ``truncated`` ``[T, N, ...]``, ``final_obs`` where episodes ended and ``last_obs``. The storage
        is reused for the next chunk, so keep copies."""

    @abstractmethod
    def train_steps(self, progress: float) -> dict[str, float]:
        """The gradient steps due after the experience observed so far; ``progress`` in [0, 1) is the
        fraction of the step budget spent. Returns metrics named ``train/...``."""

    def update(self, rollout: RolloutStorage, progress: float) -> dict[str, float]:
        """The loop's call after each chunk: observe it, then train."""
        self.observe(rollout)
        return self.train_steps(progress)

    def acting(self, num_envs: int, action_noise: PersistentUniforms | None = None) -> RecurrentActing:
        """How the collector acts for this learner (``action_noise`` is always None: see ``Algorithm.action_noise``)."""
        return RecurrentActing(self, num_envs)

    @abstractmethod
    def state_dict(self) -> dict[str, Any]:
        """Everything needed to resume, the acting network under ``"policy"``."""

    @abstractmethod
    def load_state_dict(self, state: dict[str, Any]) -> None: ...


class Memory:
    """A recurrent state carried across vector steps: ``act(obs, state, episode_start, previous_reward)
    -> (actions, state)`` is called with the state reset where episodes begin and each environment's
    last reward (0 at an episode's start)."""

    def __init__(self, act: Callable[..., tuple[torch.Tensor, Any]], state: Any, num_envs: int):
        self._act, self.state = act, state
        self.episode_start = torch.ones(num_envs, dtype=torch.bool)
        self.previous_reward = torch.zeros(num_envs)

    def act(self, obs: torch.Tensor) -> torch.Tensor:
        action, self.state = self._act(obs, self.state, self.episode_start.to(obs.device), self.previous_reward.to(obs.device))
        return action

    def after_step(self, step: Step) -> None:
        self.episode_start = (step.terminated | step.truncated).cpu()
        self.previous_reward = torch.where(self.episode_start, 0.0, step.reward.float().cpu())


class RecurrentActing:
    """The collector's way of acting for a ``ReplayLearner``: its ``Memory`` of the learner's state."""

    def __init__(self, learner: ReplayLearner, num_envs: int):
        self.learner = learner
        self.num_envs = num_envs
        self.reset()

    def reset(self) -> None:
        self.memory = Memory(self.learner.act, self.learner.initial_state(self.num_envs), self.num_envs)

    def act(self, obs: torch.Tensor, t: int, storage: RolloutStorage) -> torch.Tensor:
        return self.memory.act(obs)

    def after_step(self, step: Step, t: int, storage: RolloutStorage) -> None:
        self.memory.after_step(step)
        self.learner.after_step(step)

    def finish(self, storage: RolloutStorage, last_obs: torch.Tensor) -> None:
        """Nothing to bootstrap: the learner computes its own targets."""
