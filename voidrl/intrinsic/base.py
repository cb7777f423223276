"""The small interface through which a reward plug-in joins any on-policy algorithm."""

from __future__ import annotations

import inspect
from typing import Any, ClassVar, Protocol

import gymnasium as gym
import torch

from voidrl.rollout.collector import Transition
from voidrl.rollout.storage import RolloutStorage


class RewardSource(Protocol):
    """An intrinsic-reward plug-in.

    The loop builds it with ``Source(config, obs_shape, device)`` (``build_reward_source``: with
    ``action_space=`` the environment's too, where the constructor names that parameter), calls ``on_step`` after every vector
    step (inside the collection, without gradient) and ``intrinsic_rewards`` after every rollout; the
    rewards go to ``rollout.intrinsic_rewards`` and ``reward_coefs`` to ``rollout.reward_coefs``;
    the task rewards are never changed. An algorithm with one value head learns from
    ``rollout.training_rewards()``; one with two heads reads both fields. A plug-in that needs to see
    the environment before training (RND's observation statistics) has ``warm_up(env, seed)``, which
    the loop calls once before a fresh run's first reset.
    """

    config_class: ClassVar[type]

    @property
    def reward_coefs(self) -> tuple[float, float]:
        """The plug-in's (``extrinsic_coef``, ``intrinsic_coef``): the task's and the intrinsic rewards' coefficients
        in the training reward (or, with two value heads, in the advantage)."""
        ...

    def on_step(self, transition: Transition) -> None: ...

    def intrinsic_rewards(self, rollout: RolloutStorage) -> tuple[torch.Tensor, dict[str, float]]:
        """The rollout's intrinsic rewards ``[T, N]`` and metrics named ``<source>/...``."""
        ...

    def state_dict(self) -> dict[str, Any]: ...

    def load_state_dict(self, state: dict[str, Any]) -> None: ...


def build_reward_source(source: type, config: Any, obs_shape: tuple[int, ...], device: torch.device | str,
                        action_space: gym.Space) -> RewardSource:
    """``source(config, obs_shape, device)``, given ``action_space`` too where its constructor takes one (APT's inverse
    dynamics classifies actions; a plug-in written before the parameter existed is built as it was)."""
    if "action_space" in inspect.signature(source).parameters:
        return source(config, obs_shape, device, action_space=action_space)
    return source(config, obs_shape, device)
