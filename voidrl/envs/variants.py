"""voidrl's task variants: a base gymnasium id with another time limit, training reward or observation.

Each is registered with gymnasium when ``voidrl`` is imported (``register_variants``), so that
``gym.make("voidrl/CartPoleNoVelocity-v1")`` builds it like any Gymnasium environment. voidrl's own factory builds
the same tasks from ``VARIANTS`` on its vector backends (``voidrl.envs.factory``). This module imports no torch.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np

NAMESPACE = "voidrl"
"""The gymnasium namespace of the variants' ids."""


@dataclass(frozen=True)
class Variant:
    """A registered task variant: a base id with another time limit and/or training reward."""

    base: str
    max_episode_steps: int | None = None
    fall_penalty: bool = False
    """Train on -1 per fall, 0 otherwise (reported returns stay the base task's)."""
    observed: tuple[int, ...] | None = None
    """Observation entries the agent sees (None: all)."""


VARIANTS = {
    # Leite's (2022) tasks.
    f"{NAMESPACE}/InvertedPendulumFall-v5": Variant("InvertedPendulum-v5", fall_penalty=True),
    f"{NAMESPACE}/HalfCheetah500-v5": Variant("HalfCheetah-v5", max_episode_steps=500),
    # Partially observable: cart position and pole angle only, so velocities must be inferred from history.
    f"{NAMESPACE}/CartPoleNoVelocity-v1": Variant("CartPole-v1", observed=(0, 2)),
}


class ObservedEntries(gym.ObservationWrapper):
    """A vector observation reduced to its entries ``keep`` (the rest hidden)."""

    def __init__(self, env: gym.Env, keep: tuple[int, ...]):
        super().__init__(env)
        self.keep = list(keep)
        space = env.observation_space
        self.observation_space = gym.spaces.Box(space.low[self.keep], space.high[self.keep], dtype=space.dtype)

    def observation(self, observation: np.ndarray) -> np.ndarray:
        return observation[self.keep]


class FallReward(gym.Wrapper):
    """Reward -1 where the episode terminates (a fall), 0 on every other step; the base task's reward stays in
    ``info["task_reward"]``."""

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        return obs, -1.0 if terminated else 0.0, terminated, truncated, {**info, "task_reward": reward}


def make_variant(variant_id: str, **kwargs: Any) -> gym.Env:
    """The gymnasium environment of variant ``variant_id`` (``kwargs`` go to the base task's ``gym.make``)."""
    variant = VARIANTS[variant_id]
    if variant.max_episode_steps is not None:
        kwargs.setdefault("max_episode_steps", variant.max_episode_steps)
    env = gym.make(variant.base, **kwargs)
    if variant.observed is not None:
        env = ObservedEntries(env, variant.observed)
    if variant.fall_penalty:
        env = FallReward(env)
    return env


def register_variants() -> None:
    """Register every variant with gymnasium (once: ids already registered are left as they are)."""
    for variant_id in VARIANTS:
        if variant_id not in gym.registry:
            gym.register(variant_id, entry_point=make_variant, kwargs={"variant_id": variant_id}, disable_env_checker=True)
