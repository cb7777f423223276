"""The small interface through which an algorithm plugs into the training loop."""

from __future__ import annotations

from typing import Any, ClassVar, Protocol

import gymnasium as gym
import torch

from voidrl.nets.actor_critic import ActorCritic
from voidrl.rollout.storage import RolloutStorage


class Algorithm(Protocol):
    """An on-policy learner.

    The loop builds it with ``Algo(config, obs_shape, action_space, device)``, reads
    ``policy`` to act and ``num_steps`` to size rollouts, and calls ``update`` on each
    filled rollout with ``progress`` in [0, 1) (fraction of the step budget already
    spent, for schedules). ``update`` returns metrics named ``train/...``.
    """

    config_class: ClassVar[type]
    policy: ActorCritic
    num_steps: int

    @staticmethod
    def make_policy(config: Any, obs_shape: tuple[int, ...], action_space: gym.Space, device: torch.device | str) -> ActorCritic:
        """The untrained network this algorithm acts with (also used to load saved agents)."""
        ...

    def update(self, rollout: RolloutStorage, progress: float) -> dict[str, float]: ...

    def state_dict(self) -> dict[str, Any]: ...

    def load_state_dict(self, state: dict[str, Any]) -> None: ...


def require_positive_integers(config: Any, names: tuple[str, ...]) -> None:
    for name in names:
        if getattr(config, name) < 1:
            raise ValueError(f"{name} must be a positive integer, got {getattr(config, name)}")


def require_positive(config: Any, names: tuple[str, ...]) -> None:
    """Each named field must be > 0; a field that is None (option off) passes."""
    for name in names:
        value = getattr(config, name)
        if value is not None and value <= 0:
            raise ValueError(f"{name} must be positive, got {value}")


def validate_fraction(name: str, value: float, low: float = 0.0, high: float = 1.0) -> None:
    if not low < value < high:
        raise ValueError(f"{name} must lie in ({low:g}, {high:g}), got {value}")




def make_adam(flat: torch.nn.Parameter, learning_rate: float, eps: float) -> torch.optim.Adam:
    """Adam over one flat parameter (see ``FlatParameters``), fused into one kernel where torch can."""
    return torch.optim.Adam([flat], lr=learning_rate, eps=eps, fused=flat.device.type in ("cpu", "cuda"))
