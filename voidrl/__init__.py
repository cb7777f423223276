"""voidrl: policy-optimisation reinforcement learning with reward-free pre-training.

Two lines to train::

    import voidrl
    agent = voidrl.train("ppo", env="CartPole-v1", steps=100_000)
"""

from __future__ import annotations

from typing import Any

from voidrl.config import TrainConfig, make_config
from voidrl.train import Agent, train_from_config

__version__ = "0.1.0"


def train(algo: str, env: str = "CartPole-v1", steps: int = 100_000, preset: str | None = None, **options: Any) -> Agent:
    """Train ``algo`` on ``env``; ``options`` name any config field (``seed=1``, ``learning_rate=1e-3``...).

    Returns an ``Agent`` that can ``act``, ``evaluate`` and ``save``.
    """
    return train_from_config(make_config(algo, preset, env=env, steps=steps, **options))


def load(path: str, device: str = "cpu") -> Agent:
    """An ``Agent`` from a checkpoint file."""
    return Agent.load(path, device)


__all__ = ["Agent", "TrainConfig", "load", "make_config", "train", "train_from_config"]
